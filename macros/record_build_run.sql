{% macro record_build_run(results) -%}
    {#- on-run-end hook (the last): one row in kilt_build_run describing this
        dbt invocation, read by `kilt-chunks summary`: when it started and
        ended (wall time), whether every node succeeded, and which failed. -#}
    {%- if execute -%}
        {%- set failed = results | selectattr('status', 'in', ['error', 'fail', 'runtime error'])
            | map(attribute='node') | map(attribute='name') | list -%}
        create or replace table {{ target.database }}.{{ target.schema }}.kilt_build_run as
        select
            '{{ invocation_id }}' as invocation_id,
            '{{ run_started_at.isoformat() }}'::timestamptz as started_at,
            now() as finished_at,
            epoch(now() - '{{ run_started_at.isoformat() }}'::timestamptz) as wall_seconds,
            {{ 'true' if failed | length == 0 else 'false' }} as is_complete,
            [{% for name in failed %}'{{ name }}'{% if not loop.last %}, {% endif %}{% endfor %}]::varchar[]
                as failed_nodes
    {%- else -%}
        select 1
    {%- endif -%}
{%- endmacro %}
