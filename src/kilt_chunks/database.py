"""The build's DuckDB file: opening it (plain error when another process holds
it) and lowering its memory limit for a while."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

__all__ = [
    "DB_HELP",
    "DEFAULT_DB",
    "default_db",
    "require_db",
    "STORAGE_COMPATIBILITY_VERSION",
    "table_exists",
    "DatabaseInUseError",
    "connect",
    "memory_limit_at_most",
    "memory_limit_bytes",
]


#: DuckDB storage format of the files the build creates: DuckDB 1.5's, which
#: the DuckDB CLI users install (``pip install duckdb-cli``, 1.5.x) reads, and
#: DuckDB 2.x too (the Python package 2.x would write a format only 2.x reads).
#: ``profiles.yml`` sets the same for the build's own connection and the
#: scratch database; a test opens the built file with that CLI.
STORAGE_COMPATIBILITY_VERSION = "v1.5.0"


#: The build's DuckDB file when neither ``--db`` nor ``KILT_CHUNKS_DB`` names one.
DEFAULT_DB = "kilt_chunks.duckdb"

#: The help of every command's ``--db`` option (argparse fills the default).
DB_HELP = "DuckDB file of the build (default: $KILT_CHUNKS_DB or %(default)s)"


def default_db() -> str:
    """The DuckDB file a command reads when ``--db`` is not given:
    ``$KILT_CHUNKS_DB`` (the variable ``profiles.yml`` reads), else
    :data:`DEFAULT_DB` in the working folder."""
    return os.environ.get("KILT_CHUNKS_DB", DEFAULT_DB)


def require_db(db_path: str | os.PathLike[str]) -> None:
    """Raise ``FileNotFoundError`` (one line) when ``db_path`` does not exist."""
    if not os.path.exists(db_path):
        raise FileNotFoundError(f"{db_path}: no such DuckDB file; run `dbt build`")


class DatabaseInUseError(RuntimeError):
    """The DuckDB file is held by another process (another build)."""


def connect(
    path: str, *, read_only: bool = False, advice: str = ""
) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file ``path``, naming the holder if another process has it.

    Args:
        path: DuckDB file.
        read_only: Open read-only (a reader still cannot open a file a writer
            holds).
        advice: What to do about it, appended to the error message.

    Returns:
        The open connection.

    Raises:
        DatabaseInUseError: If DuckDB cannot lock the file; names the file and
            the other process (its PID, as DuckDB reports it).
        duckdb.Error: Any other error opening the file.
    """
    try:
        if read_only:
            return duckdb.connect(path, read_only=True)
        # A file this opens first is created in the build's storage format.
        return duckdb.connect(
            path,
            config={"storage_compatibility_version": STORAGE_COMPATIBILITY_VERSION},
        )
    except duckdb.IOException as exc:
        if "lock" not in str(exc).lower():
            raise
        holder = re.search(r"\(PID (\d+)\)", str(exc))
        who = f" (PID {holder.group(1)})" if holder else ""
        message = f"database {path} is in use by another process{who}"
        if advice:
            message = f"{message}: {advice}"
        raise DatabaseInUseError(message) from None


_SIZE_UNITS = {
    "bytes": 1,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "PiB": 2**50,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "PB": 10**15,
}


def memory_limit_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The connection's DuckDB ``memory_limit`` in bytes.

    DuckDB reports it cut to one decimal of its unit (``"1.8 GiB"`` for a limit
    set as ``2GB``, 1.86 GiB). This returns the middle of the range that text
    stands for (1.85 GiB), within 0.05 of that unit of the true limit, so that
    setting it again reports the same text (the ends of the range do not:
    DuckDB rounds a limit down a little when it sets it).

    Raises:
        ValueError: If DuckDB reports the setting in a form not understood.
    """
    value = con.sql("select current_setting('memory_limit')").fetchall()[0][0]
    match = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]+)\s*", str(value))
    if match is None or match.group(2) not in _SIZE_UNITS:
        raise ValueError(f"unexpected DuckDB memory_limit {value!r}")
    return math.ceil((float(match.group(1)) + 0.05) * _SIZE_UNITS[match.group(2)])


@contextmanager
def memory_limit_at_most(
    con: duckdb.DuckDBPyConnection, limit_bytes: int
) -> Iterator[None]:
    """Lower DuckDB's memory limit to ``limit_bytes`` (if higher) for a block.

    Lowering the limit makes DuckDB drop cached pages above it, which frees
    the memory for other processes (the chunking workers). On exit the
    previous limit is set again as DuckDB reports it (see
    :func:`memory_limit_bytes`: a limit of 2GB comes back as 1.8 GiB, and
    stays so however often this runs).

    Args:
        con: A connection or cursor of the database (the setting is per
            database instance); it must have no open result.
        limit_bytes: The limit inside the block, in bytes.

    Raises:
        ValueError: From :func:`memory_limit_bytes`.
    """
    before = memory_limit_bytes(con)
    lowered = before > limit_bytes
    if lowered:
        con.execute(f"set memory_limit = '{int(limit_bytes)}B'")
    try:
        yield
    finally:
        if lowered:
            con.execute(f"set memory_limit = '{before}B'")


def table_exists(
    con: duckdb.DuckDBPyConnection, name: str, schema: str | None = None
) -> bool:
    """Whether table ``name`` exists in ``schema`` (any attached database),
    or, without ``schema``, in the connection's current schema and database.

    In a dbt Python model: ``table_exists(session, dbt.this.identifier,
    dbt.this.schema)``.
    """
    where = (
        "schema_name = ?"
        if schema is not None
        else "schema_name = current_schema() and database_name = current_database()"
    )
    params = [name] if schema is None else [name, schema]
    return (
        con.execute(
            f"select count(*) from duckdb_tables() where table_name = ? and {where}",
            params,
        ).fetchall()[0][0]
        > 0
    )
