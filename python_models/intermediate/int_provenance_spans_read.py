"""Provenance entries of the KILT task files in var('kilt_tasks'), by kilt_chunks."""

from kilt_chunks.provenance import read_task_provenance


def model(dbt, session):
    dbt.config(materialized="table")
    return read_task_provenance(session, dbt.config.get("kilt_tasks"))
