-- Text-free: kinds, header paths and lengths only, so kilt_chunk_spans and the
-- provenance models work from the main database after the scratch database
-- (with the page text) is removed. Incremental only to skip the work on a
-- rerun over a reused load (base_kilt__pages drops this table after a fresh
-- load).
{{ config(materialized='incremental') }}

with

pages as (

    select * from {{ ref('stg_kilt__pages') }}

),

loaded_pages as (

    select
        page_order,
        wikipedia_id,
        paragraphs

    from pages

    where {{ is_new_loaded_page('pages.page_order') }}

),

paragraphs as (

    select
        page_order,
        wikipedia_id,
        unnest(range(len(paragraphs))) as paragraph_id,
        unnest(paragraphs) as paragraph

    from loaded_pages

),

classified as (

    select
        page_order,
        wikipedia_id,
        paragraph_id,
        case
            when paragraph_id = 0 then 'title'
            when {{ has_marker('paragraph', 'header') }} then 'header'
            when {{ has_marker('paragraph', 'bullet') }} then 'bullet'
            else 'body'
        end as paragraph_kind,
        paragraph

    from paragraphs

),

parsed as (

    select
        page_order,
        wikipedia_id,
        paragraph_id::integer as paragraph_id,
        paragraph_kind,
        case
            when paragraph_kind = 'header'
                then {{ kilt_section_path(
                    "regexp_replace("
                    ~ without_marker('paragraph', 'header')
                    ~ ", '\\n$', '')"
                ) }}
        end as section_path,
        case
            when paragraph_kind = 'bullet' then {{ marker_length('bullet') }}
            when paragraph_kind = 'body' then 0
        end as text_start_character,
        case
            when paragraph_kind = 'bullet'
                then length(paragraph) - {{ marker_length('bullet') }}
            when paragraph_kind = 'body' then length(paragraph)
        end::integer as text_length,
        length(paragraph)::integer as paragraph_length

    from classified

)

select * from parsed
