with

spans as (

    select * from {{ ref('int_provenance_spans_checked') }}

),

chunk_spans as (

    select * from {{ ref('kilt_chunk_spans') }}

),

paragraphs as (

    select * from {{ ref('int_paragraphs_classified') }}

),

valid_spans as (

    select *

    from spans

    where
        reject_reason is null
        and not is_page_level

),

candidates as (

    -- Chunk and span overlap as intervals of (paragraph_id, character)
    -- positions, both ends exclusive.
    select
        valid_spans.task,
        valid_spans.query_id,
        valid_spans.span_id,
        valid_spans.wikipedia_id,
        valid_spans.start_paragraph_id,
        valid_spans.start_character,
        valid_spans.end_paragraph_id,
        valid_spans.end_character,
        valid_spans.span_chars,
        chunk_spans.chunk_id,
        chunk_spans.section_order,
        chunk_spans.chunk_order,
        chunk_spans.start_paragraph_id as chunk_start_paragraph_id,
        chunk_spans.start_character as chunk_start_character,
        chunk_spans.end_paragraph_id as chunk_end_paragraph_id,
        chunk_spans.end_character as chunk_end_character

    from valid_spans

    inner join chunk_spans
        on valid_spans.wikipedia_id = chunk_spans.wikipedia_id
        and (
            valid_spans.end_paragraph_id > chunk_spans.start_paragraph_id
            or (
                valid_spans.end_paragraph_id = chunk_spans.start_paragraph_id
                and valid_spans.end_character > chunk_spans.start_character
            )
        )
        and (
            valid_spans.start_paragraph_id < chunk_spans.end_paragraph_id
            or (
                valid_spans.start_paragraph_id = chunk_spans.end_paragraph_id
                and valid_spans.start_character < chunk_spans.end_character
            )
        )

),

text_paragraphs as (

    select
        wikipedia_id,
        paragraph_id,
        text_start_character,
        text_start_character + text_length as text_end_character

    from paragraphs

    where
        paragraph_kind in ('body', 'bullet')
        and paragraphs.wikipedia_id in (
            select valid_spans.wikipedia_id from valid_spans
        )

),

paragraph_overlaps as (

    -- Per paragraph both share: the chunk holds [chunk_from, chunk_to) of it
    -- (never a bullet marker), the span [span_from, span_to).
    select
        candidates.*,
        case
            when text_paragraphs.paragraph_id = candidates.chunk_start_paragraph_id
                then candidates.chunk_start_character
            else text_paragraphs.text_start_character
        end as chunk_from,
        case
            when text_paragraphs.paragraph_id = candidates.chunk_end_paragraph_id
                then candidates.chunk_end_character
            else text_paragraphs.text_end_character
        end as chunk_to,
        case
            when text_paragraphs.paragraph_id = candidates.start_paragraph_id
                then candidates.start_character
            else 0
        end as span_from,
        case
            when text_paragraphs.paragraph_id = candidates.end_paragraph_id
                then candidates.end_character
            else text_paragraphs.text_end_character
        end as span_to

    from candidates

    inner join text_paragraphs
        on candidates.wikipedia_id = text_paragraphs.wikipedia_id
        and text_paragraphs.paragraph_id between greatest(
            candidates.start_paragraph_id, candidates.chunk_start_paragraph_id
        ) and least(candidates.end_paragraph_id, candidates.chunk_end_paragraph_id)

),

span_chunk_overlaps as (

    select
        task,
        query_id,
        span_id,
        wikipedia_id,
        start_paragraph_id,
        start_character,
        end_paragraph_id,
        end_character,
        span_chars,
        chunk_id,
        section_order,
        chunk_order,
        chunk_start_paragraph_id,
        chunk_start_character,
        chunk_end_paragraph_id,
        chunk_end_character,
        sum(greatest(
            0, least(chunk_to, span_to) - greatest(chunk_from, span_from)
        ))::integer as overlap_chars

    from paragraph_overlaps

    group by all

),

matched as (

    select
        task,
        query_id,
        span_id,
        wikipedia_id,
        start_paragraph_id,
        start_character,
        end_paragraph_id,
        end_character,
        chunk_id,
        section_order,
        chunk_order,
        overlap_chars,
        span_chars::integer as span_chars,
        (
            chunk_start_paragraph_id < start_paragraph_id
            or (
                chunk_start_paragraph_id = start_paragraph_id
                and chunk_start_character <= start_character
            )
        )
        and (
            end_paragraph_id < chunk_end_paragraph_id
            or (
                end_paragraph_id = chunk_end_paragraph_id
                and end_character <= chunk_end_character
            )
        ) as is_span_inside_chunk,
        (count(*) over (partition by task, query_id, span_id))::integer
            as num_span_chunks

    from span_chunk_overlaps

    where overlap_chars > 0

),

ordered as (

    select * from matched

    order by task, query_id, span_id, wikipedia_id, section_order, chunk_order

)

select * from ordered
