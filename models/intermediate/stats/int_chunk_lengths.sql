{{ config(materialized='ephemeral') }}
-- One row per chunk: where it sits (section depth, position) and how long it
-- is. kilt_chunk_spans holds one row per chunk of kilt_chunks in the same
-- order (its description and tests), so a positional join pairs them with no
-- hash table of chunk ids; a pair that does not match stops the build.

with

chunks as (

    select * from {{ ref('kilt_chunks') }}

),

chunk_spans as (

    select * from {{ ref('kilt_chunk_spans') }}

),

chunks_paired as (

    select
        chunks.wikipedia_id,
        chunks.section_order,
        chunks.chunk_order,
        chunks.is_last,
        chunks.num_sections,
        len(chunks.section) as section_depth,
        chunk_spans.num_tokens,
        chunk_spans.section_end_char - chunk_spans.section_start_char as num_chars

    from chunks

    positional join chunk_spans

    where case
        when chunks.chunk_id is not distinct from chunk_spans.chunk_id then true
        else error(
            'int_chunk_lengths: kilt_chunk_spans is not in the order of kilt_chunks'
            || ' at chunk ' || coalesce(chunks.chunk_id, chunk_spans.chunk_id)
            || ': rebuild both (dbt build --select kilt_chunks+)'
        )
    end

)

select * from chunks_paired
