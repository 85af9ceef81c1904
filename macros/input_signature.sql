{% macro record_sections_input() -%}
    {#- Post-hook of int_sections_assembled: remember which load of raw.pages
        (its input_signature) the sections were built from. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set pages = graph.sources['source.' ~ project_name ~ '.kilt.pages'].relation_name -%}
    create or replace table {{ this.database }}.{{ this.schema }}.kilt_sections_input as
    select
        (select any_value(input_signature) from {{ pages }}) as input_signature,
        -- New on every build of the sections; int_sections_chunked records the
        -- one it chunked (assert_sections_chunked compares them).
        uuid()::varchar as sections_build_id
{%- endmacro %}


{% macro assert_input_unchanged() -%}
    {#- Pre-hook of the models that read staging (or the paragraph view) beside
        tables built from an earlier load: dbt compile, show and docs generate
        reload raw.pages from kilt_path, and if the input changed since
        int_sections_assembled was built, a partial build would mix the two
        inputs. Stops the build instead. No record yet (a database built
        before this check): nothing to compare. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set pages = graph.sources['source.' ~ project_name ~ '.kilt.pages'].relation_name -%}
    {%- set record = adapter.get_relation(this.database, this.schema, 'kilt_sections_input') -%}
    {%- if record is none -%}
        select 1
    {%- else -%}
        {{ stop_unless_equal(
            'select any_value(input_signature) from ' ~ record,
            'select any_value(input_signature) from ' ~ pages,
            'raw.pages was reloaded from a changed input (dbt compile, show and'
            ~ ' docs generate reload kilt_path) since int_sections_assembled'
            ~ ' was built from the old one: run the whole build (dbt build),'
            ~ ' not a partial one'
        ) }}
    {%- endif -%}
{%- endmacro %}


{% macro assert_sections_chunked() -%}
    {#- Pre-hook of kilt_chunks, which pairs int_sections_assembled with
        int_sections_chunked by position: stops the build when the sections
        were rebuilt (e.g. `dbt build --select int_sections_assembled`) after
        the chunks, which would cut the new section texts at the old chunk
        offsets. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set sections = adapter.get_relation(this.database, this.schema, 'kilt_sections_input') -%}
    {%- set chunked = adapter.get_relation(this.database, this.schema, 'kilt_chunked_sections') -%}
    {%- if sections is none or chunked is none -%}
        select 1
    {%- else -%}
        {{ stop_unless_equal(
            'select any_value(sections_build_id) from ' ~ sections,
            'select any_value(sections_build_id) from ' ~ chunked,
            'int_sections_assembled was rebuilt after int_sections_chunked: the'
            ~ ' chunks belong to the sections of an earlier build; run the whole'
            ~ ' build (dbt build), or at least --select int_sections_chunked+'
        ) }}
    {%- endif -%}
{%- endmacro %}


{% macro stop_unless_equal(left_query, right_query, message) -%}
    {#- A statement that fails with `message` unless the two one-value queries
        give the same value (NULLs equal). -#}
    select case
        when ({{ left_query }}) is distinct from ({{ right_query }})
        then error('{{ message | replace("'", "''") }}')
    end
{%- endmacro %}
