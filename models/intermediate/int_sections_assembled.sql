with

paragraphs as (

    select * from {{ ref('int_paragraphs_classified') }}

),

pages as (

    select * from {{ ref('stg_kilt__pages') }}

),

body_paragraphs as (

    select
        wikipedia_id,
        paragraph_id,
        paragraph_kind,
        section_path,
        paragraph_text,
        count(*) filter (where paragraph_kind = 'header') over (
            partition by wikipedia_id order by paragraph_id
        ) as header_number

    from paragraphs

    where paragraph_kind <> 'title'

),

sections_grouped as (

    select
        wikipedia_id,
        header_number,
        coalesce(
            any_value(section_path) filter (where paragraph_kind = 'header'),
            []::varchar[]
        ) as section_path,
        coalesce(
            string_agg(paragraph_text, '' order by paragraph_id)
                filter (where paragraph_kind in ('body', 'bullet')),
            ''
        ) as section_text,
        min(paragraph_id) filter (where paragraph_kind in ('body', 'bullet'))
            as start_paragraph_id,
        max(paragraph_id) filter (where paragraph_kind in ('body', 'bullet'))
            as end_paragraph_id

    from body_paragraphs

    group by wikipedia_id, header_number

),

sections_kept as (

    select *

    from sections_grouped

    where not {{ is_blank('section_text') }}

),

sections_numbered as (

    select
        sections_kept.wikipedia_id,
        pages.page_order,
        (row_number() over (
            partition by sections_kept.wikipedia_id
            order by sections_kept.header_number
        ) - 1)::integer as section_order,
        (count(*) over (partition by sections_kept.wikipedia_id))::integer
            as num_sections,
        sections_kept.section_path,
        {{ section_title('pages.wikipedia_title', 'sections_kept.section_path') }}
            as title,
        sections_kept.section_text,
        sections_kept.start_paragraph_id,
        sections_kept.end_paragraph_id

    from sections_kept

    inner join pages
        on sections_kept.wikipedia_id = pages.wikipedia_id
        and pages.is_loaded

),

sections_ordered as (

    -- Stored in page and section order: chunking streams and resumes in it.
    select * from sections_numbered

    order by page_order, section_order

)

select * from sections_ordered
