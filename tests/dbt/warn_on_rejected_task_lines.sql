-- A warning, not a failure, for every line of the task files (kilt_tasks)
-- that cannot be a query (int_task_lines_read: file, line, reason; also in
-- kilt_provenance_rejected), so dbt's own output shows them: "WARN 3
-- warn_on_rejected_task_lines ... Got 3 results" and WARN=1 in the closing
-- line, where it said PASS before.
{{ config(severity='warn') }}

select
    task,
    source_file,
    line_number,
    reject_reason

from {{ ref('int_task_lines_read') }}

where reject_reason is not null
