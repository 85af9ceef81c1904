"""Opening the build's DuckDB file, with a plain error when another process holds it."""

from __future__ import annotations

import re

import duckdb


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
        return duckdb.connect(path, read_only=read_only)
    except duckdb.IOException as exc:
        if "lock" not in str(exc).lower():
            raise
        holder = re.search(r"\(PID (\d+)\)", str(exc))
        who = f" (PID {holder.group(1)})" if holder else ""
        message = f"database {path} is in use by another process{who}"
        if advice:
            message = f"{message}: {advice}"
        raise DatabaseInUseError(message) from None
