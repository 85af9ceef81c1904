"""One row recording how the chunk corpus was built (versions and settings)."""

from kilt_chunks.build_info import build_info_table
from kilt_chunks.settings import tokenizer_setting


def model(dbt, session):
    dbt.config(materialized="table")
    # Built after chunking, so a build that fails earlier keeps the info of the
    # build whose tables are still there.
    dbt.ref("int_sections_chunked")
    return build_info_table(
        kilt_path=dbt.config.get("kilt_path"),
        splitter=dbt.config.get("splitter"),
        chunk_size=int(dbt.config.get("chunk_size")),
        export_dir=dbt.config.get("export_dir"),
        chunk_overlap=int(dbt.config.get("chunk_overlap")),
        tokenizer=tokenizer_setting(dbt.config.get("tokenizer")),
    )
