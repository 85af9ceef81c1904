"""Each chunk's span in its section text and its token count, by kilt_chunks."""

from kilt_chunks.spans import locate_chunks_reader


def model(dbt, session):
    dbt.config(materialized="table")
    return locate_chunks_reader(
        dbt.ref("int_sections_chunked"), dbt.ref("int_sections_assembled")
    )
