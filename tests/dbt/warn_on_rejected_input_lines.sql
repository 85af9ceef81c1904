-- A warning, not a failure, for every input line that is not a usable page
-- (kilt_rejected_pages: file, line, reason), so dbt's own output shows them:
-- "WARN 5 warn_on_rejected_input_lines ... Got 5 results" and WARN=1 in the
-- closing line, where it said PASS before.
{{ config(severity='warn') }}

select
    source_file,
    line_number,
    wikipedia_id,
    reject_reason

from {{ ref('kilt_rejected_pages') }}
