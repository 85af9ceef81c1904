"""Per task: can its provenance offsets hold on the pages built? (kilt_chunks)"""

from kilt_chunks.card import describe_source
from kilt_chunks.provenance import gold_pages_check


def model(dbt, session):
    dbt.config(materialized="table")
    [(kilt_path,)] = dbt.ref("kilt_build_info").select("kilt_path").fetchall()
    source = describe_source(kilt_path)
    tasks = dbt.ref("kilt_provenance_summary").select("task").fetchall()
    return gold_pages_check(
        dbt.ref("int_provenance_spans_checked"),
        dbt.ref("kilt_chunks"),
        [task for (task,) in tasks],
        input_kind=source["kind"],
        input_name=source["name"],
    )
