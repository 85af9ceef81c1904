{% macro scratch_compression(enabled=true) -%}
    {#- Pre-hook (enabled) and post-hook (not enabled) of the scratch tables
        that hold text (int_sections_assembled): write them with DuckDB's ZSTD
        compression (about 4x smaller text; integers keep bit packing), as
        kilt_chunks.build.page_load.scratch_compression does for the pages. -#}
    {%- if enabled -%}
        set force_compression = 'zstd'
    {%- else -%}
        reset force_compression
    {%- endif -%}
{%- endmacro %}
