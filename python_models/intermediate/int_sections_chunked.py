"""Chunks per kept section (SPEC rules 6-7), split by the kilt_chunks package."""

from kilt_chunks.splitting import chunk_sections_reader


def model(dbt, session):
    dbt.config(materialized="table")
    sections = dbt.ref("int_sections_assembled").select(
        "page_order, wikipedia_id, section_order, section_text"
    )
    total_bytes = sections.aggregate("sum(strlen(section_text))").fetchall()[0][0]
    return chunk_sections_reader(
        sections.to_arrow_reader(int(dbt.config.get("batch_size"))),
        splitter=dbt.config.get("splitter"),
        chunk_size=int(dbt.config.get("chunk_size")),
        workers=int(dbt.config.get("workers")),
        total_bytes=total_bytes,
        progress_seconds=float(dbt.config.get("progress_seconds")),
    )
