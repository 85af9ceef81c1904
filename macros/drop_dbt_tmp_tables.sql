{% macro drop_dbt_tmp_tables(relation) -%}
    {#- dbt-duckdb's incremental Python materialization leaves its
        <model>__dbt_tmp<timestamp> table behind (in the model's own database,
        the scratch one for base_kilt__pages); each holds a full copy. -#}
    {%- if execute -%}
        {%- set leftovers = run_query(
            "select table_name from duckdb_tables() where database_name = '"
            ~ relation.database ~ "' and schema_name = '"
            ~ relation.schema ~ "' and starts_with(table_name, '"
            ~ relation.identifier ~ "__dbt_tmp')"
        ) -%}
        {%- for row in leftovers -%}
            {%- do run_query(
                'drop table if exists ' ~ relation.database ~ '.'
                ~ relation.schema ~ '."' ~ row[0] ~ '"'
            ) -%}
        {%- endfor -%}
    {%- endif -%}
    select 1
{%- endmacro %}
