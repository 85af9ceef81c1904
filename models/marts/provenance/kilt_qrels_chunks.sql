{%- set min_overlap = var('min_overlap') | float -%}

with

matches as (

    select * from {{ ref('kilt_provenance_chunks') }}

),

tasks as (

    select * from {{ ref('int_tasks_labelled') }}

),

graded_matches as (

    -- One (span, chunk) overlap: 2 when the chunk holds all of the span that
    -- lies in any chunk (the span overlaps this chunk alone), 1 when it holds
    -- part of it; below min_overlap ({{ min_overlap }}: characters when >= 1,
    -- else a fraction of the span's characters) the chunk is not relevant
    -- for that span.
    select
        task,
        query_id,
        span_id,
        chunk_id,
        wikipedia_id,
        section_order,
        chunk_order,
        overlap_chars,
        span_chars,
        case when num_span_chunks = 1 then 2 else 1 end as grade

    from matches

    where
        {%- if min_overlap >= 1 %}
            overlap_chars >= {{ min_overlap | int }}
        {%- else %}
            overlap_chars >= {{ min_overlap }} * span_chars
        {%- endif %}

),

qrels as (

    -- A chunk matched by several spans of a query takes its best grade.
    select
        graded_matches.task,
        tasks.dataset,
        tasks.task_family,
        graded_matches.query_id,
        graded_matches.chunk_id,
        max(graded_matches.grade)::integer as relevance,
        graded_matches.wikipedia_id,
        graded_matches.section_order,
        graded_matches.chunk_order,
        count(*)::integer as num_spans,
        max(graded_matches.overlap_chars)::integer as max_overlap_chars,
        max(graded_matches.overlap_chars / graded_matches.span_chars)
            as max_overlap_fraction

    from graded_matches

    left join tasks
        on graded_matches.task = tasks.task

    group by all

),

ordered as (

    select * from qrels

    order by task, query_id, wikipedia_id, section_order, chunk_order

)

select * from ordered
