with

provenance as (

    select * from {{ ref('int_provenance_spans_read') }}

),

paragraphs as (

    select * from {{ ref('int_paragraphs_classified') }}

),

spans as (

    -- A span given several times for one query (several answers or
    -- annotators) is one span.
    select
        task,
        query_id,
        wikipedia_id,
        start_paragraph_id,
        start_character,
        end_paragraph_id,
        end_character,
        min(source_file) as source_file,
        min(line_number) as line_number,
        min(title) as title,
        count(*) as num_entries,
        max(bleu_score) as bleu_score

    from provenance

    where provenance_index is not null

    group by all

),

span_pages as (

    -- Paragraph lengths (code points) of each loaded page a span names, from
    -- the text-free paragraph table (the page text is not kept).
    select
        wikipedia_id,
        list(paragraph_length order by paragraph_id) as paragraph_lengths,
        count(*) as num_paragraphs

    from paragraphs

    where paragraphs.wikipedia_id in (select spans.wikipedia_id from spans)

    group by wikipedia_id

),

measured as (

    select
        spans.*,
        span_pages.wikipedia_id is not null as is_page_in_corpus,
        -- Page-level provenance (entity linking: no offsets at all) is kept:
        -- it gives page qrels, and no chunk.
        coalesce(
            spans.start_paragraph_id, spans.start_character,
            spans.end_paragraph_id, spans.end_character
        ) is null as is_page_level,
        span_pages.num_paragraphs,
        case
            when spans.start_paragraph_id between 0 and span_pages.num_paragraphs - 1
                then span_pages.paragraph_lengths[spans.start_paragraph_id + 1]
        end as start_paragraph_length,
        case
            when spans.end_paragraph_id between 0 and span_pages.num_paragraphs - 1
                then span_pages.paragraph_lengths[spans.end_paragraph_id + 1]
        end as end_paragraph_length,
        -- Characters of the paragraphs strictly between start and end.
        case
            when spans.end_paragraph_id - spans.start_paragraph_id >= 2
                then list_sum(span_pages.paragraph_lengths[
                    spans.start_paragraph_id + 2:spans.end_paragraph_id
                ])
            else 0
        end as middle_length

    from spans

    left join span_pages
        on spans.wikipedia_id = span_pages.wikipedia_id

),

checked as (

    select
        *,
        coalesce(wikipedia_id, '') || '@'
        || coalesce(start_paragraph_id::varchar, '') || ':'
        || coalesce(start_character::varchar, '') || '-'
        || coalesce(end_paragraph_id::varchar, '') || ':'
        || coalesce(end_character::varchar, '') as span_id,
        case
            when wikipedia_id is null
                then 'no wikipedia_id'
            when not is_page_in_corpus
                then 'page not in corpus'
            when is_page_level
                then null
            when
                start_paragraph_id is null or start_character is null
                or end_paragraph_id is null or end_character is null
                then 'incomplete span offsets (some missing)'
            when
                least(
                    start_paragraph_id, start_character,
                    end_paragraph_id, end_character
                ) < 0
                then 'negative offset'
            when start_paragraph_id >= num_paragraphs
                then
                    'start_paragraph_id ' || start_paragraph_id
                    || ' beyond page (' || num_paragraphs || ' paragraphs)'
            when end_paragraph_id >= num_paragraphs
                then
                    'end_paragraph_id ' || end_paragraph_id
                    || ' beyond page (' || num_paragraphs || ' paragraphs)'
            when start_character > start_paragraph_length
                then
                    'start_character ' || start_character || ' beyond paragraph '
                    || start_paragraph_id || ' (' || start_paragraph_length
                    || ' characters)'
            when end_character > end_paragraph_length
                then
                    'end_character ' || end_character || ' beyond paragraph '
                    || end_paragraph_id || ' (' || end_paragraph_length
                    || ' characters)'
            when
                end_paragraph_id < start_paragraph_id
                or (
                    end_paragraph_id = start_paragraph_id
                    and end_character <= start_character
                )
                then 'empty or reversed span'
        end as reject_reason

    from measured

),

sized as (

    select
        task,
        query_id,
        span_id,
        source_file,
        line_number,
        wikipedia_id,
        title,
        is_page_level,
        start_paragraph_id,
        start_character,
        end_paragraph_id,
        end_character,
        case
            when reject_reason is not null or is_page_level then null
            when start_paragraph_id = end_paragraph_id
                then end_character - start_character
            else
                start_paragraph_length - start_character
                + coalesce(middle_length, 0) + end_character
        end as span_chars,
        num_entries,
        bleu_score,
        reject_reason

    from checked

)

select * from sized
