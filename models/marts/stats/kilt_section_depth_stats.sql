-- One row per section depth (0 = the lead, 1 = a top-level section, 2 = its
-- subsection, ...): how many sections and chunks, and the tokens per chunk
-- (mean and quantiles, the share under 32 tokens).

with

chunk_lengths as (

    select * from {{ ref('int_chunk_lengths') }}

),

depth_stats as (

    select
        section_depth::integer as section_depth,
        count(*) filter (where is_last) as num_sections,
        count(*) as num_chunks,
        avg(num_tokens)::double as tokens_mean,
        quantile_disc(num_tokens, 0.05)::integer as tokens_p05,
        quantile_disc(num_tokens, 0.25)::integer as tokens_p25,
        quantile_disc(num_tokens, 0.5)::integer as tokens_median,
        quantile_disc(num_tokens, 0.75)::integer as tokens_p75,
        quantile_disc(num_tokens, 0.95)::integer as tokens_p95,
        (count(*) filter (where num_tokens < 32) / count(*))::double
            as share_under_32_tokens

    from chunk_lengths

    group by section_depth

    order by section_depth

)

select * from depth_stats
