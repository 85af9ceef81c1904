{% macro stop_on_unreadable_input(relation) -%}
    {#- Fails the statement with the loader's own message (file, line, problem)
        when the loader marked the input unreadable. -#}
    select error(reject_reason)
    from {{ relation }}
    where starts_with(reject_reason, '{{ unreadable_input_marker() }}')
{%- endmacro %}
