-- Sections that do not have exactly one first and one last chunk.
select
    doc_id,
    count(*) filter (where is_first) as num_first,
    count(*) filter (where is_last) as num_last

from {{ ref('kilt_chunks') }}

group by doc_id

having count(*) filter (where is_first) <> 1 or count(*) filter (where is_last) <> 1
