{% macro kilt_section_path(header) -%}
    {#- Levels end at a ':' right after '.', '?' or '!' (U+FFFF marks the cut);
        each level loses one trailing '.', the one the KILT extractor appended. -#}
    list_transform(
        string_split(
            regexp_replace({{ header }}, '([.?!]):', '\1' || chr(65535), 'g'),
            chr(65535)
        ),
        lambda level: case when ends_with(level, '.') then level[:-2] else level end
    )
{%- endmacro %}
