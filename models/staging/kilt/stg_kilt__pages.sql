with

source as (

    select * from {{ source('kilt', 'pages') }}

),

ordered as (

    select
        *,
        row_number() over (order by source_file, line_number) as page_order

    from source

),

deduplicated as (

    select
        *,
        case
            when reject_reason is null and row_number() over (
                partition by wikipedia_id, reject_reason is null
                order by page_order
            ) > 1
                then 'duplicate wikipedia_id (first seen in '
                    || first_value(source_file) over (
                        partition by wikipedia_id, reject_reason is null
                        order by page_order
                    )
                    || ' line '
                    || first_value(line_number) over (
                        partition by wikipedia_id, reject_reason is null
                        order by page_order
                    )::varchar
                    || ')'
            else reject_reason
        end as page_reject_reason

    from ordered

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
