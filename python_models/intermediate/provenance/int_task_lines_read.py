"""Every line of the KILT task files in var('kilt_tasks'), read by kilt_chunks.

The lines are parsed by the DuckDB table macro that the pre-hook (macro
create_task_lines_parser) defines, on a cursor of their own: dbt-duckdb writes
the stream of rows through another one, and the session itself stays
untouched until dbt renames the table it wrote.
"""

from kilt_chunks.evaluation.provenance import read_task_lines


def model(dbt, session):
    dbt.config(materialized="table")
    return read_task_lines(dbt.config.get("kilt_tasks"), session.cursor())
