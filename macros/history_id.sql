{% macro history_id(column) -%}
    nullif(try_cast(nullif(trim({{ column }}), '') as bigint), -1)::varchar
{%- endmacro %}


{% macro is_coerced(column) -%}
    {#- True when the raw history id was given (not missing, empty or -1) but
        history_id() made it NULL because it is not an integer. -#}
    ({{ history_id(column) }} is null
        and nullif(nullif(trim({{ column }}), ''), '-1') is not null)
{%- endmacro %}
