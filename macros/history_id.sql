{% macro history_id(column) -%}
    nullif(try_cast(nullif(trim({{ column }}), '') as bigint), -1)::varchar
{%- endmacro %}
