-- One row per (histogram, bucket): tokens per chunk (buckets of 8 tokens),
-- chunks per section (one bucket per count, 20 and more together) and kept
-- sections per page (one per count, 50 and more together). The figures of
-- the dataset card are drawn from it.

with

chunk_lengths as (

    select * from {{ ref('int_chunk_lengths') }}

),

values_bucketed as (

    select
        'tokens_per_chunk' as histogram,
        (num_tokens // 8) * 8 as bucket_start,
        (num_tokens // 8) * 8 + 8 as bucket_end

    from chunk_lengths

    union all

    select
        'chunks_per_section' as histogram,
        least(chunk_order + 1, 20) as bucket_start,
        case when chunk_order + 1 < 20 then chunk_order + 2 end as bucket_end

    from chunk_lengths

    where is_last

    union all

    select
        'sections_per_page' as histogram,
        least(num_sections, 50) as bucket_start,
        case when num_sections < 50 then num_sections + 1 end as bucket_end

    from chunk_lengths

    where section_order = 0 and chunk_order = 0

),

histograms as (

    select
        histogram,
        bucket_start::integer as bucket_start,
        bucket_end::integer as bucket_end,
        count(*) as num_items,
        count(*) / sum(count(*)) over (partition by histogram) as share

    from values_bucketed

    group by histogram, bucket_start, bucket_end

    order by histogram, bucket_start

)

select * from histograms
