with

pages as (

    select * from {{ ref('stg_kilt__pages') }}

),

rejected as (

    select
        source_file,
        line_number,
        wikipedia_id,
        wikipedia_title,
        reject_reason

    from pages

    where not is_loaded

    order by page_order

)

select * from rejected
