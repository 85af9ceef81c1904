"""One row recording how the chunk corpus was built (versions and settings)."""

from kilt_chunks.build_info import build_info_table, prepare_export_dir


def model(dbt, session):
    dbt.config(materialized="table")
    # Built after chunking, so a build that fails earlier keeps the info of the
    # build whose tables are still there.
    dbt.ref("int_sections_chunked")
    # kilt_chunks (built next) exports into <export_dir>/kilt_chunks, whose
    # parent DuckDB's COPY does not create.
    prepare_export_dir(dbt.config.get("export_dir"))
    return build_info_table(
        kilt_path=dbt.config.get("kilt_path"),
        splitter=dbt.config.get("splitter"),
        chunk_size=int(dbt.config.get("chunk_size")),
        export_dir=dbt.config.get("export_dir"),
    )
