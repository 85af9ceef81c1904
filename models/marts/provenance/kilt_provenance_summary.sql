with

task_lines as (

    select * from {{ ref('int_task_lines_read') }}

),

tasks as (

    select * from {{ ref('int_tasks_labelled') }}

),

page_qrels as (

    select * from {{ ref('kilt_qrels_pages') }}

),

chunk_qrels as (

    select * from {{ ref('kilt_qrels_chunks') }}

),

provenance as (

    select * from {{ ref('int_provenance_spans_read') }}

),

spans as (

    select * from {{ ref('int_provenance_spans_checked') }}

),

matches as (

    select * from {{ ref('kilt_provenance_chunks') }}

),

rejected as (

    select * from {{ ref('kilt_provenance_rejected') }}

),

query_counts as (

    select
        task,
        count(distinct query_id) as num_queries,
        count(distinct query_id) filter (where provenance_index is not null)
            as num_queries_with_provenance,
        count(*) filter (where provenance_index is not null) as num_provenance

    from provenance

    group by task

),

line_counts as (

    select
        task,
        count(*) as num_lines

    from task_lines

    group by task

),

span_counts as (

    select
        task,
        count(*) as num_spans,
        -- A page-level entry without wikipedia_id (or of a page not in the
        -- corpus) is rejected: counted there, not here.
        count(*) filter (where is_page_level and reject_reason is null)
            as num_spans_page_level

    from spans

    group by task

),

match_counts as (

    select
        task,
        count(distinct row(query_id, span_id)) filter (where num_span_chunks = 1)
            as num_spans_one_chunk,
        count(distinct row(query_id, span_id)) filter (where num_span_chunks > 1)
            as num_spans_several_chunks

    from matches

    group by task

),

reject_counts as (

    select
        task,
        count(*) filter (where is_not_found) as num_spans_not_found,
        count(*) filter (where span_id is not null and not is_not_found)
            as num_spans_rejected,
        count(*) filter (where span_id is null) as num_lines_rejected

    from rejected

    group by task

),

page_qrel_counts as (

    select
        task,
        count(*) as num_page_qrels,
        count(distinct query_id) as num_queries_with_pages

    from page_qrels

    group by task

),

chunk_qrel_counts as (

    select
        task,
        count(*) as num_qrels,
        count(distinct query_id) as num_queries_with_chunks,
        count(*) filter (where relevance = 2) as num_chunk_qrels_whole_span

    from chunk_qrels

    group by task

),

summary as (

    select
        line_counts.task,
        tasks.dataset,
        tasks.task_family,
        line_counts.num_lines,
        coalesce(reject_counts.num_lines_rejected, 0) as num_lines_rejected,
        coalesce(query_counts.num_queries, 0) as num_queries,
        coalesce(query_counts.num_queries_with_provenance, 0)
            as num_queries_with_provenance,
        coalesce(page_qrel_counts.num_queries_with_pages, 0)
            as num_queries_with_pages,
        coalesce(chunk_qrel_counts.num_queries_with_chunks, 0)
            as num_queries_with_chunks,
        coalesce(query_counts.num_queries, 0)
        - coalesce(chunk_qrel_counts.num_queries_with_chunks, 0)
            as num_queries_without_chunks,
        coalesce(query_counts.num_provenance, 0) as num_provenance,
        coalesce(span_counts.num_spans, 0) as num_spans,
        coalesce(span_counts.num_spans_page_level, 0) as num_spans_page_level,
        coalesce(match_counts.num_spans_one_chunk, 0) as num_spans_one_chunk,
        coalesce(match_counts.num_spans_several_chunks, 0)
            as num_spans_several_chunks,
        coalesce(reject_counts.num_spans_not_found, 0) as num_spans_not_found,
        coalesce(reject_counts.num_spans_rejected, 0) as num_spans_rejected,
        coalesce(chunk_qrel_counts.num_qrels, 0) as num_qrels,
        coalesce(chunk_qrel_counts.num_chunk_qrels_whole_span, 0)
            as num_chunk_qrels_whole_span,
        coalesce(page_qrel_counts.num_page_qrels, 0) as num_page_qrels

    from line_counts

    left join tasks
        on line_counts.task = tasks.task

    left join query_counts
        on line_counts.task = query_counts.task

    left join span_counts
        on line_counts.task = span_counts.task

    left join match_counts
        on line_counts.task = match_counts.task

    left join reject_counts
        on line_counts.task = reject_counts.task

    left join page_qrel_counts
        on line_counts.task = page_qrel_counts.task

    left join chunk_qrel_counts
        on line_counts.task = chunk_qrel_counts.task

    order by line_counts.task

)

select * from summary
