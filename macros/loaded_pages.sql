{% macro loaded_pages() -%}
    {#- The table of loaded page rows that base_kilt__pages writes beside its
        own relation (kilt_chunks.build.page_load.PAGES_TABLE), referenced through
        the model so that dbt orders the build by it. Called in the model that
        reads it, its ref() makes that model depend on base_kilt__pages.
        A command that runs the SQL (show, run, build) when the table is gone
        (a successful build removed the scratch database) stops with one line
        saying how to get it back, instead of DuckDB's Catalog Error. -#}
    {%- set base = ref('base_kilt__pages') -%}
    {%- if execute and flags.WHICH in ('show', 'run', 'build') -%}
        {%- set found = run_query(
            "select count(*) from duckdb_tables() where database_name = '"
            ~ base.database ~ "' and schema_name = '" ~ base.schema
            ~ "' and table_name = 'kilt_pages'"
        ).columns[0].values()[0] -%}
        {%- if found == 0 -%}
            {{- exceptions.raise_compiler_error(
                "the loaded pages (" ~ base.database ~ "." ~ base.schema
                ~ ".kilt_pages) are gone: a successful build removes the scratch"
                ~ " database; run the whole build (dbt build), with"
                ~ " --vars '{keep_scratch: true}' to keep them after it"
            ) -}}
        {%- endif -%}
    {%- endif -%}
    {{ base.database }}.{{ base.schema }}.kilt_pages
{%- endmacro %}
