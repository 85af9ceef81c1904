"""dbt-duckdb source plugin that loads the KILT knowledge source.

Declared in ``profiles.yml`` (``plugins: [{module: kilt_chunks.dbt_plugin,
alias: kilt}]``) and used by the ``kilt`` source in
``models/staging/kilt/_kilt__sources.yml``, whose ``meta.kilt_path`` is the
``kilt_path`` dbt variable. See :mod:`kilt_chunks.loading` for the inputs.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa
from dbt.adapters.duckdb.credentials import DuckDBCredentials
from dbt.adapters.duckdb.plugins import BasePlugin
from dbt.adapters.duckdb.utils import SourceConfig

from kilt_chunks.database import DatabaseInUseError, connect
from kilt_chunks.loading import read_kilt_pages

__all__ = ["DatabaseInUseError", "Plugin", "check_database_free", "check_memory_limit"]


def check_memory_limit(settings: dict[str, Any] | None) -> None:
    """Fail early, and plainly, on a memory limit DuckDB cannot read.

    Args:
        settings: The profile's DuckDB settings (``memory_limit`` comes from
            ``KILT_CHUNKS_MEMORY_LIMIT``).

    Raises:
        ValueError: If DuckDB rejects ``memory_limit``; names the variable and
            the value, with examples.
    """
    value = (settings or {}).get("memory_limit")
    if value is None:
        return
    try:
        duckdb.connect(config={"memory_limit": str(value)}).close()
    except duckdb.Error:
        raise ValueError(
            f"memory_limit {value!r} (KILT_CHUNKS_MEMORY_LIMIT) is not a DuckDB "
            "memory size: use e.g. 1GB, 512MB or 75%"
        ) from None


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


class Plugin(BasePlugin):
    """Load raw KILT pages for a source table whose meta names ``kilt_path``."""

    def initialize(self, plugin_config: dict[str, Any]) -> None:
        self.batch_size = int(plugin_config.get("batch_size", 2048))

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
        return read_kilt_pages(
            str(kilt_path), batch_size=self.batch_size, on_error="row"
        )

    def default_materialization(self) -> str:
        return "table"
