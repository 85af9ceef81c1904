"""The build's dbt variables: their allowed values, checked before any input
is read.

The ``on-run-start`` hook (macro ``check_settings``) passes the variables given
on the command line (``--vars``) and the values in effect to
:func:`settings_problems` through the SQL function
``kilt_settings_problems`` (registered by :mod:`kilt_chunks.dbt_plugin`), and
stops the build with every problem, one line each, when there is any: a typo
such as ``kilt_pth`` would otherwise build the bundled sample and end green.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

#: The splitter names (``kilt_chunks.splitter.SPLITTER_NAMES``; not imported
#: here, so that the check costs dbt no start-up time).
SPLITTER_CHOICES = ("fast", "llama_index")

__all__ = [
    "KNOWN_VARIABLES",
    "dbt_project_dir",
    "export_dir_problem",
    "project_path",
    "settings_problems",
    "tokenizer_setting",
]


def dbt_project_dir() -> str | None:
    """The running dbt's project folder (``--project-dir``, ``DBT_PROJECT_DIR``),
    or None outside dbt or when dbt was given none (the current folder)."""
    try:
        from dbt.flags import get_flags
    except ImportError:  # pragma: no cover - dbt-core is a dependency
        return None
    project_dir = getattr(get_flags(), "PROJECT_DIR", None)
    return str(project_dir) if project_dir else None


def project_path(path: str, project_dir: str | None = None) -> str:
    """Resolve a relative path (``kilt_path``, ``kilt_tasks``, ``export_dir``,
    the database) against the dbt project folder, whatever the current folder.

    Args:
        path: A path as the user gave it.
        project_dir: The project folder; default :func:`dbt_project_dir`
            (the current folder when dbt runs in it).

    Returns:
        ``path`` joined to the project folder when it is relative; otherwise
        unchanged: ``""``, absolute paths, ``~`` paths, URLs and names such as
        ``hf://kilt_wikipedia`` or ``:memory:``.
    """
    if not path or path.startswith(("~", ":")) or "://" in path:
        return path
    if os.path.isabs(path):
        return path
    root = project_dir if project_dir is not None else dbt_project_dir()
    return os.path.join(root, path) if root else path


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_at_least(low: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if not _is_int(value) or value < low:
            return f"must be a whole number of at least {low}"
        return None

    return check


def _number_at_least(low: float) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
            return f"must be a number of at least {low:g}"
        return None

    return check


def _boolean(value: Any) -> str | None:
    if isinstance(value, bool) or str(value).lower() in ("true", "false", "1", "0"):
        return None
    return "must be true or false"


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if value not in choices:
            return "must be one of " + ", ".join(repr(c) for c in choices)
        return None

    return check


def _min_overlap(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return (
            "must be a number: characters (a whole number, at least 1) or a "
            "fraction of the span (0 to 1)"
        )
    if value >= 1 and value != int(value):
        return "characters must be a whole number (or give a fraction below 1)"
    return None


def tokenizer_setting(tokenizer: str, project_dir: str | None = None) -> str:
    """The ``tokenizer`` variable as the splitter takes it: a ``tokenizer.json``
    path resolved against the project folder (:func:`project_path`), a
    tiktoken encoding name unchanged."""
    # Imported here: the splitter package is not loaded for the other checks.
    from kilt_chunks.splitter.options import is_tokenizer_file

    if is_tokenizer_file(tokenizer):
        return project_path(tokenizer, project_dir)
    return tokenizer


def _tokenizer(value: Any) -> str | None:
    from kilt_chunks.splitter.options import tokenizer_problem

    return tokenizer_problem(
        tokenizer_setting(value) if isinstance(value, str) else value
    )


def _chunk_overlap_problem(values: Mapping[str, Any]) -> str | None:
    """The check across two variables: ``chunk_overlap`` below ``chunk_size``."""
    overlap, size = values.get("chunk_overlap"), values.get("chunk_size")
    if not (_is_int(overlap) and _is_int(size)):
        return None  # each is reported on its own
    assert overlap is not None and size is not None
    if overlap >= size >= 1:
        return (
            f"chunk_overlap = {overlap!r}: must be below chunk_size ({size}): "
            "consecutive chunks share at most chunk_overlap tokens"
        )
    return None


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) else "must be text (a path)"


def export_dir_problem(export_dir: str) -> str | None:
    """What is wrong with the export folder ``export_dir`` (a resolved path;
    ``""`` is no export, a leading ``~`` the home folder), or None: it must
    not exist as anything but a folder (a missing one is created). Used by the
    settings check and by :func:`kilt_chunks.export.prepare_export_dir`.
    Neither it nor a parent folder to be created may be a file (``afile/sub``).
    """
    path = os.path.expanduser(export_dir) if export_dir else ""
    if path and os.path.exists(path) and not os.path.isdir(path):
        return (
            'is a file, not a folder: set export_dir to a folder (or "" to skip '
            "the export)"
        )
    # A missing folder is created with its parents: none of them may be a file.
    parent = os.path.dirname(os.path.abspath(path)) if path else ""
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if parent and not os.path.isdir(parent):
        return (
            f"is below {parent!r}, which is a file, not a folder: set export_dir "
            'to a folder (or "" to skip the export)'
        )
    return None


def _export_folder(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be text (a path)"
    return export_dir_problem(project_path(value))


#: Every variable of the project (``dbt_project.yml``), with its check: None
#: when the value is allowed, else what is wrong.
KNOWN_VARIABLES: dict[str, Callable[[Any], str | None]] = {
    "kilt_path": _text,
    "export_dir": _export_folder,
    "export_rows_per_file": _int_at_least(1),
    "splitter": _one_of(SPLITTER_CHOICES),
    "chunk_size": _int_at_least(1),
    "chunk_overlap": _int_at_least(0),
    "tokenizer": _tokenizer,
    "workers": _int_at_least(0),
    "batch_size": _int_at_least(1),
    "progress_seconds": _number_at_least(0),
    "kilt_tasks": _text,
    "min_overlap": _min_overlap,
    "compress_text": _boolean,
    "keep_scratch": _boolean,
    "replace_other_input": _boolean,
}


def settings_problems(given: Mapping[str, Any], values: Mapping[str, Any]) -> list[str]:
    """What is wrong with the build's variables, one line per problem.

    Args:
        given: The variables given with ``--vars`` (names as typed).
        values: Every known variable's value in effect (defaults included).

    Returns:
        Lines such as ``unknown variable 'kilt_pth' (did you mean
        'kilt_path'?)`` or ``workers = -1: must be a whole number of at least
        0``; empty when everything is fine.
    """
    problems = []
    for name in given:
        if name not in KNOWN_VARIABLES:
            close = difflib.get_close_matches(name, KNOWN_VARIABLES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(
                f"unknown variable {name!r}{hint}; known: " + ", ".join(KNOWN_VARIABLES)
            )
    for name, check in KNOWN_VARIABLES.items():
        if name in values:
            problem = check(values[name])
            if problem is not None:
                problems.append(f"{name} = {values[name]!r}: {problem}")
    overlap_problem = _chunk_overlap_problem(values)
    if overlap_problem is not None:
        problems.append(overlap_problem)
    return problems


def settings_problems_json(given_json: str, values_json: str) -> str:
    """:func:`settings_problems` over JSON arguments, as one text ("" if none):
    the SQL function ``kilt_settings_problems`` the hook calls."""
    return "\n".join(settings_problems(json.loads(given_json), json.loads(values_json)))
