{% macro export_after_build(results) -%}
    {#- on-run-end hook: exports kilt_chunks and kilt_chunk_spans as Parquet
        (macro export_parquet), each when this run built it and nothing
        failed, after the scratch database is removed. -#}
    {%- if execute and var('export_dir') -%}
        {%- set failed = results | selectattr('status', 'in', ['error', 'fail', 'runtime error']) | list -%}
        {%- set built = results | selectattr('status', 'equalto', 'success')
            | map(attribute='node') | selectattr('resource_type', 'equalto', 'model')
            | map(attribute='name') | list -%}
        {%- if failed | length == 0 -%}
            {%- set info = api.Relation.create(
                database=target.database, schema=target.schema, identifier='kilt_build_info'
            ) -%}
            {%- for model in ['kilt_chunks', 'kilt_chunk_spans'] if model in built -%}
                {%- set relation = api.Relation.create(
                    database=target.database, schema=target.schema, identifier=model
                ) -%}
                {%- do run_query(export_parquet(relation, info)) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}
