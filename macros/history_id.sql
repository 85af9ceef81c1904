{% macro history_id(column) -%}
    {#- A history id as decimal text: only a plain decimal integer (optional
        minus sign, digits; surrounding spaces ignored) that fits a BIGINT is
        kept; -1 (KILT's "none") and anything else (hex such as 0x1F, 1e3,
        1.5, text) become NULL, counted by is_coerced(). try_cast alone would
        read 0x1F as 31 and 1e3 as 1000. -#}
    case
        when regexp_full_match(trim({{ column }}), '-?[0-9]+')
            then nullif(try_cast(trim({{ column }}) as bigint), -1)::varchar
    end
{%- endmacro %}


{% macro is_coerced(column) -%}
    {#- True when the raw history id was given (not missing, empty or -1) but
        history_id() made it NULL because it is not a decimal integer. -#}
    ({{ history_id(column) }} is null
        and nullif(nullif(trim({{ column }}), ''), '-1') is not null)
{%- endmacro %}
