-- depends_on: {{ ref('kilt_chunks') }}
-- (built after the chunks: the scratch database is gone by then.)
with

chunked_sections as (

    select * from {{ ref('int_sections_chunked') }}

),

located as (

    select
        page_order,
        wikipedia_id,
        section_order,
        unnest(range(num_chunks)) as chunk_order,
        unnest(chunk_start_chars) as section_start_char,
        unnest(chunk_end_chars) as section_end_char,
        unnest(chunk_num_tokens) as num_tokens

    from chunked_sections

),

sections as (

    -- Each section's KILT paragraph range, carried by the chunking step (no
    -- table holding section text is read here).
    select
        wikipedia_id,
        section_order,
        start_paragraph_id,
        end_paragraph_id

    from chunked_sections

),

paragraphs as (

    select * from {{ ref('int_paragraphs_classified') }}

),

text_paragraphs as (

    select
        wikipedia_id,
        paragraph_id,
        text_start_character,
        text_length

    from paragraphs

    where paragraph_kind in ('body', 'bullet')
        and text_length > 0

),

paragraphs_in_sections as (

    -- A section's text paragraphs are those between its first and last text
    -- paragraph: the asof join finds the last section starting at or before
    -- the paragraph; paragraphs of dropped sections fall past its end.
    select
        text_paragraphs.wikipedia_id,
        sections.section_order,
        text_paragraphs.paragraph_id,
        text_paragraphs.text_start_character,
        text_paragraphs.text_length

    from text_paragraphs

    asof inner join sections
        on text_paragraphs.wikipedia_id = sections.wikipedia_id
        and text_paragraphs.paragraph_id >= sections.start_paragraph_id

    where text_paragraphs.paragraph_id <= sections.end_paragraph_id

),

paragraph_offsets as (

    -- Where each paragraph's text starts in the section text (code points).
    select
        *,
        coalesce(
            sum(text_length) over (
                partition by wikipedia_id, section_order
                order by paragraph_id
                rows between unbounded preceding and 1 preceding
            ),
            0
        ) as section_offset

    from paragraphs_in_sections

),

chunk_ends as (

    select
        *,
        section_end_char - 1 as section_last_char

    from located

),

chunk_starts_mapped as (

    select
        chunk_ends.*,
        paragraph_offsets.paragraph_id as start_paragraph_id,
        chunk_ends.section_start_char - paragraph_offsets.section_offset
            + paragraph_offsets.text_start_character as start_character

    from chunk_ends

    asof inner join paragraph_offsets
        on chunk_ends.wikipedia_id = paragraph_offsets.wikipedia_id
        and chunk_ends.section_order = paragraph_offsets.section_order
        and chunk_ends.section_start_char >= paragraph_offsets.section_offset

),

chunk_spans as (

    select
        chunk_starts_mapped.*,
        paragraph_offsets.paragraph_id as end_paragraph_id,
        chunk_starts_mapped.section_last_char - paragraph_offsets.section_offset
            + paragraph_offsets.text_start_character + 1 as end_character

    from chunk_starts_mapped

    asof inner join paragraph_offsets
        on chunk_starts_mapped.wikipedia_id = paragraph_offsets.wikipedia_id
        and chunk_starts_mapped.section_order = paragraph_offsets.section_order
        and chunk_starts_mapped.section_last_char >= paragraph_offsets.section_offset

),

joined as (

    -- chunk_id as kilt_chunks builds it (a test checks every one is there),
    -- so no join with the chunk text is needed.
    select
        'doc-' || chunk_spans.wikipedia_id || '_' || chunk_spans.section_order::varchar
            || '::s-' || chunk_spans.section_order::varchar
            || '::chunk-' || chunk_spans.chunk_order::varchar as chunk_id,
        chunk_spans.wikipedia_id,
        chunk_spans.section_order::integer as section_order,
        chunk_spans.chunk_order::integer as chunk_order,
        chunk_spans.start_paragraph_id::integer as start_paragraph_id,
        chunk_spans.start_character::integer as start_character,
        chunk_spans.end_paragraph_id::integer as end_paragraph_id,
        chunk_spans.end_character::integer as end_character,
        chunk_spans.section_start_char::integer as section_start_char,
        chunk_spans.section_end_char::integer as section_end_char,
        chunk_spans.num_tokens::integer as num_tokens,
        chunk_spans.page_order

    from chunk_spans

),

ordered as (

    select * exclude (page_order)

    from joined

    order by page_order, section_order, chunk_order

)

select * from ordered
