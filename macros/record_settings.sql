{% macro record_settings(values) -%}
    {#- post-hook of a model whose table depends on settings: replaces the
        model's rows of kilt_build_settings with `values` (setting -> value),
        the values this run built it with, one row per setting (value as
        JSON). Later builds read them (recorded_setting, and the chunking's
        ChunkingSettings.for_build) and are checked against them
        (check_database_records); kilt_chunks.build.records. -#}
    {%- set table = adapter.quote(target.database) ~ '.' ~ adapter.quote(target.schema)
        ~ '.kilt_build_settings' -%}
    create table if not exists {{ table }} (
        model varchar, setting varchar, value varchar, invocation_id varchar,
        recorded_at timestamptz
    );
    delete from {{ table }} where model = '{{ this.identifier }}';
    {% if values -%}
    insert into {{ table }} values
    {%- for name, value in values.items() %}
        ('{{ this.identifier }}', '{{ name }}',
            '{{ tojson(value) | replace("'", "''") }}', '{{ invocation_id }}', now())
        {{- "," if not loop.last }}
    {%- endfor %}
    {%- endif %}
{%- endmacro %}


{% macro record_chunking_settings() -%}
    {#- post-hook of int_sections_chunked: records the settings the chunking
        ran with, every field of kilt_chunks' ChunkingSettings, as the
        checkpoint's state holds them (kilt_chunking_state.settings, JSON),
        so nothing lists the settings here. -#}
    {%- set values = {} -%}
    {%- if execute -%}
        {%- set found = run_query(
            "select settings from " ~ adapter.quote(target.database) ~ "."
            ~ adapter.quote(target.schema) ~ ".kilt_chunking_state"
        ) -%}
        {%- set values = fromjson(found.columns[0].values()[0]) -%}
    {%- endif -%}
    {{ record_settings(values) }}
{%- endmacro %}


{% macro recorded_setting(name) -%}
    {#- The value of setting `name` that the database's tables were built with
        (kilt_build_settings, recorded by record_settings), else var(name): a
        partial build computes with the values of the tables it reads. -#}
    {%- set value = var(name) -%}
    {%- if execute -%}
        {%- set found = run_query(
            "select value from " ~ adapter.quote(target.database) ~ "."
            ~ adapter.quote(target.schema) ~ ".kilt_build_settings where setting = '"
            ~ name ~ "' order by recorded_at desc limit 1"
        ) if recorded_settings_exist() else none -%}
        {%- if found is not none and found.rows | length -%}
            {%- set value = fromjson(found.columns[0].values()[0]) -%}
        {%- endif -%}
    {%- endif -%}
    {{- return(value) -}}
{%- endmacro %}


{% macro recorded_settings_exist() -%}
    {#- Whether the database has the table kilt_build_settings. -#}
    {%- set found = run_query(
        "select count(*) from duckdb_tables() where table_name = 'kilt_build_settings'"
        ~ " and database_name = current_database()"
    ) -%}
    {{- return(found.columns[0].values()[0] > 0) -}}
{%- endmacro %}


{% macro check_database_records() -%}
    {#- on-run-start hook (after check_settings): stops the build, before any
        input is read, when a value given with --vars contradicts a setting
        recorded by a model this run does not rebuild, or when the run writes
        into an export folder that another database's build wrote; one line
        per problem (kilt_chunks.build.records). -#}
    {%- if execute and flags.WHICH in ('build', 'run') -%}
        {%- set given = invocation_args_dict.get('vars') or {} -%}
        {%- set recorded = [] -%}
        {%- if recorded_settings_exist() -%}
            {%- set rows = run_query(
                "select model, setting, value from " ~ adapter.quote(target.database)
                ~ "." ~ adapter.quote(target.schema) ~ ".kilt_build_settings"
            ).rows -%}
            {%- for row in rows -%}
                {%- do recorded.append(
                    {'model': row[0], 'setting': row[1], 'value': row[2]}
                ) -%}
            {%- endfor -%}
        {%- endif -%}
        {%- set rebuilt = [] -%}
        {%- for unique_id in selected_resources -%}
            {%- do rebuilt.append(unique_id.split('.')[-1]) -%}
        {%- endfor -%}
        {%- set problems = run_query(
            "select kilt_recorded_settings_problems('"
            ~ (tojson(given if given is mapping else {}) | replace("'", "''")) ~ "', '"
            ~ (tojson(recorded) | replace("'", "''")) ~ "', '"
            ~ (tojson(rebuilt) | replace("'", "''")) ~ "')"
        ).columns[0].values()[0] -%}
        {%- if 'kilt_export' in rebuilt or 'kilt_provenance_qrels' in rebuilt -%}
            {%- set owner = run_query(
                "select kilt_export_owner_problem('"
                ~ (var('export_dir') | string | replace("'", "''"))
                ~ "', (select path from duckdb_databases()"
                ~ " where database_name = current_database()))"
            ).columns[0].values()[0] -%}
            {%- set problems = [problems, owner] | select | join('\n') -%}
        {%- endif -%}
        {%- if problems -%}
            {%- do exceptions.raise_compiler_error(
                "kilt-chunks settings of this database:\n  " ~ (problems | replace("\n", "\n  "))
            ) -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}
