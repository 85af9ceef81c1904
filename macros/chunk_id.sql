{% macro chunk_id(wikipedia_id, section_order, chunk_order) -%}
    'doc-' || {{ wikipedia_id }} || '_' || {{ section_order }}::varchar
    || '::s-' || {{ section_order }}::varchar
    || '::chunk-' || {{ chunk_order }}::varchar
{%- endmacro %}
