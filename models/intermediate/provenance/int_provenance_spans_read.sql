with

task_lines as (

    select * from {{ ref('int_task_lines_read') }}

),

queries as (

    select
        task,
        source_file,
        line_number,
        query_id,
        output

    from task_lines

    where reject_reason is null

),

outputs as (

    select
        queries.task,
        queries.source_file,
        queries.line_number,
        queries.query_id,
        answers.output_index,
        answers.answer_output

    from queries

    -- A lateral unnest reads the current row: it cannot be a CTE.
    cross join lateral (  -- noqa: ST05
        select
            unnest(queries.output) as answer_output,
            unnest(range(len(queries.output)))::integer as output_index
    ) as answers

),

entries as (

    select
        outputs.task,
        outputs.source_file,
        outputs.line_number,
        outputs.query_id,
        outputs.output_index,
        spans.provenance_index,
        spans.span.wikipedia_id,
        spans.span.title,
        spans.span.section,
        spans.span.start_paragraph_id,
        spans.span.start_character,
        spans.span.end_paragraph_id,
        spans.span.end_character,
        spans.span.bleu_score

    from outputs

    -- A lateral unnest reads the current row: it cannot be a CTE.
    cross join lateral (  -- noqa: ST05
        select
            unnest(outputs.answer_output.provenance) as span,
            unnest(range(len(outputs.answer_output.provenance)))::integer
                as provenance_index
    ) as spans

),

queries_without_provenance as (

    -- One row with NULL entry columns, so the query is still counted.
    select
        queries.task,
        queries.source_file,
        queries.line_number,
        queries.query_id

    from queries

    anti join entries
        on queries.task = entries.task
        and queries.query_id = entries.query_id

),

unioned as (

    select * from entries

    union all by name

    select * from queries_without_provenance

),

typed as (

    select
        task::varchar as task,
        source_file::varchar as source_file,
        line_number::bigint as line_number,
        query_id::varchar as query_id,
        output_index::integer as output_index,
        provenance_index::integer as provenance_index,
        wikipedia_id::varchar as wikipedia_id,
        title::varchar as title,
        section::varchar as section,
        start_paragraph_id::bigint as start_paragraph_id,
        start_character::bigint as start_character,
        end_paragraph_id::bigint as end_paragraph_id,
        end_character::bigint as end_character,
        bleu_score::double as bleu_score

    from unioned

    order by task, line_number, output_index, provenance_index

)

select * from typed
