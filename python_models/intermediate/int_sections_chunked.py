"""Chunks per kept section (SPEC rules 6-7), split by the kilt_chunks package.

Chunks are committed batch by batch to a checkpoint table, so a killed build
resumes where it stopped. The model is incremental only to learn whether dbt
runs with --full-refresh (which discards the checkpoint); every run replaces
the table's rows with the checkpoint's.

The chunking settings are built here once (ChunkingSettings.for_build: the
model config's `chunking`, the settings the database recorded, and which
variables --vars gave) and passed whole; the post-hook records them.
"""

from kilt_chunks.build.checkpoint import chunk_sections_resumable
from kilt_chunks.build.records import recorded_settings
from kilt_chunks.chunking_settings import ChunkingSettings
from kilt_chunks.database import table_exists
from kilt_chunks.progress import emit_line
from kilt_chunks.settings import given_variables


def model(dbt, session):
    dbt.config(materialized="incremental", on_schema_change="sync_all_columns")
    full_refresh = (
        table_exists(session, dbt.this.identifier, dbt.this.schema)
        and not dbt.is_incremental
    )
    settings, notes = ChunkingSettings.for_build(
        dbt.config.get("chunking"), recorded_settings(session), given_variables()
    )
    for note in notes:
        emit_line(f"{dbt.this.identifier}: {note}")
    if dbt.is_incremental:
        session.execute(f"delete from {dbt.this}")
    return chunk_sections_resumable(
        session,
        dbt.ref("int_sections_assembled"),
        settings=settings,
        workers=int(dbt.config.get("workers")),
        batch_size=int(dbt.config.get("batch_size")),
        progress_seconds=float(dbt.config.get("progress_seconds")),
        restart=full_refresh,
    )
