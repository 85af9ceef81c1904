{% macro remove_scratch_after_success(results) -%}
    {#- on-run-end hook: after a run in which the loader ran and every node
        succeeded, remove the scratch database (remove_scratch) if kilt_chunks
        has not already. A failed or killed build keeps it, and the rerun
        reuses its pages and sections. -#}
    {%- if execute -%}
        {%- set ran = results | map(attribute='node') | map(attribute='name') | list -%}
        {%- set failed = results
            | selectattr('status', 'in', ['error', 'fail', 'runtime error', 'skipped'])
            | list -%}
        {%- if 'base_kilt__pages' in ran and failed | length == 0 -%}
            {%- do run_query(remove_scratch()) -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}
