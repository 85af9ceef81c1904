with

provenance as (

    select * from {{ ref('int_provenance_spans_read') }}

),

paragraphs as (

    select * from {{ ref('int_paragraphs_classified') }}

),

tasks as (

    select * from {{ ref('int_tasks_labelled') }}

),

entries as (

    select
        task,
        query_id,
        output_index,
        wikipedia_id,
        title,
        coalesce(
            start_paragraph_id, start_character, end_paragraph_id, end_character
        ) is null as is_page_level

    from provenance

    where
        provenance_index is not null
        and wikipedia_id is not null

),

pages as (

    -- KILT's page-level gold: every page any provenance entry names, with or
    -- without offsets, in the corpus or not (KILT's own evaluation counts
    -- them all).
    select
        task,
        query_id,
        wikipedia_id,
        min(title) as title,
        count(distinct output_index)::integer as num_evidence_sets,
        bool_and(is_page_level) as is_page_level_only

    from entries

    group by task, query_id, wikipedia_id

),

pages_in_corpus as (

    select distinct wikipedia_id

    from paragraphs

    where paragraphs.wikipedia_id in (select entries.wikipedia_id from entries)

),

qrels as (

    select
        pages.task,
        tasks.dataset,
        tasks.task_family,
        pages.query_id,
        pages.wikipedia_id,
        1 as relevance,
        pages.title,
        pages.num_evidence_sets,
        pages.is_page_level_only,
        pages_in_corpus.wikipedia_id is not null as is_page_in_corpus

    from pages

    left join pages_in_corpus
        on pages.wikipedia_id = pages_in_corpus.wikipedia_id

    left join tasks
        on pages.task = tasks.task

    order by pages.task, pages.query_id, pages.wikipedia_id

)

select * from qrels
