-- depends_on: {{ ref('kilt_chunks') }}
-- (built after the chunks: the scratch database is gone by then.)
-- Joins, windows and the sort use integer keys and integer columns only
-- (page_order, not wikipedia_id; chunk_id added last, by position), so what
-- spills to disk on the full dump stays small.
with

chunked_sections as (

    select * from {{ ref('int_sections_chunked') }}

),

paragraphs as (

    select * from {{ ref('int_paragraphs_classified') }}

),

chunks as (

    select * from {{ ref('kilt_chunks') }}

),

located as (

    select
        page_order,
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
        page_order,
        section_order,
        start_paragraph_id,
        end_paragraph_id

    from chunked_sections

),

text_paragraphs as (

    select
        page_order,
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
        text_paragraphs.page_order,
        sections.section_order,
        text_paragraphs.paragraph_id,
        text_paragraphs.text_start_character,
        text_paragraphs.text_length

    from text_paragraphs

    asof inner join sections
        on text_paragraphs.page_order = sections.page_order
        and text_paragraphs.paragraph_id >= sections.start_paragraph_id

    where text_paragraphs.paragraph_id <= sections.end_paragraph_id

),

paragraph_offsets as (

    -- Where each paragraph's text starts in the section text (code points).
    select
        page_order,
        section_order,
        paragraph_id,
        text_start_character,
        coalesce(
            sum(text_length) over (
                partition by page_order, section_order
                order by paragraph_id
                rows between unbounded preceding and 1 preceding
            ),
            0
        ) as section_offset

    from paragraphs_in_sections

),

chunk_starts_mapped as (

    select
        located.*,
        paragraph_offsets.paragraph_id as start_paragraph_id,
        located.section_start_char - paragraph_offsets.section_offset
            + paragraph_offsets.text_start_character as start_character

    from located

    asof inner join paragraph_offsets
        on located.page_order = paragraph_offsets.page_order
        and located.section_order = paragraph_offsets.section_order
        and located.section_start_char >= paragraph_offsets.section_offset

),

chunk_spans as (

    select
        chunk_starts_mapped.*,
        paragraph_offsets.paragraph_id as end_paragraph_id,
        chunk_starts_mapped.section_end_char - 1 - paragraph_offsets.section_offset
            + paragraph_offsets.text_start_character + 1 as end_character

    from chunk_starts_mapped

    asof inner join paragraph_offsets
        on chunk_starts_mapped.page_order = paragraph_offsets.page_order
        and chunk_starts_mapped.section_order = paragraph_offsets.section_order
        and chunk_starts_mapped.section_end_char - 1 >= paragraph_offsets.section_offset

),

ordered as (

    -- The order of kilt_chunks (page, section, chunk), integers only.
    select
        page_order,
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

    order by page_order, section_order, chunk_order

),

named as (

    -- kilt_chunks is stored in the same order, one row per chunk: a
    -- positional join gives each row its chunk_id and wikipedia_id with no
    -- hash table of strings; rows that do not line up stop the build.
    select
        chunks.chunk_id,
        chunks.wikipedia_id,
        ordered.section_order,
        ordered.chunk_order,
        ordered.start_paragraph_id,
        ordered.start_character,
        ordered.end_paragraph_id,
        ordered.end_character,
        ordered.section_start_char,
        ordered.section_end_char,
        ordered.num_tokens

    from ordered

    positional join chunks

    where case
        when ordered.section_order is not distinct from chunks.section_order
            and ordered.chunk_order is not distinct from chunks.chunk_order
            then true
        else error(
            'kilt_chunk_spans: the chunk offsets are not aligned with kilt_chunks'
            || ' at chunk ' || coalesce(chunks.chunk_id, '(none)')
            || ': rebuild with dbt build --full-refresh'
        )
    end

)

select * from named
