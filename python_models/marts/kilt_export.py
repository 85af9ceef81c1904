"""The export: a Hugging Face dataset folder in export_dir, by kilt_chunks."""

from kilt_chunks.build.records import database_identity
from kilt_chunks.export.dataset import export_dataset
from kilt_chunks.export.folder import column_descriptions, export_schemas


def model(dbt, session):
    dbt.config(materialized="table")
    # One ref per config of kilt_chunks.export.folder.EXPORT_TABLES.
    tables = {
        "kilt_chunks": dbt.ref("kilt_chunks"),
        "kilt_chunk_spans": dbt.ref("kilt_chunk_spans"),
        "kilt_queries": dbt.ref("kilt_queries"),
        "kilt_qrels_pages": dbt.ref("kilt_qrels_pages"),
        "kilt_qrels_chunks": dbt.ref("kilt_qrels_chunks"),
    }
    database, build = database_identity(session)
    return export_dataset(
        tables,
        # The files' schemas: the built tables' (their enforced contracts).
        schemas=export_schemas(
            session, database=dbt.this.database, schema=dbt.this.schema
        ),
        # The columns' dbt descriptions (persisted as column comments), for
        # the card.
        descriptions=column_descriptions(
            session, database=dbt.this.database, schema=dbt.this.schema
        ),
        build_info=dbt.ref("kilt_build_info"),
        audit=dbt.ref("kilt_load_audit"),
        stats=dbt.ref("kilt_corpus_stats"),
        histograms=dbt.ref("kilt_corpus_histograms"),
        depth_stats=dbt.ref("kilt_section_depth_stats"),
        export_dir=dbt.config.get("export_dir"),
        rows_per_file=int(dbt.config.get("export_rows_per_file")),
        progress_seconds=float(dbt.config.get("progress_seconds")),
        database=database,
        build=build,
    )
