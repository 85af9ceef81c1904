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
        -- One holistic state for all five quantiles (it holds every value
        -- of its group): five states ran out of memory at the 512 MB cap on
        -- the full dump's 23.7 M chunks.
        quantile_disc(num_tokens, [0.05, 0.25, 0.5, 0.75, 0.95]) as tokens_quantiles,
        (count(*) filter (where num_tokens < 32) / count(*))::double
            as share_under_32_tokens

    from chunk_lengths

    group by section_depth

    order by section_depth

),

final as (

    select
        section_depth,
        num_sections,
        num_chunks,
        tokens_mean,
        tokens_quantiles[1]::integer as tokens_p05,
        tokens_quantiles[2]::integer as tokens_p25,
        tokens_quantiles[3]::integer as tokens_median,
        tokens_quantiles[4]::integer as tokens_p75,
        tokens_quantiles[5]::integer as tokens_p95,
        share_under_32_tokens

    from depth_stats

    order by section_depth

)

select * from final
