"""Write the queries, topics and qrels files per KILT task, by kilt_chunks."""

from kilt_chunks.build.records import database_identity
from kilt_chunks.evaluation.provenance import write_task_files


def model(dbt, session):
    dbt.config(materialized="table")
    database, build = database_identity(session)
    tasks = dbt.ref("kilt_provenance_summary").select("task").fetchall()
    return write_task_files(
        dbt.ref("kilt_qrels_chunks"),
        dbt.ref("kilt_qrels_pages"),
        dbt.ref("kilt_queries"),
        [task for (task,) in tasks],
        dbt.config.get("export_dir"),
        database=database,
        build=build,
    )
