{% macro drop_after_reload(record) -%}
    {#- Post-hook of base_kilt__pages: after a fresh load (not a reused one),
        drops the incremental tables built from an earlier load, through the
        adapter so that dbt's relation cache knows, and they are built anew
        from the new pages. A reused load keeps them: a rerun after a killed
        build does not cut the sections or measure the paragraphs again. -#}
    {%- if execute -%}
        {%- set reused = run_query('select is_reused from ' ~ record) -%}
        {%- if not reused.columns[0].values()[0] -%}
            {%- for database, identifier in [
                (record.database, 'int_sections_assembled'),
                (target.database, 'int_paragraphs_classified'),
            ] -%}
                {%- set relation = adapter.get_relation(
                    database, record.schema, identifier
                ) -%}
                {%- if relation is not none -%}
                    {%- do adapter.drop_relation(relation) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}
