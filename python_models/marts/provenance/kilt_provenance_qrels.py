"""Write TREC qrels files per KILT task next to the Parquet export, by kilt_chunks."""

from kilt_chunks.provenance import write_qrels


def model(dbt, session):
    dbt.config(materialized="table")
    tasks = dbt.ref("kilt_provenance_summary").select("task").fetchall()
    return write_qrels(
        dbt.ref("kilt_provenance_chunks"),
        [task for (task,) in tasks],
        dbt.config.get("export_dir"),
    )
