"""dbt-duckdb plugin of the build: settings checks and SQL helper functions.

Declared in ``profiles.yml`` (``plugins: [{module: kilt_chunks.dbt_plugin,
alias: kilt}]``). Before dbt-duckdb connects it checks the memory limit and
that no other build holds the DuckDB file; on the connection it registers
the functions the hooks call (:func:`register_functions`), and it hands every
cursor to the SQL progress watcher (:mod:`kilt_chunks.sql_progress`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import duckdb
from dbt.adapters.duckdb.credentials import DuckDBCredentials
from dbt.adapters.duckdb.plugins import BasePlugin
from dbt_common.exceptions import DbtRuntimeError

from kilt_chunks.build.records import (
    export_owner_problem_sql,
    recorded_settings_problems_json,
)
from kilt_chunks.build.replacing import replacing_problems_json
from kilt_chunks.database import DatabaseInUseError, connect, memory_limit_bytes
from kilt_chunks.dbt_command import NO_DBT_VARIABLE
from kilt_chunks.settings import KNOWN_VARIABLES, project_path, settings_problems_json
from kilt_chunks.sql_progress import WATCHER

#: Smallest memory limit accepted for the build's DuckDB (bytes). The bundled
#: sample builds at 40 MB and fails at 30 MB (DuckDB's "Out of Memory Error" in
#: int_sections_assembled); larger inputs may need more.
MIN_MEMORY_LIMIT = 64 * 2**20

#: Share of the machine's memory the build's DuckDB may use when
#: ``KILT_CHUNKS_MEMORY_LIMIT`` is not set (DuckDB's own default is 80%; the
#: chunking workers and the JSON loader's DuckDB need the rest).
DEFAULT_MEMORY_SHARE = 0.5

#: DuckDB's default memory limit as a share of the memory it finds.
DUCKDB_DEFAULT_SHARE = 0.8

__all__ = [
    "NO_DBT_VARIABLE",
    "DatabaseInUseError",
    "Plugin",
    "check_database_folder",
    "check_database_free",
    "check_database_name",
    "check_memory_limit",
    "default_memory_limit",
    "machine_memory_bytes",
]


def machine_memory_bytes() -> int:
    """The machine's memory in bytes as DuckDB finds it: physical memory, or
    the container's limit (cgroup) when lower. DuckDB's default
    ``memory_limit`` is :data:`DUCKDB_DEFAULT_SHARE` of it, reported to 0.1
    of its unit, so this is within about 0.07 GiB of it."""
    with duckdb.connect() as con:
        return round(memory_limit_bytes(con) / DUCKDB_DEFAULT_SHARE)


def default_memory_limit(machine_bytes: int | None = None) -> str:
    """The build's memory limit when ``KILT_CHUNKS_MEMORY_LIMIT`` is not set:
    :data:`DEFAULT_MEMORY_SHARE` of the machine's memory, as a DuckDB size
    (``"4294967296B"``), so a default build fits the machine it runs on (as
    DuckDB's own default does); only a machine too small for the input meets
    the memory floor of the sections step
    (:func:`kilt_chunks.build.page_load.memory_floor_problem`).

    Args:
        machine_bytes: The machine's memory; default
            :func:`machine_memory_bytes`.
    """
    machine = machine_memory_bytes() if machine_bytes is None else machine_bytes
    return f"{int(machine * DEFAULT_MEMORY_SHARE)}B"


def resolve_memory_limit(settings: dict[str, Any] | None) -> None:
    """Set the profile's ``memory_limit`` to :func:`default_memory_limit`
    when it is empty (``KILT_CHUNKS_MEMORY_LIMIT`` unset); a given value is
    left to :func:`check_memory_limit`."""
    if settings is not None and not str(settings.get("memory_limit") or "").strip():
        settings["memory_limit"] = default_memory_limit()


def check_memory_limit(settings: dict[str, Any] | None) -> None:
    """Fail early, and plainly, on a memory limit the build cannot use.

    Args:
        settings: The profile's DuckDB settings (``memory_limit`` comes from
            ``KILT_CHUNKS_MEMORY_LIMIT``).

    Raises:
        ValueError: If DuckDB rejects ``memory_limit``, or it is below
            :data:`MIN_MEMORY_LIMIT` (DuckDB would stop a model with its bare
            "Out of Memory Error"); names the variable and the value, with
            examples.
    """
    value = (settings or {}).get("memory_limit")
    if value is None:
        return
    try:
        con = duckdb.connect(config={"memory_limit": str(value)})
    except duckdb.Error:
        raise ValueError(
            f"memory_limit {value!r} (KILT_CHUNKS_MEMORY_LIMIT) is not a DuckDB "
            "memory size: use e.g. 1GB, 512MB or 75%"
        ) from None
    with con:
        limit = memory_limit_bytes(con)
    if limit < MIN_MEMORY_LIMIT:
        raise ValueError(
            f"memory_limit {value!r} (KILT_CHUNKS_MEMORY_LIMIT) is below the "
            f"{MIN_MEMORY_LIMIT // 2**20} MiB the build needs: use at least "
            "128MB (default: half of this machine's memory)"
        )


def check_database_folder(path: str) -> None:
    """Fail early, and plainly, when the DuckDB file's folder does not exist.

    Args:
        path: DuckDB file of the build.

    Raises:
        ValueError: If the folder is missing (DuckDB would fail with a bare
            "Cannot open file"), naming the variable and the folder.
    """
    if not path or path == ":memory:" or "://" in path:
        return
    folder = Path(path).expanduser().parent
    if not folder.is_dir():
        raise ValueError(
            f"database {path!r} (KILT_CHUNKS_DB): its folder {str(folder)!r} does "
            "not exist; create it, or set KILT_CHUNKS_DB to a file in an "
            "existing folder"
        )


def check_database_name(path: str) -> None:
    """Fail early, and plainly, on a DuckDB file name dbt-duckdb cannot use.

    DuckDB names the database after the file (``o'brien.duckdb`` is database
    ``o'brien``), and dbt-duckdb's own SQL embeds that name in quotes without
    escaping them: an apostrophe would stop the build with a bare parser
    error. (An apostrophe in a folder of the path is fine.)

    Raises:
        ValueError: If the file name holds an apostrophe, naming the variable.
    """
    if not path or path == ":memory:" or "://" in path:
        return
    name = Path(path).name
    if "'" in name:
        raise ValueError(
            f"database {path!r} (KILT_CHUNKS_DB): its file name holds an "
            "apostrophe, which dbt-duckdb cannot quote (the database is named "
            "after the file); set KILT_CHUNKS_DB to a file name without one"
        )


def check_database_free(path: str) -> None:
    """Fail early, and plainly, when another process holds the DuckDB file.

    Args:
        path: DuckDB file of the build.

    Raises:
        DatabaseInUseError: If DuckDB cannot lock the file; names the file and
            the other process.
    """
    if not path or path == ":memory:":
        return
    connect(
        path,
        advice="wait for that build to finish, or set KILT_CHUNKS_DB to build "
        "into another file",
    ).close()


#: SQL function ``kilt_remove_file(path) -> path`` that the on-run-end hook
#: (macro ``remove_scratch_after_success``) calls on the detached scratch
#: database: deletes the file and its write-ahead log, if present.
REMOVE_FILE_FUNCTION = "kilt_remove_file"


def _remove_file_sql(path: str) -> str:
    for name in (path, path + ".wal"):
        Path(name).unlink(missing_ok=True)
    return path


def _settings_names_sql() -> str:
    return ",".join(KNOWN_VARIABLES)


def _tokenizer_label_sql(tokenizer: str) -> str:
    # Imported here: the splitter package is loaded only when a model asks.
    from kilt_chunks.splitter.options import tokenizer_label

    return tokenizer_label(tokenizer)


#: SQL function ``kilt_watch_sql_progress(seconds) -> seconds`` that the
#: on-run-start hook (macro ``watch_sql_progress``) calls with
#: ``var('progress_seconds')``: from then on, SQL queries running longer report
#: their progress (:mod:`kilt_chunks.sql_progress`).
WATCH_FUNCTION = "kilt_watch_sql_progress"


def _watch_sql_progress_sql(seconds: str) -> str:
    WATCHER.set_interval(float(seconds))
    return seconds


#: The SQL functions the hooks call: (name, Python function, number of VARCHAR
#: arguments, whether it has side effects). Each returns VARCHAR; its errors
#: reach the build as DuckDB errors.
_SQL_FUNCTIONS = (
    (REMOVE_FILE_FUNCTION, _remove_file_sql, 1, True),
    ("kilt_settings_problems", settings_problems_json, 2, False),
    ("kilt_settings_names", _settings_names_sql, 0, False),
    (WATCH_FUNCTION, _watch_sql_progress_sql, 1, True),
    # kilt_chunks.build.records: the hook check_database_records.
    ("kilt_recorded_settings_problems", recorded_settings_problems_json, 3, False),
    ("kilt_export_owner_problem", export_owner_problem_sql, 2, False),
    # The tokenizer's short name in kilt_corpus_stats (its "tokens" row).
    ("kilt_tokenizer_label", _tokenizer_label_sql, 1, False),
    # kilt_chunks.build.replacing: the hook check_replacing (claims the export folder).
    ("kilt_replacing_problems", replacing_problems_json, 2, True),
)


def register_functions(conn: duckdb.DuckDBPyConnection) -> None:
    """Register the build's SQL functions on ``conn``:
    :data:`REMOVE_FILE_FUNCTION`, the settings check
    (``kilt_settings_problems``, ``kilt_settings_names``:
    :mod:`kilt_chunks.settings`) and :data:`WATCH_FUNCTION`."""
    varchar = duckdb.sqltype("VARCHAR")
    for name, function, arity, side_effects in _SQL_FUNCTIONS:
        conn.create_function(
            name, function, [varchar] * arity, varchar, side_effects=side_effects
        )


class Plugin(BasePlugin):
    """Check the settings before dbt-duckdb connects; register the build's SQL
    functions on its connection. The pages are loaded by the model
    ``base_kilt__pages`` (:mod:`kilt_chunks.build.page_load`), not by a source
    plugin: dbt-duckdb loads a plugin source whenever ``source()`` renders
    with a connection (``dbt compile``, ``show``, ``docs generate``)."""

    def initialize(self, plugin_config: dict[str, Any]) -> None:
        """No options; subscribes the SQL progress watcher to dbt's events."""
        try:
            from dbt_common.events.event_manager_client import get_event_manager
        except ImportError:  # pragma: no cover - dbt-common is a dbt dependency
            return
        manager = get_event_manager()
        if WATCHER.on_dbt_event not in getattr(manager, "callbacks", []):
            manager.add_callback(WATCHER.on_dbt_event)

    def configure_connection(self, conn: duckdb.DuckDBPyConnection) -> None:
        """Register :func:`register_functions` on the build's connection."""
        register_functions(conn)

    def configure_cursor(self, cursor: duckdb.DuckDBPyConnection) -> None:
        """Let the SQL progress watcher follow the cursor's queries."""
        WATCHER.watch(cursor)

    def update_connection_config(
        self, creds: DuckDBCredentials, config: dict[str, Any]
    ) -> None:
        """Before dbt-duckdb connects: resolve a relative database path (and
        the scratch database's) against the project folder, whatever the
        current folder; check the memory limit and that no other build holds
        the file."""
        forbidden_by = os.environ.get(NO_DBT_VARIABLE)
        if forbidden_by:
            raise DbtRuntimeError(
                f"{forbidden_by} started dbt but is not marked dbt: mark it "
                "@pytest.mark.dbt (make test-fast leaves such tests out)"
            )
        creds.path = project_path(creds.path)
        for attachment in creds.attach or []:
            attachment.path = project_path(attachment.path)
        try:
            resolve_memory_limit(creds.settings)
            check_memory_limit(creds.settings)
            check_database_folder(creds.path)
            check_database_name(creds.path)
            check_database_free(creds.path)
        except (ValueError, DatabaseInUseError, duckdb.Error) as exc:
            # A dbt error: dbt prints its message alone, without the chained
            # tracebacks it prints for any other exception.
            raise DbtRuntimeError(str(exc)) from None
