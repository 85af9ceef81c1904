-- Chunk counts and mean length per page.
select
    wikipedia_title,
    count(*) as num_chunks,
    num_sections,
    avg(length(text)) as avg_chars

from {{ ref('kilt_chunks') }}

group by wikipedia_title, num_sections

order by num_chunks desc
