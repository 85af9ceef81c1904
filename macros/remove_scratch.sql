{% macro remove_scratch() -%}
    {#- Detach the scratch database (loaded pages, sections) and delete its
        file (kilt_remove_file, registered by the plugin), unless
        keep_scratch. A post-hook of kilt_chunks, the last model reading it,
        so the models after it and the export never share the disk with it;
        and an on-run-end step (remove_scratch_after_success). -#}
    {%- if execute
        and not (var('keep_scratch') | string | lower in ('true', '1', 'yes')) -%}
        {%- set files = run_query(
            "select path from duckdb_databases() where database_name = 'kilt_scratch'"
        ).columns[0].values() -%}
        {%- if files | length > 0 -%}
            {%- do run_query('detach database if exists kilt_scratch') -%}
            {%- for name in files -%}
                {%- do run_query(
                    "select kilt_remove_file('" ~ (name | replace("'", "''")) ~ "')"
                ) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}
