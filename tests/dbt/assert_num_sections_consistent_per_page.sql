-- Pages whose rows disagree on num_sections, or where it differs from the
-- number of distinct sections that have chunks.
select
    wikipedia_id,
    min(num_sections) as min_num_sections,
    max(num_sections) as max_num_sections,
    count(distinct section_order) as num_distinct_sections

from {{ ref('kilt_chunks') }}

group by wikipedia_id

having
    min(num_sections) <> max(num_sections)
    or max(num_sections) <> count(distinct section_order)
