with

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

span_counts as (

    select
        task,
        count(*) as num_spans

    from spans

    group by task

),

match_counts as (

    select
        task,
        count(distinct (query_id, span_id)) filter (where num_span_chunks = 1)
            as num_spans_one_chunk,
        count(distinct (query_id, span_id)) filter (where num_span_chunks > 1)
            as num_spans_several_chunks,
        count(distinct query_id) as num_queries_with_chunks,
        count(distinct (query_id, chunk_id)) as num_qrels

    from matches

    group by task

),

reject_counts as (

    select
        task,
        count(*) filter (where is_not_found) as num_spans_not_found,
        count(*) filter (where not is_not_found) as num_spans_rejected

    from rejected

    group by task

),

summary as (

    select
        query_counts.task,
        query_counts.num_queries,
        query_counts.num_queries_with_provenance,
        coalesce(match_counts.num_queries_with_chunks, 0) as num_queries_with_chunks,
        query_counts.num_provenance,
        coalesce(span_counts.num_spans, 0) as num_spans,
        coalesce(match_counts.num_spans_one_chunk, 0) as num_spans_one_chunk,
        coalesce(match_counts.num_spans_several_chunks, 0)
            as num_spans_several_chunks,
        coalesce(reject_counts.num_spans_not_found, 0) as num_spans_not_found,
        coalesce(reject_counts.num_spans_rejected, 0) as num_spans_rejected,
        coalesce(match_counts.num_qrels, 0) as num_qrels

    from query_counts

    left join span_counts
        on query_counts.task = span_counts.task

    left join match_counts
        on query_counts.task = match_counts.task

    left join reject_counts
        on query_counts.task = reject_counts.task

    order by query_counts.task

)

select * from summary
