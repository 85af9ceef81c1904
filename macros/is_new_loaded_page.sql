{% macro is_new_loaded_page(page_order='page_order') -%}
    {#- Where clause of the incremental section models: a loaded page, and,
        on an incremental run (a rerun after a kill), one after the last page
        already built. -#}
    is_loaded
    {% if is_incremental() %}
        and {{ page_order }} > (
            select coalesce(max(built.page_order), 0) from {{ this }} as built
        )
    {% endif %}
{%- endmacro %}
