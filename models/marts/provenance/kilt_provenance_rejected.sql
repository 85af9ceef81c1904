with

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

    where spans.reject_reason is null

),

unioned as (

    select * from rejected

    union all

    select * from not_found

),

ordered as (

    select
        task,
        query_id,
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

    order by task, query_id, span_id

)

select * from ordered
