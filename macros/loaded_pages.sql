{% macro loaded_pages() -%}
    {#- The table of loaded page rows that base_kilt__pages writes beside its
        own relation (kilt_chunks.page_load.PAGES_TABLE), referenced through
        the model so that dbt orders the build by it. Called in the model that
        reads it, its ref() makes that model depend on base_kilt__pages. -#}
    {%- set base = ref('base_kilt__pages') -%}
    {{ base.database }}.{{ base.schema }}.kilt_pages
{%- endmacro %}
