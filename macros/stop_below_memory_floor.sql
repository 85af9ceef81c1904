{% macro stop_below_memory_floor(relation) -%}
    {#- Post-hook of base_kilt__pages: stops the build, right after the load,
        when the memory limit is below what this input's longest run of pages
        needs in the sections step (kilt_chunks.build.page_load.memory_floor_problem),
        naming KILT_CHUNKS_MEMORY_LIMIT and the floor; the loaded pages are
        kept for the next build. -#}
    select error(memory_problem)
    from {{ relation }}
    where memory_problem is not null
{%- endmacro %}
