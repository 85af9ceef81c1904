{% macro section_title(wikipedia_title, section_path) -%}
    '# ' || {{ wikipedia_title }} || array_to_string(
        list_transform(
            {{ section_path }},
            lambda level, depth: chr(10) || repeat('#', depth + 1) || ' ' || level
        ),
        ''
    )
{%- endmacro %}
