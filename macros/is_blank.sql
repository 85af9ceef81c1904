{% macro is_blank(text) -%}
    {#- Python's str.isspace() set: the characters str.strip() removes. -#}
    regexp_full_match(
        {{ text }},
        '[\t\n\x0b\x0c\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]*'
    )
{%- endmacro %}
