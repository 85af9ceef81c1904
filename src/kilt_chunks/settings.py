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
import functools
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from kilt_chunks.checks import boolean, int_at_least, number_at_least, text
from kilt_chunks.chunking_settings import SPLITTER_CHOICES, ChunkingSettings

# SPLITTER_CHOICES: imported from here by older code and tests.

__all__ = [
    "KNOWN_VARIABLES",
    "SPLITTER_CHOICES",
    "dbt_project_dir",
    "export_dir_problem",
    "given_variables",
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


def given_variables() -> dict[str, Any]:
    """The variables given on the running dbt's command line (``--vars``),
    by name; empty outside dbt."""
    try:
        from dbt.flags import get_flags
    except ImportError:  # pragma: no cover - dbt-core is a dependency
        return {}
    given = getattr(get_flags(), "VARS", None)
    return dict(given) if isinstance(given, Mapping) else {}


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


def export_dir_problem(export_dir: str) -> str | None:
    """What is wrong with the export folder ``export_dir`` (a resolved path;
    ``""`` is no export, a leading ``~`` the home folder), or None: it must
    not exist as anything but a folder (a missing one is created). Used by the
    settings check and by :func:`kilt_chunks.export.folder.prepare_export_dir`.
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
        return text(value)
    return export_dir_problem(project_path(value))


#: Every variable of the project (``dbt_project.yml``), with its check: None
#: when the value is allowed, else what is wrong. The chunking settings are
#: the fields of :class:`~kilt_chunks.chunking_settings.ChunkingSettings`,
#: each with its field's check.
KNOWN_VARIABLES: dict[str, Callable[[Any], str | None]] = {
    "kilt_path": text,
    "export_dir": _export_folder,
    "export_rows_per_file": int_at_least(1),
    **{
        name: functools.partial(ChunkingSettings.field_problem, name)
        for name in ChunkingSettings.names()
    },
    "workers": int_at_least(0),
    "batch_size": int_at_least(1),
    "progress_seconds": number_at_least(0),
    "kilt_tasks": text,
    "min_overlap": _min_overlap,
    "compress_text": boolean,
    "keep_scratch": boolean,
    "replace_other_input": boolean,
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
    chunking = ChunkingSettings.names()
    for name, check in KNOWN_VARIABLES.items():
        if name == chunking[0]:
            # The chunking settings together, in their place: each field's
            # check, then the checks across them (chunk_overlap below
            # chunk_size).
            problems += ChunkingSettings.problems(values)
        if name in values and name not in chunking:
            problem = check(values[name])
            if problem is not None:
                problems.append(f"{name} = {values[name]!r}: {problem}")
    return problems


def settings_problems_json(given_json: str, values_json: str) -> str:
    """:func:`settings_problems` over JSON arguments, as one text ("" if none):
    the SQL function ``kilt_settings_problems`` the hook calls."""
    return "\n".join(settings_problems(json.loads(given_json), json.loads(values_json)))
