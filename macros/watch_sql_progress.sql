{% macro watch_sql_progress() -%}
    {#- on-run-start hook: from here on, a SQL query (model or export) running
        longer than var('progress_seconds') reports its progress that often
        (kilt_chunks.sql_progress; 0 keeps it quiet). -#}
    {%- if execute -%}
        select kilt_watch_sql_progress('{{ var("progress_seconds") | float }}')
    {%- else -%}
        select 1
    {%- endif -%}
{%- endmacro %}
