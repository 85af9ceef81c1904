-- What the last build rejected, by reason, next to its audit counts.
select
    load_audit.lines_read,
    load_audit.pages_chunked,
    load_audit.pages_without_text,
    load_audit.pages_rejected,
    rejected.reject_reason,
    count(rejected.reject_reason) as num_lines

from {{ ref('kilt_load_audit') }} as load_audit

left join {{ ref('kilt_rejected_pages') }} as rejected
    on true

group by all

order by num_lines desc
