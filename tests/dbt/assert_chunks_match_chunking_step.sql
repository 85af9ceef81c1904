-- Loaded pages whose chunk count in kilt_chunks differs from what the chunking
-- step produced (nothing lost or duplicated on the way).
with

produced as (

    select
        wikipedia_id,
        sum(num_chunks) as num_chunks

    from {{ ref('int_sections_chunked') }}

    group by wikipedia_id

),

published as (

    select
        wikipedia_id,
        count(*) as num_chunks

    from {{ ref('kilt_chunks') }}

    group by wikipedia_id

)

select
    coalesce(produced.wikipedia_id, published.wikipedia_id) as wikipedia_id,
    produced.num_chunks as num_produced,
    published.num_chunks as num_published

from produced

full outer join published
    on produced.wikipedia_id = published.wikipedia_id

where produced.num_chunks is distinct from published.num_chunks
