"""One row recording how the chunk corpus was built (versions and settings)."""

from kilt_chunks.build_info import build_info, build_info_table
from kilt_chunks.records import recorded_settings
from kilt_chunks.settings import tokenizer_setting


def model(dbt, session):
    dbt.config(materialized="table")
    # Built after chunking, so a build that fails earlier keeps the info of the
    # build whose tables are still there.
    dbt.ref("int_sections_chunked")
    # The values the chunks were built with (kilt_build_settings), not the
    # defaults of a partial build that did not chunk.
    recorded = recorded_settings(session)
    info = build_info(
        kilt_path=dbt.config.get("kilt_path"),
        splitter=recorded.get("splitter", dbt.config.get("splitter")),
        chunk_size=int(recorded.get("chunk_size", dbt.config.get("chunk_size"))),
        export_dir=dbt.config.get("export_dir"),
        chunk_overlap=int(
            recorded.get("chunk_overlap", dbt.config.get("chunk_overlap"))
        ),
        tokenizer=tokenizer_setting(
            recorded.get("tokenizer", dbt.config.get("tokenizer"))
        ),
    )
    return build_info_table(info)
