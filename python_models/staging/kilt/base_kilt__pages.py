"""Load the KILT pages (var kilt_path) into the scratch database, once per build.

The only step that reads the input: the pages go to the table kilt_pages beside
this model (kilt_chunks.build.page_load), and this model keeps the one-row record of
that load. A rerun on the same input (a build killed later, run again) reuses
the stored pages. Incremental only to learn whether dbt runs with
--full-refresh (which reloads); every run replaces the record.
"""

from kilt_chunks.build.page_load import PAGES_TABLE, load_pages


def model(dbt, session):
    dbt.config(materialized="incremental")
    previous = str(dbt.this) if dbt.is_incremental else None
    record = load_pages(
        session,
        dbt.config.get("kilt_path"),
        f"{dbt.this.database}.{dbt.this.schema}.{PAGES_TABLE}",
        record_relation=previous,
        progress_seconds=float(dbt.config.get("progress_seconds")),
    )
    if dbt.is_incremental:
        session.execute(f"delete from {dbt.this}")
    return record
