with

pages as (

    select * from {{ ref('stg_kilt__pages') }}

),

paragraphs as (

    select * from {{ ref('int_paragraphs_classified') }}

),

chunks as (

    select * from {{ ref('int_sections_chunked') }}

),

page_counts as (

    select
        count(*) as lines_read,
        count(*) filter (where is_loaded) as pages_loaded,
        count(*) filter (where not is_loaded) as pages_rejected,
        count(*) filter (where reject_reason like 'duplicate wikipedia_id%')
            as pages_duplicate,
        count(*) filter (where is_loaded and is_pageid_coerced) as pageid_coerced,
        count(*) filter (where is_loaded and is_parentid_coerced)
            as parentid_coerced,
        count(*) filter (where is_loaded and is_revid_coerced) as revid_coerced

    from pages

),

page_first_paragraphs as (

    select
        wikipedia_id,
        min(paragraph_id) filter (where paragraph_kind = 'header') as first_header_id,
        min(paragraph_id) filter (where paragraph_kind in ('body', 'bullet'))
            as first_text_id,
        count(*) filter (where paragraph_kind = 'header') as num_headers

    from paragraphs

    group by wikipedia_id

),

section_candidates as (

    select
        sum(num_headers)
        + count(*) filter (
            where first_text_id < coalesce(first_header_id, 2147483647)
        ) as sections_total

    from page_first_paragraphs

),

section_counts as (

    -- From the chunking step, which carries each section's text size: one
    -- row per kept section.
    select
        count(*) as sections_kept,
        count(distinct wikipedia_id) as pages_chunked,
        sum(section_text_bytes) as section_text_bytes,
        coalesce(sum(num_chunks), 0) as chunks_written

    from chunks

),

audit as (

    select
        page_counts.lines_read,
        page_counts.pages_loaded,
        section_counts.pages_chunked,
        page_counts.pages_loaded - section_counts.pages_chunked
            as pages_without_text,
        page_counts.pages_rejected,
        page_counts.pages_duplicate,
        coalesce(section_candidates.sections_total, 0) as sections_total,
        section_counts.sections_kept,
        coalesce(section_candidates.sections_total, 0) - section_counts.sections_kept
            as sections_dropped,
        section_counts.chunks_written,
        coalesce(section_counts.section_text_bytes, 0) as section_text_bytes,
        page_counts.pageid_coerced,
        page_counts.parentid_coerced,
        page_counts.revid_coerced

    from page_counts

    cross join section_candidates

    cross join section_counts

)

select * from audit
