{% macro record_build_run(results=none) -%}
    {#- One row in kilt_build_run describing the last `dbt build` or `dbt run`,
        read by `kilt-chunks summary`. on-run-start (no results): the run
        started and has not finished. on-run-end (the last hook, after every
        node, the export model kilt_export included): when it ended, whether
        every node succeeded, which failed, whether it chunked (so the
        summary gives MB/s only for a run that did). A killed build keeps the row of
        its start, so the summary never shows an earlier build's figures as
        this one's. -#}
    {%- if execute and flags.WHICH in ('build', 'run') -%}
        {%- if results is none -%}
            {%- set failed = [] -%}
            {%- set succeeded = [] -%}
        {%- else -%}
            {%- set failed = results
                | selectattr('status', 'in', ['error', 'fail', 'runtime error'])
                | map(attribute='node') | map(attribute='name') | list -%}
            {%- set succeeded = results
                | selectattr('status', 'equalto', 'success')
                | map(attribute='node') | map(attribute='name') | list -%}
        {%- endif -%}
        {%- set run_table = adapter.quote(target.database) ~ '.'
            ~ adapter.quote(target.schema) ~ '.kilt_build_run' %}
        create or replace table {{ run_table }} as
        select
            '{{ invocation_id }}' as invocation_id,
            '{{ run_started_at.isoformat() }}'::timestamptz as started_at,
            {{ 'null::timestamptz' if results is none else 'now()' }} as finished_at,
            {{ 'null::double' if results is none else "epoch(now() - '" ~ run_started_at.isoformat() ~ "'::timestamptz)" }}
                as wall_seconds,
            {{ 'true' if results is not none and failed | length == 0 else 'false' }} as is_complete,
            [{% for name in failed %}'{{ name }}'{% if not loop.last %}, {% endif %}{% endfor %}]::varchar[]
                as failed_nodes,
            {{ 'true' if 'int_sections_chunked' in succeeded else 'false' }} as is_chunking_run
    {%- else -%}
        select 1
    {%- endif -%}
{%- endmacro %}
