-- depends_on: {{ ref('kilt_chunks') }}
-- (built after the chunks: the scratch database is gone by then.)
with

chunked_sections as (

    select * from {{ ref('int_sections_chunked') }}

),

chunk_spans as (

    -- The chunking step stored each chunk's KILT span beside its section
    -- offsets (kilt_chunks.build.spans.kilt_spans), so this only unnests: no join,
    -- no sort, and the rows come out in the stored (page_order,
    -- section_order) order, chunk by chunk.
    select
        wikipedia_id,
        section_order,
        unnest(range(num_chunks)) as chunk_order,
        unnest(chunk_start_paragraph_ids) as start_paragraph_id,
        unnest(chunk_start_characters) as start_character,
        unnest(chunk_end_paragraph_ids) as end_paragraph_id,
        unnest(chunk_end_characters) as end_character,
        unnest(chunk_start_chars) as section_start_char,
        unnest(chunk_end_chars) as section_end_char,
        unnest(chunk_num_tokens) as num_tokens

    from chunked_sections

),

final as (

    -- chunk_id as kilt_chunks builds it (a test checks every one is there),
    -- so no join with the chunk text is needed.
    select
        {{ chunk_id('wikipedia_id', 'section_order', 'chunk_order') }} as chunk_id,
        wikipedia_id,
        section_order::integer as section_order,
        chunk_order::integer as chunk_order,
        start_paragraph_id::integer as start_paragraph_id,
        start_character::integer as start_character,
        end_paragraph_id::integer as end_paragraph_id,
        end_character::integer as end_character,
        section_start_char::integer as section_start_char,
        section_end_char::integer as section_end_char,
        num_tokens::integer as num_tokens

    from chunk_spans

)

select * from final
