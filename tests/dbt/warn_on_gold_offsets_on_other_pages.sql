-- A warning, not a failure, for every task whose provenance offsets were
-- applied to pages they were not made on (kilt_provenance_pages_check: pages
-- rendered by from-dump, or revised after KILT's 2019-08-01 snapshot), so
-- dbt's own output says it: "WARN 1 warn_on_gold_offsets_on_other_pages ...
-- Got 1 result" and WARN=1 in the closing line. The reason is in the
-- table's `warning` column and in `kilt-chunks eval --task`.
{{ config(severity='warn') }}

select
    task,
    warning

from {{ ref('kilt_provenance_pages_check') }}

where warning is not null
