-- depends_on: {{ ref('kilt_build_info') }}

with

chunks as (

    select * from {{ ref('int_sections_chunked') }}

),

sections as (

    select * from {{ ref('int_sections_assembled') }}

),

pages as (

    select * from {{ ref('stg_kilt__pages') }}

),

chunk_rows as (

    select
        'doc-' || chunks.wikipedia_id || '_' || chunks.section_order::varchar
            || '::s-' || chunks.section_order::varchar
            || '::chunk-' || chunks.chunk_order::varchar as chunk_id,
        chunks.wikipedia_id || '_' || chunks.section_order::varchar as doc_id,
        chunks.chunk_order::integer as chunk_order,
        chunks.chunk_order = 0 as is_first,
        chunks.chunk_order = chunks.num_chunks - 1 as is_last,
        -- The chunk is this slice of its section (code points, end exclusive).
        substring(
            sections.section_text,
            chunks.section_start_char + 1,
            chunks.section_end_char - chunks.section_start_char
        )::varchar as text,
        sections.title::varchar as title,
        sections.section_path::varchar[] as section,
        sections.section_order::integer as section_order,
        sections.num_sections::integer as num_sections,
        pages.wikipedia_id::varchar as wikipedia_id,
        pages.wikipedia_title::varchar as wikipedia_title,
        pages.categories::varchar as categories,
        pages.pageid::varchar as pageid,
        pages.parentid::varchar as parentid,
        pages.revid::varchar as revid,
        pages.timestamp::varchar as timestamp,
        pages.url::varchar as url,
        pages.wikidata_id::varchar as wikidata_id,
        chunks.page_order

    from chunks

    inner join sections
        on chunks.wikipedia_id = sections.wikipedia_id
        and chunks.section_order = sections.section_order

    inner join pages
        on chunks.wikipedia_id = pages.wikipedia_id
        and pages.is_loaded

),

ordered as (

    select * exclude (page_order)

    from chunk_rows

    order by page_order, section_order, chunk_order

)

select * from ordered
