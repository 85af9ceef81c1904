-- Pre-hook: see the reject_duplicate_pages macro (raw.pages may have been reloaded).
{{ config(materialized='view', pre_hook="{{ reject_duplicate_pages() }}") }}

with

pages as (

    select * from {{ ref('stg_kilt__pages') }}

),

loaded_pages as (

    select
        wikipedia_id,
        paragraphs

    from pages

    where is_loaded

),

paragraphs as (

    select
        wikipedia_id,
        unnest(range(len(paragraphs))) as paragraph_id,
        unnest(paragraphs) as paragraph

    from loaded_pages

),

classified as (

    select
        wikipedia_id,
        paragraph_id,
        case
            when paragraph_id = 0 then 'title'
            when starts_with(paragraph, 'Section::::') then 'header'
            when starts_with(paragraph, 'BULLET::::') then 'bullet'
            else 'body'
        end as paragraph_kind,
        paragraph

    from paragraphs

),

parsed as (

    select
        wikipedia_id,
        paragraph_id,
        paragraph_kind,
        case
            when paragraph_kind = 'header'
                then {{ kilt_section_path(
                    "regexp_replace(paragraph[12:], '\\n$', '')"
                ) }}
        end as section_path,
        case
            when paragraph_kind = 'bullet' then paragraph[11:]
            when paragraph_kind = 'body' then paragraph
        end as paragraph_text,
        case
            when paragraph_kind = 'bullet' then 10
            when paragraph_kind = 'body' then 0
        end as text_start_character

    from classified

)

select * from parsed
