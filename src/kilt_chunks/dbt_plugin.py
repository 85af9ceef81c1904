"""dbt-duckdb source plugin that loads the KILT knowledge source.

Declared in ``profiles.yml`` (``plugins: [{module: kilt_chunks.dbt_plugin,
alias: kilt}]``) and used by the ``kilt`` source in
``models/staging/kilt/_kilt__sources.yml``, whose ``meta.kilt_path`` is the
``kilt_path`` dbt variable. See :mod:`kilt_chunks.loading` for the inputs.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from dbt.adapters.duckdb.credentials import DuckDBCredentials
from dbt.adapters.duckdb.plugins import BasePlugin
from dbt.adapters.duckdb.utils import SourceConfig

from kilt_chunks.database import DatabaseInUseError, connect
from kilt_chunks.loading import read_kilt_pages

__all__ = ["DatabaseInUseError", "Plugin", "check_database_free"]


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
        """Check, before dbt-duckdb connects, that no other build holds the file."""
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
