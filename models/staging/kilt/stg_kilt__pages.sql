with

source as (

    select * from {{ source('kilt', 'pages') }}

),

-- wikipedia_ids seen more than once among usable lines, with the first one.
repeated_ids as (

    select
        wikipedia_id,
        arg_min(source_file, page_order) as first_source_file,
        arg_min(line_number, page_order) as first_line_number,
        min(page_order) as first_page_order

    from source

    where reject_reason is null

    group by wikipedia_id

    having count(*) > 1

),

deduplicated as (

    select
        source.*,
        case
            when source.reject_reason is null
                and source.page_order > repeated_ids.first_page_order
                then 'duplicate wikipedia_id (first seen in '
                    || repeated_ids.first_source_file
                    || ' line '
                    || repeated_ids.first_line_number::varchar
                    || ')'
            else source.reject_reason
        end as page_reject_reason

    from source

    left join repeated_ids
        on source.wikipedia_id = repeated_ids.wikipedia_id

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
        page_reject_reason as reject_reason,
        page_reject_reason is null as is_loaded

    from deduplicated

)

select * from typed
