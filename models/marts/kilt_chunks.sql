-- depends_on: {{ ref('kilt_build_info') }}
-- depends_on: {{ ref('kilt_load_audit') }}
-- depends_on: {{ ref('kilt_rejected_pages') }}
-- Built after every other model that reads the scratch database, so that its
-- post-hook can remove it (remove_scratch): the models after it (spans,
-- provenance) read only the main database, and the disk never holds the
-- scratch copies of the text beside everything else. The refs above give that
-- order; a model reading the scratch database without being among this
-- model's ancestors stops the build at its start (check_scratch_readers_before).
{{ config(post_hook={"sql": "{{ remove_scratch() }}", "transaction": false}) }}

with

sections as (

    select * from {{ ref('int_sections_assembled') }}

),

chunked_sections as (

    select * from {{ ref('int_sections_chunked') }}

),

sections_paired as (

    -- Both tables hold one row per kept section, stored in (page_order,
    -- section_order) order, so row k of one is row k of the other: a
    -- positional join pairs them with no sort and no hash table of section
    -- text. A pair that does not match stops the build: other keys (a table
    -- changed by hand), or a section text other than the one the offsets
    -- were cut from (the sections rebuilt after the chunking step).
    select
        sections.*,
        chunked_sections.chunk_start_chars,
        chunked_sections.chunk_end_chars,
        chunked_sections.chunk_texts,
        chunked_sections.section_text_hash

    from sections

    positional join chunked_sections

    where
        case
            when
                sections.page_order is not distinct from chunked_sections.page_order
                and sections.section_order
                is not distinct from chunked_sections.section_order
                then true
            else error(
                'kilt_chunks: int_sections_chunked is not aligned with'
                || ' int_sections_assembled at page_order '
                || coalesce(sections.page_order, chunked_sections.page_order)::varchar
                || ': rebuild with dbt build --full-refresh'
            )
        end
        and case
            when hash(sections.section_text) = chunked_sections.section_text_hash
                then true
            else error(
                'kilt_chunks: the text of section '
                || sections.section_order::varchar || ' of page '
                || sections.wikipedia_id
                || ' is not the text int_sections_chunked cut its chunks from'
                || ' (int_sections_assembled was rebuilt after it): run the'
                || ' whole build (dbt build), or --select int_sections_chunked+'
            )
        end

),

chunk_texts as (

    -- Chunk k is the section text between its offsets (code points, end
    -- exclusive), cut per section so the section text is not repeated per
    -- chunk. substring counts code points from the start, so a section over
    -- kilt_chunks.build.splitting.LARGE_SECTION_CHARS brings its chunks' text from
    -- the chunking step instead (cutting would be quadratic in its length).
    select
        sections_paired.* exclude (
            section_text,
            chunk_start_chars,
            chunk_end_chars,
            chunk_texts,
            section_text_hash
        ),
        coalesce(
            chunk_texts,
            [
                substring(
                    section_text, start_char + 1, chunk_end_chars[k] - start_char
                )
                for start_char, k in chunk_start_chars
            ]
        ) as texts

    from sections_paired

),

chunk_rows as (

    select
        chunk_texts.* exclude (texts),
        len(texts) as num_chunks,
        unnest(range(len(texts))) as chunk_order,
        unnest(texts) as text

    from chunk_texts

),

chunks as (

    select
        {{ chunk_id('wikipedia_id', 'section_order', 'chunk_order') }} as chunk_id,
        wikipedia_id || '_' || section_order::varchar as doc_id,
        chunk_order::integer as chunk_order,
        chunk_order = 0 as is_first,
        chunk_order = num_chunks - 1 as is_last,
        text::varchar as text,
        title::varchar as title,
        section_path::varchar[] as section,
        section_order::integer as section_order,
        num_sections::integer as num_sections,
        wikipedia_id::varchar as wikipedia_id,
        -- VARCHAR from stg_kilt__pages on (the contract checks it).
        {{ page_metadata_columns() | join(',\n        ') }}

    from chunk_rows

)

select * from chunks
