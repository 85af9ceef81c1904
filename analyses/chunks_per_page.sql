-- Chunk counts and mean length per page.
select
    wikipedia_title,
    count(*) as num_chunks,
    avg(length(text)) as avg_chars

from {{ ref('kilt_chunks') }}

group by wikipedia_title

order by num_chunks desc
