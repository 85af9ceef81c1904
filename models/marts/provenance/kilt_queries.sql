with

task_lines as (

    select * from {{ ref('int_task_lines_read') }}

),

provenance as (

    select * from {{ ref('int_provenance_spans_read') }}

),

page_qrels as (

    select * from {{ ref('kilt_qrels_pages') }}

),

chunk_qrels as (

    select * from {{ ref('kilt_qrels_chunks') }}

),

tasks as (

    select * from {{ ref('int_tasks_labelled') }}

),

queries as (

    select
        task,
        query_id,
        source_file,
        line_number,
        input,
        -- Answers in output order; outputs without an answer (provenance
        -- only) give none.
        coalesce(
            [
                answer_output.answer for answer_output in output
                if answer_output.answer is not null
            ],
            []
        )::varchar[] as answers,
        coalesce(len(output), 0)::integer as num_outputs

    from task_lines

    where reject_reason is null

),

output_pages as (

    -- Each output's provenance pages: one KILT evidence set.
    select
        task,
        query_id,
        output_index,
        list(distinct wikipedia_id order by wikipedia_id) as evidence_set

    from provenance

    where
        provenance_index is not null
        and wikipedia_id is not null

    group by task, query_id, output_index

),

evidence_sets as (

    -- Distinct sets per query (several outputs often give the same pages).
    select
        task,
        query_id,
        list(distinct evidence_set order by evidence_set) as evidence_sets

    from output_pages

    group by task, query_id

),

page_counts as (

    select
        task,
        query_id,
        count(*)::integer as num_relevant_pages,
        count(*) filter (where is_page_in_corpus)::integer
            as num_relevant_pages_in_corpus

    from page_qrels

    group by task, query_id

),

chunk_counts as (

    select
        task,
        query_id,
        count(*)::integer as num_relevant_chunks,
        count(*) filter (where relevance = 2)::integer as num_whole_span_chunks

    from chunk_qrels

    group by task, query_id

),

joined as (

    select
        queries.task,
        tasks.dataset,
        tasks.task_family,
        queries.query_id,
        queries.input,
        queries.answers,
        queries.num_outputs,
        coalesce(len(evidence_sets.evidence_sets), 0)::integer
            as num_evidence_sets,
        coalesce(evidence_sets.evidence_sets, [])::varchar[][] as evidence_sets,
        coalesce(page_counts.num_relevant_pages, 0) as num_relevant_pages,
        coalesce(page_counts.num_relevant_pages_in_corpus, 0)
            as num_relevant_pages_in_corpus,
        coalesce(chunk_counts.num_relevant_chunks, 0) as num_relevant_chunks,
        coalesce(chunk_counts.num_whole_span_chunks, 0) as num_whole_span_chunks,
        coalesce(chunk_counts.num_relevant_chunks, 0) > 0
            as is_evidence_in_chunks,
        queries.source_file,
        queries.line_number

    from queries

    left join tasks
        on queries.task = tasks.task

    left join evidence_sets
        on queries.task = evidence_sets.task
        and queries.query_id = evidence_sets.query_id

    left join page_counts
        on queries.task = page_counts.task
        and queries.query_id = page_counts.query_id

    left join chunk_counts
        on queries.task = chunk_counts.task
        and queries.query_id = chunk_counts.query_id

),

ordered as (

    select * from joined

    order by task, line_number

)

select * from ordered
