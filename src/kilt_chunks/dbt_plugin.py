"""dbt-duckdb source plugin that loads the KILT knowledge source.

Declared in ``profiles.yml`` (``plugins: [{module: kilt_chunks.dbt_plugin,
alias: kilt}]``) and used by the ``kilt`` source in
``models/staging/kilt/_kilt__sources.yml``, whose ``meta.kilt_path`` is the
``kilt_path`` dbt variable. See :mod:`kilt_chunks.loading` for the inputs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import duckdb
import pyarrow as pa
from dbt.adapters.duckdb.credentials import DuckDBCredentials
from dbt.adapters.duckdb.plugins import BasePlugin
from dbt.adapters.duckdb.utils import SourceConfig

from kilt_chunks.build_info import prepare_export_dir
from kilt_chunks.database import (
    DatabaseInUseError,
    connect,
    memory_limit_at_most,
    memory_limit_bytes,
)
from kilt_chunks.loading import read_kilt_pages

#: The build database's memory limit while it stores the loaded pages (bytes).
#: Writing ``raw.pages`` needs little, and the loader's own DuckDB (in this
#: process) needs about 0.5 GB beside it; at the full cap the two together
#: would be the build's peak.
LOAD_MEMORY_LIMIT = 256 * 2**20

#: Smallest memory limit accepted for the build's DuckDB (bytes). The bundled
#: sample builds at 40 MB and fails at 30 MB (DuckDB's "Out of Memory Error" in
#: int_sections_assembled); larger inputs may need more.
MIN_MEMORY_LIMIT = 64 * 2**20

__all__ = ["DatabaseInUseError", "Plugin", "check_database_free", "check_memory_limit"]


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
            "128MB (default 512MB)"
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


#: SQL function ``kilt_prepare_export_dir(export_dir) -> export_dir`` that the
#: export hooks (macro ``export_parquet``) call before their COPY: DuckDB's COPY
#: creates only the last folder of its target, and a partial build may export
#: without the model that used to create ``export_dir``.
EXPORT_DIR_FUNCTION = "kilt_prepare_export_dir"


def _prepare_export_dir_sql(export_dir: str) -> str:
    prepare_export_dir(export_dir)
    return export_dir


def register_export_dir_function(conn: duckdb.DuckDBPyConnection) -> None:
    """Register :data:`EXPORT_DIR_FUNCTION` (it runs
    :func:`kilt_chunks.build_info.prepare_export_dir`) on ``conn``; its errors
    (``export_dir`` is a file) reach the build as DuckDB errors naming the
    folder."""
    conn.create_function(
        EXPORT_DIR_FUNCTION,
        _prepare_export_dir_sql,
        [duckdb.sqltype("VARCHAR")],
        duckdb.sqltype("VARCHAR"),
        side_effects=True,
    )


class Plugin(BasePlugin):
    """Load raw KILT pages for a source table whose meta names ``kilt_path``."""

    def initialize(self, plugin_config: dict[str, Any]) -> None:
        self.batch_size = int(plugin_config.get("batch_size", 2048))
        self.connection: duckdb.DuckDBPyConnection | None = None

    def configure_connection(self, conn: duckdb.DuckDBPyConnection) -> None:
        """Keep the build's connection (to cap its memory while pages load) and
        register :data:`EXPORT_DIR_FUNCTION` on it for the export hooks."""
        self.connection = conn
        register_export_dir_function(conn)

    def update_connection_config(
        self, creds: DuckDBCredentials, config: dict[str, Any]
    ) -> None:
        """Check, before dbt-duckdb connects, the memory limit and that no other
        build holds the file."""
        check_memory_limit(creds.settings)
        check_database_free(creds.path)

    def load(self, source_config: SourceConfig) -> pa.RecordBatchReader:
        """Stream the raw page rows of ``meta.kilt_path``.

        Raises:
            KiltInputError: If the path is missing or not a KILT input.
            KeyError: If the source table has no ``kilt_path`` in its meta.
        """
        kilt_path = source_config.get("kilt_path")
        if not kilt_path:
            raise KeyError(
                f"source {source_config.table_name()}: meta.kilt_path is not set"
            )
        reader = read_kilt_pages(
            str(kilt_path), batch_size=self.batch_size, on_error="row"
        )
        if self.connection is None:
            return reader
        # Lowered now, before dbt-duckdb starts storing the stream; restored
        # when the stream ends.
        limit = ExitStack()
        cursor = limit.enter_context(self.connection.cursor())
        limit.enter_context(memory_limit_at_most(cursor, LOAD_MEMORY_LIMIT))
        return pa.RecordBatchReader.from_batches(
            reader.schema, _closing_at_end(reader, limit)
        )

    def default_materialization(self) -> str:
        return "table"


def _closing_at_end(
    reader: pa.RecordBatchReader, resources: ExitStack
) -> Iterator[pa.RecordBatch]:
    """Yield the reader's batches, then close ``resources``."""
    with resources:
        yield from reader
