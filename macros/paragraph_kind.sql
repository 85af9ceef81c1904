{#- SPEC "Paragraph kinds": the one place that knows KILT's paragraph markers.
    A paragraph after the title is a header when it starts with 'Section::::',
    a bullet when it starts with 'BULLET::::' (the marker is not text), else
    body text. -#}

{% macro marker_of(kind) -%}
    {{ return({'header': 'Section::::', 'bullet': 'BULLET::::'}[kind]) }}
{%- endmacro %}

{% macro has_marker(paragraph, kind) -%}
    starts_with({{ paragraph }}, '{{ marker_of(kind) }}')
{%- endmacro %}

{% macro marker_length(kind) -%}
    {{ marker_of(kind) | length }}
{%- endmacro %}

{% macro without_marker(paragraph, kind) -%}
    {{ paragraph }}[{{ marker_of(kind) | length + 1 }}:]
{%- endmacro %}
