"""What a build would replace, checked before anything runs.

Two checks of the ``on-run-start`` hook ``check_replacing`` (macro in
``macros/check_replacing.sql``, after ``check_database_records``):

* **Another input** (:func:`other_input_problem`). A build that reads its
  input, or writes ``kilt_build_info`` or the export, replaces what the
  database and its export folder hold. When they hold the build of another
  input (``kilt_build_info.kilt_path`` of the database; ``input`` in the
  export folder's owner file), the build stops in one line naming both
  inputs, unless the variable ``replace_other_input`` is true: a default
  build (the bundled sample) over a full build is never silent.
* **The export folder** (:func:`claim_export_dir`). An export folder
  belongs to one database (:mod:`kilt_chunks.build.records`); a build that will
  write it claims it now, under the folder's lock, by writing the owner
  file when the folder has none. A second database's build started while
  the first still runs is then refused at its start, in one line, instead
  of at ``kilt_export`` after its whole build.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from kilt_chunks.build.records import export_lock, export_owner_problem, owner_record
from kilt_chunks.export.folder import OWNER_FILE, export_root
from kilt_chunks.settings import project_path

__all__ = [
    "REPLACE_VARIABLE",
    "claim_export_dir",
    "input_identity",
    "other_input_problem",
    "same_input",
]

#: The variable that lets a build replace the build of another input.
REPLACE_VARIABLE = "replace_other_input"


def input_identity(kilt_path: str) -> str:
    """``kilt_path`` as two builds of the same input give it: a relative
    path resolved against the dbt project folder, then as a real path
    (symbolic links resolved, no trailing slash); ``hf://`` names unchanged.
    ``""`` stays ``""``."""
    path = project_path(str(kilt_path or ""))
    if not path or "://" in path:
        return path
    return os.path.realpath(os.path.expanduser(path))


def _fingerprint(path: str) -> tuple | None:
    """What identifies an input besides its path: a file's name, size and
    modification time; a folder's, those of its entries (shards are not
    searched below it); None for an ``hf://`` name or a missing path."""
    if not path or "://" in path:
        return None
    found = Path(path)
    try:
        if found.is_file():
            status = found.stat()
            return (found.name, status.st_size, status.st_mtime_ns)
        if found.is_dir():
            return tuple(
                (entry.name, entry.stat().st_size, entry.stat().st_mtime_ns)
                for entry in sorted(found.iterdir())
                if entry.is_file()
            )
    except OSError:
        return None
    return None


def same_input(first: str, second: str) -> bool:
    """Whether two ``kilt_path`` values name the same input: the same path
    (:func:`input_identity`), or files (folders of files) of the same names,
    sizes and modification times, such as a copy made with its times (the
    project copied with the input, the input moved)."""
    one, other = input_identity(first), input_identity(second)
    if one == other:
        return True
    fingerprint = _fingerprint(one)
    return fingerprint is not None and fingerprint == _fingerprint(other)


def other_input_problem(
    kilt_path: str,
    database_input: str,
    export_dir: str,
    database: str,
) -> str | None:
    """One line when this build would replace the build of another input.

    Args:
        kilt_path: This build's ``kilt_path`` (as given).
        database_input: The input the database's last build recorded
            (``kilt_build_info.kilt_path``; ``""`` when it has none).
        export_dir: This build's ``export_dir`` (as given; ``""``: none).
        database: This build's DuckDB file: the export folder's recorded
            input counts only when that folder is this database's (another
            database's folder is refused by :mod:`kilt_chunks.build.records`).

    Returns:
        ``None`` when the database and the export folder hold no build, or
        one of this input; else the line naming what holds which input and
        the two ways on (``KILT_CHUNKS_DB`` and ``export_dir`` elsewhere, or
        ``replace_other_input: true``).
    """
    this = input_identity(kilt_path)
    holders = []
    if database_input and not same_input(database_input, kilt_path):
        holders.append(
            f"the database {os.path.realpath(database)!r} holds the build of "
            f"{database_input!r}"
        )
    if export_dir:
        root = export_root(project_path(export_dir))
        owner = owner_record(root) or {}
        theirs = owner.get("input", "")
        mine = owner.get("database", "") == os.path.realpath(database)
        if theirs and mine and not same_input(theirs, kilt_path):
            holders.append(f"export_dir {str(root)!r} the export of {theirs!r}")
    if not holders:
        return None
    return (
        f"{' and '.join(holders)}; this build reads {this!r} and would replace "
        "it: give it its own database and export folder (KILT_CHUNKS_DB, "
        f"export_dir), or pass {REPLACE_VARIABLE}: true to replace them"
    )


def claim_export_dir(export_dir: str, database: str, kilt_path: str) -> str | None:
    """Claim the export folder for ``database`` before the build runs.

    Under the folder's lock (:func:`kilt_chunks.build.records.export_lock`): when
    the folder holds another database's export (or claim), return its line
    (:func:`kilt_chunks.build.records.export_owner_problem`); when it has no owner
    file, create the folder if needed and write one naming ``database``
    (``build`` empty until the export writes it) and the input; a folder
    already this database's is left as it is.

    Args:
        export_dir: The build's ``export_dir`` as given (``""``: nothing).
        database: The build's DuckDB file.
        kilt_path: The build's input, recorded as ``input``.

    Returns:
        None when the folder is this database's now, else the one line.
    """
    if not export_dir:
        return None
    export_dir = project_path(export_dir)
    with export_lock(export_dir):
        problem = export_owner_problem(export_dir, database)
        if problem:
            return problem
        root = export_root(export_dir)
        if owner_record(root) is not None:
            return None
        root.mkdir(parents=True, exist_ok=True)
        record = {
            "database": os.path.realpath(database),
            "build": "",
            "input": input_identity(kilt_path),
        }
        temporary = root / (OWNER_FILE + ".tmp")
        temporary.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, root / OWNER_FILE)
    return None


def replacing_problems_json(arguments_json: str, database: str) -> str:
    """Both checks for the hook: the SQL function ``kilt_replacing_problems``.

    Args:
        arguments_json: A JSON object: ``kilt_path``, ``database_input``
            (the database's recorded input), ``export_dir``, ``replace``
            (``replace_other_input``), ``checks_input`` (the build reads its
            input or writes ``kilt_build_info``), ``writes_export`` (it runs
            ``kilt_export`` or ``kilt_provenance_qrels``).
        database: The build's DuckDB file.

    Returns:
        The input check's line (:func:`other_input_problem`, when
        ``checks_input`` and not ``replace``), else the claim's
        (:func:`claim_export_dir`, when ``writes_export``); ``""`` if none.
    """
    arguments: Mapping[str, object] = json.loads(arguments_json)
    kilt_path = str(arguments.get("kilt_path") or "")
    export_dir = str(arguments.get("export_dir") or "")
    if arguments.get("checks_input") and not arguments.get("replace"):
        problem = other_input_problem(
            kilt_path, str(arguments.get("database_input") or ""), export_dir, database
        )
        if problem:
            return problem
    if arguments.get("writes_export") and database:
        return claim_export_dir(export_dir, database, kilt_path) or ""
    return ""
