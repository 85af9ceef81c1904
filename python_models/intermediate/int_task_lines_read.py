"""Every line of the KILT task files in var('kilt_tasks'), read by kilt_chunks."""

from kilt_chunks.provenance import read_task_lines


def model(dbt, session):
    dbt.config(materialized="table")
    return read_task_lines(dbt.config.get("kilt_tasks"))
