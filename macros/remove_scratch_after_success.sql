{% macro remove_scratch_after_success(results) -%}
    {#- on-run-end hook: after a build in which every node succeeded and the
        loader ran, detach the scratch database (loaded pages, sections) and
        delete its file, so the DuckDB file is all that stays and holds the
        text once. Kept with keep_scratch: true, and after any failure (a
        rerun then reuses the loaded pages and the sections). -#}
    {%- if execute -%}
        {%- set ran = results | map(attribute='node') | map(attribute='name') | list -%}
        {%- set failed = results | selectattr('status', 'in', ['error', 'fail', 'runtime error', 'skipped']) | list -%}
        {%- set keep = var('keep_scratch') | string | lower in ('true', '1', 'yes') -%}
        {%- if 'base_kilt__pages' in ran and failed | length == 0 and not keep -%}
            {%- set file = run_query(
                "select path from duckdb_databases() where database_name = 'kilt_scratch'"
            ).columns[0].values() -%}
            {%- do run_query('detach database if exists kilt_scratch') -%}
            {%- for name in file -%}
                {%- do run_query("select kilt_remove_file('" ~ (name | replace("'", "''")) ~ "')") -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}
