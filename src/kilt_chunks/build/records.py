"""What a database records about its builds: the settings each table was made
with, and which export folder is its own.

**Settings.** ``int_sections_chunked`` records the settings it chunked with,
every field of :class:`~kilt_chunks.chunking_settings.ChunkingSettings`, in
the table ``kilt_build_settings``, one row per (model, setting), by its
post-hook ``record_chunking_settings``. Later models read the recorded
values, not the project's defaults (``recorded_setting('chunk_size')``,
:func:`recorded_settings`), so a partial build such as ``--select
tag:stats+`` computes with the values its tables were made with; a rebuild of
the chunking keeps every recorded setting it is not given
(:meth:`~kilt_chunks.chunking_settings.ChunkingSettings.for_build`). The
``on-run-start`` hook ``check_database_records`` stops a build where a
value given with ``--vars`` contradicts a value recorded by a model that
this build does not rebuild (:func:`recorded_settings_problems`); rebuilding
that model (``--select int_sections_chunked+``) records the new
values.

**Export ownership.** An export folder belongs to one database: the export
writes :data:`~kilt_chunks.export.folder.OWNER_FILE` (the database's path and the
build that chunked it), and a build of another database is refused, before
any input is read (:func:`export_owner_problem`, from the hook) and again
when it would write (:func:`claim_export`, under a lock on the folder).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

from kilt_chunks.chunking_settings import ChunkingSettings
from kilt_chunks.database import table_exists
from kilt_chunks.export.folder import OWNER_FILE, export_root

__all__ = [
    "SETTINGS_TABLE",
    "ExportOwnerError",
    "claim_export",
    "database_identity",
    "export_lock",
    "export_owner_problem",
    "owner_record",
    "recorded_settings",
    "recorded_settings_problems",
]

#: The table of recorded settings: model, setting, value (JSON text),
#: invocation_id, recorded_at.
SETTINGS_TABLE = "kilt_build_settings"

#: The model whose recorded run identifies the build (the chunks' build).
BUILD_MODEL = "int_sections_chunked"


class ExportOwnerError(ValueError):
    """The export folder holds another database's export; one line."""


def recorded_settings(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """The settings recorded in the connection's database, by name (values
    decoded from JSON: ``{"chunk_size": 256, "splitter": "fast"}``); empty
    when nothing is recorded (a database built before the table existed)."""
    if not table_exists(con, SETTINGS_TABLE):
        return {}
    rows = con.execute(
        f"select setting, value from {SETTINGS_TABLE} order by recorded_at, model"
    ).fetchall()
    return {setting: json.loads(value) for setting, value in rows}


def database_identity(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    """``(path, build)`` of the connection's database: its file as a real
    path, and the dbt invocation id of the run that chunked it (``""`` when
    not recorded)."""
    ((found,),) = con.execute(
        "select path from duckdb_databases() where database_name = current_database()"
    ).fetchall()
    path = os.path.realpath(found) if found else ""
    build = ""
    if table_exists(con, SETTINGS_TABLE):
        rows = con.execute(
            f"select invocation_id from {SETTINGS_TABLE} where model = ?"
            " order by recorded_at desc limit 1",
            [BUILD_MODEL],
        ).fetchall()
        build = rows[0][0] if rows else ""
    return path, build


def owner_record(folder: Path) -> dict[str, str] | None:
    """The owner file of an export folder, or None when it has none (no
    export yet, or one from before owner files)."""
    path = folder / OWNER_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"database": "(unreadable " + OWNER_FILE + ")", "build": ""}
    return record if isinstance(record, dict) else None


def export_owner_problem(export_dir: str, database: str) -> str | None:
    """One line when ``export_dir`` holds the export of another database than
    ``database`` (a path), else None (no export there, one without an owner
    file, or this database's)."""
    if not export_dir:
        return None
    root = export_root(export_dir)
    owner = owner_record(root)
    if owner is None:
        return None
    theirs = owner.get("database", "")
    if theirs == os.path.realpath(database):
        return None
    build = f" (build {owner['build']})" if owner.get("build") else ""
    return (
        f"export_dir {str(root)!r} holds the export of database {theirs!r}{build}, "
        f"not of this build's database {os.path.realpath(database)!r} "
        "(KILT_CHUNKS_DB): set export_dir to another folder, or delete that "
        "folder to let this database export there"
    )


def claim_export(
    folder: Path, export_dir: str, database: str, build: str, input_path: str = ""
) -> None:
    """Check that ``export_dir`` is free for ``database``
    (:func:`export_owner_problem`) and write the owner file into ``folder``
    (the staging folder of the export, or the export folder itself).

    ``input_path`` (the build's resolved ``kilt_path``) is recorded as
    ``input`` (:mod:`kilt_chunks.build.replacing` refuses a build of another input);
    ``""`` keeps the input the folder's owner file records.

    Raises:
        ExportOwnerError: If another database's export is there.
    """
    problem = export_owner_problem(export_dir, database)
    if problem:
        raise ExportOwnerError(problem)
    record = {"database": os.path.realpath(database), "build": build}
    kept = (owner_record(export_root(export_dir)) or {}).get("input", "")
    if input_path or kept:
        record["input"] = input_path or kept
    temporary = folder / (OWNER_FILE + ".tmp")
    temporary.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, folder / OWNER_FILE)


def export_lock(export_dir: str) -> Any:
    """A lock on the export folder (``<parent>/.<name>.lock``, a
    :class:`filelock.FileLock`), held while a build checks the owner and
    writes: two builds never write the same folder at once."""
    from filelock import FileLock

    root = export_root(export_dir)
    root.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(root.with_name(f".{root.name}.lock")))


def recorded_settings_problems(
    given: Mapping[str, Any],
    recorded: Iterable[Mapping[str, Any]],
    rebuilt: Sequence[str],
) -> list[str]:
    """Where a value given with ``--vars`` contradicts the database's tables.

    Args:
        given: The variables given on the command line.
        recorded: Rows of ``kilt_build_settings`` (``model``, ``setting``,
            ``value`` as JSON text).
        rebuilt: Names of the models this build selects: their recorded
            values are replaced, so they contradict nothing.

    Returns:
        One line per contradiction, e.g. ``chunk_size = 128: the database's
        int_sections_chunked was built with chunk_size = 256; ...``.
    """
    problems = []
    for row in recorded:
        model, setting = row["model"], row["setting"]
        if setting not in given or model in rebuilt:
            continue
        value = json.loads(row["value"])
        # A chunking setting as its field stores it (a tokenizer.json path
        # resolved, as recorded).
        if ChunkingSettings.normalized(setting, given[setting]) == value:
            continue
        problems.append(
            f"{setting} = {given[setting]!r}: the database's {model} was built "
            f"with {setting} = {value!r}; rebuild it with the new value (--select "
            f"{model}+) or leave {setting} out to use the recorded one"
        )
    return problems


def recorded_settings_problems_json(
    given_json: str, recorded_json: str, rebuilt_json: str
) -> str:
    """:func:`recorded_settings_problems` over JSON arguments, one text ("" if
    none): the SQL function ``kilt_recorded_settings_problems``."""
    return "\n".join(
        recorded_settings_problems(
            json.loads(given_json), json.loads(recorded_json), json.loads(rebuilt_json)
        )
    )


def export_owner_problem_sql(export_dir: str, database: str) -> str:
    """:func:`export_owner_problem` with the export folder resolved against
    the dbt project folder ("" if none): the SQL function
    ``kilt_export_owner_problem``."""
    from kilt_chunks.settings import project_path

    return export_owner_problem(project_path(export_dir), database) or ""
