with

task_lines as (

    select * from {{ ref('int_task_lines_read') }}

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
        coalesce(len(output), 0)::integer as num_outputs,
        -- Per output, the wikipedia_id of each provenance entry as given (NULL
        -- for an entry without one); NULL for an output without provenance:
        -- what KILT's scorer reads (kilt-chunks eval applies its rules).
        [
            [entry.wikipedia_id for entry in page_output.provenance]  -- noqa: RF01
            for page_output in coalesce(output, [])
        ]::varchar[][] as output_page_ids,
        -- Distinct non-blank provenance titles (KILT's get_gold_titles).
        list_sort(
            list_distinct(
                flatten(
                    [
                        [
                            trim(entry.title) for entry in title_output.provenance
                            if trim(entry.title) <> ''
                        ]
                        for title_output in coalesce(output, [])
                        if title_output.provenance is not null
                    ]
                )
            )
        )::varchar[] as provenance_titles

    from task_lines

    where reject_reason is null

),

output_pages as (

    -- One row per output with its index (unnest keeps list order).
    select
        task,
        query_id,
        unnest(output_page_ids) as page_ids,
        unnest(range(len(output_page_ids)))::integer as output_index

    from queries

),

evidence_outputs as (

    -- Each output that has a provenance list is one KILT evidence set (an
    -- empty list too: an empty set, which no ranking completes), as KILT's
    -- get_rank reads them (kilt/eval_retrieval.py).
    select
        task,
        query_id,
        output_index,
        list_sort(list_distinct(page_ids)) as evidence_set

    from output_pages

    where page_ids is not null

),

distinct_sets as (

    -- A set given by several outputs counts once, where it first comes.
    select
        task,
        query_id,
        evidence_set,
        min(output_index) as first_output

    from evidence_outputs

    group by task, query_id, evidence_set

),

evidence_sets as (

    -- In the order of the outputs: KILT's order (it decides recall@k).
    select
        task,
        query_id,
        list(evidence_set order by first_output) as evidence_sets

    from distinct_sets

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
        queries.output_page_ids,
        queries.provenance_titles,
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
