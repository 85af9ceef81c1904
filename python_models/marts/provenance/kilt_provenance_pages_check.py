"""Per task: can its provenance offsets hold on the pages built? (kilt_chunks)"""

from kilt_chunks.evaluation.provenance import gold_pages_check
from kilt_chunks.export.card import describe_source
from kilt_chunks.reanchor import reanchored_tasks


def model(dbt, session):
    dbt.config(materialized="table")
    [(kilt_path,)] = dbt.ref("kilt_build_info").select("kilt_path").fetchall()
    source = describe_source(kilt_path)
    tasks = dbt.ref("kilt_provenance_summary").select("task").fetchall()
    files = (
        dbt.ref("int_provenance_spans_checked")
        .aggregate("task, min(source_file)", "task")
        .fetchall()
    )
    return gold_pages_check(
        dbt.ref("int_provenance_spans_checked"),
        dbt.ref("kilt_chunks"),
        [task for (task,) in tasks],
        input_kind=source["kind"],
        input_name=source["name"],
        reanchored=reanchored_tasks(dict(files), kilt_path),
    )
