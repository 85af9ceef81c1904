-- One table, no join: rows keep the input order (page_order), which every
-- later model relies on instead of sorting. Duplicate wikipedia_ids are marked
-- in the loaded table by a post-hook of base_kilt__pages.

with

pages as (

    select * from {{ loaded_pages() }}

),

typed as (

    select
        page_order,
        source_file,
        line_number,
        wikipedia_id::varchar as wikipedia_id,
        wikipedia_title::varchar as wikipedia_title,
        text as paragraphs,
        coalesce(categories, '') as categories,
        {{ history_id('pageid') }} as pageid,
        {{ history_id('parentid') }} as parentid,
        {{ history_id('revid') }} as revid,
        nullif(timestamp, '') as timestamp,
        nullif(url, '') as url,
        nullif(wikidata_id, '') as wikidata_id,
        reject_reason,
        reject_reason is null as is_loaded,
        -- A history id given but not an integer becomes NULL: counted, per
        -- field, in kilt_load_audit (never silently).
        {{ is_coerced('pageid') }} as is_pageid_coerced,
        {{ is_coerced('parentid') }} as is_parentid_coerced,
        {{ is_coerced('revid') }} as is_revid_coerced

    from pages

)

select * from typed
