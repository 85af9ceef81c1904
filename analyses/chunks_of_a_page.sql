-- The chunks of one article, in reading order.
select
    chunk_id,
    title,
    text

from {{ ref('kilt_chunks') }}

where wikipedia_title = 'Albedo'

order by section_order, chunk_order
