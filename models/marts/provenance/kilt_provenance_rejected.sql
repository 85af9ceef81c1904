with

task_lines as (

    select * from {{ ref('int_task_lines_read') }}

),

spans as (

    select * from {{ ref('int_provenance_spans_checked') }}

),

matches as (

    select * from {{ ref('kilt_provenance_chunks') }}

),

rejected as (

    select
        *,
        false as is_not_found

    from spans

    where reject_reason is not null

),

not_found as (

    select
        spans.* replace (
            'overlaps no chunk (only title, header, bullet marker, white space'
            || ' between chunks, or a dropped section)' as reject_reason
        ),
        true as is_not_found

    from spans

    anti join matches
        on spans.task = matches.task
        and spans.query_id is not distinct from matches.query_id
        and spans.span_id = matches.span_id

    where
        spans.reject_reason is null
        and not spans.is_page_level

),

lines_rejected as (

    -- Lines of a task file that cannot be a query (bad JSON, wrong types,
    -- a duplicate id): no span, the line's own reason.
    select
        task,
        query_id,
        source_file,
        line_number,
        reject_reason,
        false as is_not_found

    from task_lines

    where reject_reason is not null

),

unioned as (

    select * from rejected

    union all

    select * from not_found

    union all by name

    select * from lines_rejected

),

ordered as (

    select
        task,
        query_id,
        source_file,
        line_number,
        span_id,
        wikipedia_id,
        title,
        start_paragraph_id,
        start_character,
        end_paragraph_id,
        end_character,
        span_chars,
        num_entries,
        reject_reason,
        is_not_found

    from unioned

    order by task, line_number, span_id

)

select * from ordered
