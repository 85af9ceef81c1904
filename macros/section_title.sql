{% macro section_title(wikipedia_title, section_path) -%}
    '# ' || {{ wikipedia_title }} || array_to_string(
        [
            chr(10) || repeat('#', depth + 1) || ' ' || level
            for level, depth in {{ section_path }}
        ],
        ''
    )
{%- endmacro %}
