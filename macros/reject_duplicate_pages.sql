{% macro reject_duplicate_pages(pages) -%}
    {#- Post-hook of base_kilt__pages: marks, in the loaded page table itself,
        every usable page whose wikipedia_id was already seen earlier in the
        input (SPEC keeps the first). In place, so staging stays a one-table
        select, which DuckDB guarantees to keep in input order (a join would
        not), and the sections are stored in page order without a sort. The
        input is loaded only by base_kilt__pages, so this runs once per load
        (and is idempotent: rows already rejected are left alone). -#}
    update {{ pages }} as pages
    set reject_reason = 'duplicate wikipedia_id (first seen in '
        || repeated_ids.first_source_file
        || ' line '
        || repeated_ids.first_line_number::varchar
        || ')'
    from (
        select
            wikipedia_id,
            arg_min(source_file, page_order) as first_source_file,
            arg_min(line_number, page_order) as first_line_number,
            min(page_order) as first_page_order
        from {{ pages }}
        where reject_reason is null
        group by wikipedia_id
        having count(*) > 1
    ) as repeated_ids
    where pages.wikipedia_id = repeated_ids.wikipedia_id
        and pages.page_order > repeated_ids.first_page_order
        and pages.reject_reason is null
{%- endmacro %}
