"""One row recording how the chunk corpus was built (versions and settings)."""

from kilt_chunks.build.build_info import build_info, build_info_table
from kilt_chunks.build.records import recorded_settings
from kilt_chunks.chunking_settings import ChunkingSettings


def model(dbt, session):
    dbt.config(materialized="table")
    # Built after chunking, so a build that fails earlier keeps the info of the
    # build whose tables are still there.
    dbt.ref("int_sections_chunked")
    # The settings the chunks were built with, as int_sections_chunked
    # recorded them whole (kilt_build_settings), not the variables of a
    # partial build that did not chunk.
    settings, _ = ChunkingSettings.for_build({}, recorded_settings(session), ())
    info = build_info(
        kilt_path=dbt.config.get("kilt_path"),
        settings=settings,
        export_dir=dbt.config.get("export_dir"),
    )
    return build_info_table(info)
