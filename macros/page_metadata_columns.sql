{% macro page_metadata_columns() -%}
    {#- The page fields every chunk carries, in output order (SPEC columns
        wikipedia_title .. wikidata_id; every one VARCHAR): the one list that
        int_sections_assembled (which carries them with each section) and
        kilt_chunks (which writes them) select. Adding a page field: the
        loader (kilt_chunks.build.loading), stg_kilt__pages, this list and the
        kilt_chunks contract. -#}
    {{ return([
        'wikipedia_title',
        'categories',
        'pageid',
        'parentid',
        'revid',
        'timestamp',
        'url',
        'wikidata_id',
    ]) }}
{%- endmacro %}
