-- What the last build rejected, by reason, next to its audit counts.
select
    audit.lines_read,
    audit.pages_chunked,
    audit.pages_without_text,
    audit.pages_rejected,
    rejected.reject_reason,
    count(rejected.reject_reason) as num_lines

from {{ ref('kilt_load_audit') }} as audit

left join {{ ref('kilt_rejected_pages') }} as rejected
    on true

group by all

order by num_lines desc
