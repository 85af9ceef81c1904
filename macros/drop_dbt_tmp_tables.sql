{% macro drop_dbt_tmp_tables(relation) -%}
    {#- dbt-duckdb's incremental Python materialization leaves its
        <model>__dbt_tmp<timestamp> table behind, in the build's main database
        whatever the model's own (the scratch one for base_kilt__pages); each
        holds a full copy. Dropped wherever they are. -#}
    {%- if execute -%}
        {%- set leftovers = run_query(
            "select database_name, table_name from duckdb_tables()"
            ~ " where schema_name = '" ~ relation.schema
            ~ "' and starts_with(table_name, '" ~ relation.identifier ~ "__dbt_tmp')"
        ) -%}
        {%- for row in leftovers -%}
            {%- do run_query(
                'drop table if exists "' ~ row[0] ~ '".' ~ relation.schema
                ~ '."' ~ row[1] ~ '"'
            ) -%}
        {%- endfor -%}
    {%- endif -%}
    select 1
{%- endmacro %}
