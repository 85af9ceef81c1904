{% macro set_text_compression() -%}
    {#- DuckDB compresses text with DICT_FSST by default: about 3x smaller, but
        writing it costs about as much as all the rest of the build outside
        chunking. compress_text (default false) chooses. -#}
    {%- if var('compress_text') | string | lower in ('true', '1', 'yes') -%}
        reset disabled_compression_methods
    {%- else -%}
        set disabled_compression_methods = 'dict_fsst'
    {%- endif -%}
{%- endmacro %}
