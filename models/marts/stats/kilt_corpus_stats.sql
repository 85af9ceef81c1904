-- One row per corpus statistic, in a fixed order: sizes, tokens per chunk,
-- short chunks, chunks per section, sections per page. `kilt-chunks stats`
-- prints this table; the dataset card shows it.

with

chunk_lengths as (

    select * from {{ ref('int_chunk_lengths') }}

),

chunk_totals as (

    select
        -- A page's first chunk (section 0, chunk 0) counts it: a distinct
        -- count of the ids would hash 5.9 M strings on the full dump.
        count(*) filter (where section_order = 0 and chunk_order = 0)::double
            as pages,
        count(*) filter (where is_last)::double as sections,
        count(*)::double as chunks,
        coalesce(sum(num_tokens), 0)::double as tokens,
        avg(num_tokens)::double as tokens_per_chunk_mean,
        quantile_disc(num_tokens, [0.5, 0.9]) as tokens_per_chunk_quantiles,
        min(num_tokens)::double as tokens_per_chunk_min,
        max(num_tokens)::double as tokens_per_chunk_max,
        avg(num_chars)::double as characters_per_chunk_mean,
        count(*) filter (where num_tokens < 32)::double as chunks_under_32_tokens,
        (count(*) filter (where num_tokens < 32) / nullif(count(*), 0))::double
            as share_under_32_tokens,
        -- chunk_size as int_sections_chunked recorded it (a partial build
        -- uses the value the chunks were made with).
        count(*) filter (
            where num_tokens > {{ recorded_setting('chunk_size') | int }}
        )::double as chunks_over_chunk_size

    from chunk_lengths

),

section_totals as (

    -- A section's last chunk carries its number of chunks.
    select
        avg(chunk_order + 1)::double as chunks_per_section_mean,
        quantile_disc(chunk_order + 1, 0.5)::double as chunks_per_section_median,
        max(chunk_order + 1)::double as chunks_per_section_max

    from chunk_lengths

    where is_last

),

page_totals as (

    -- A page's first chunk carries its number of kept sections.
    select
        avg(num_sections)::double as sections_per_page_mean,
        quantile_disc(num_sections, 0.5)::double as sections_per_page_median,
        max(num_sections)::double as sections_per_page_max

    from chunk_lengths

    where section_order = 0 and chunk_order = 0

),

totals as (

    select
        chunk_totals.* exclude (chunk_totals.tokens_per_chunk_quantiles),
        chunk_totals.tokens_per_chunk_quantiles[1]::double as tokens_per_chunk_median,
        chunk_totals.tokens_per_chunk_quantiles[2]::double as tokens_per_chunk_p90,
        section_totals.*,
        page_totals.*

    from chunk_totals

    cross join section_totals

    cross join page_totals

),

totals_unpivoted as (

    unpivot totals on columns(*) into name statistic value value

),

descriptions as (

    select * from (
        values
        (0, 'pages', 'pages with at least one chunk'),
        (1, 'sections', 'kept sections'),
        (2, 'chunks', 'chunks'),
        (
            3, 'tokens',
            kilt_tokenizer_label(
                '{{ recorded_setting("tokenizer") | replace("'", "''") }}'
            ) || ' tokens over all chunks'
        ),
        (4, 'tokens_per_chunk_mean', 'tokens per chunk, mean'),
        (5, 'tokens_per_chunk_median', 'tokens per chunk, median'),
        (6, 'tokens_per_chunk_p90', 'tokens per chunk, 90th percentile'),
        (7, 'tokens_per_chunk_min', 'tokens per chunk, fewest'),
        (8, 'tokens_per_chunk_max', 'tokens per chunk, most'),
        (9, 'characters_per_chunk_mean', 'characters (code points) per chunk, mean'),
        (10, 'chunks_under_32_tokens', 'chunks of fewer than 32 tokens'),
        (11, 'share_under_32_tokens', 'share of chunks under 32 tokens'),
        (12, 'chunks_over_chunk_size', 'chunks of more tokens than chunk_size'),
        (13, 'chunks_per_section_mean', 'chunks per section, mean'),
        (14, 'chunks_per_section_median', 'chunks per section, median'),
        (15, 'chunks_per_section_max', 'chunks per section, most'),
        (16, 'sections_per_page_mean', 'kept sections per page, mean'),
        (17, 'sections_per_page_median', 'kept sections per page, median'),
        (18, 'sections_per_page_max', 'kept sections per page, most')
    -- The alias names the columns of the values list.
    ) as descriptions (statistic_order, statistic, description)  -- noqa: AL05

),

stats as (

    select
        descriptions.statistic_order::integer as statistic_order,
        descriptions.statistic,
        totals_unpivoted.value,
        descriptions.description

    from descriptions

    left join totals_unpivoted
        on descriptions.statistic = totals_unpivoted.statistic

    order by descriptions.statistic_order

)

select * from stats
