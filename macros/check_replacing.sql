{% macro check_replacing() -%}
    {#- on-run-start hook (after check_database_records): stops the build,
        before any input is read, in one line, when it would replace the build
        of another input (the database's kilt_build_info, the export folder's
        owner file) without replace_other_input: true; then claims the export
        folder for this database, so that a second database's build started
        meanwhile is refused at its start (kilt_chunks.build.replacing). -#}
    {%- if execute and flags.WHICH in ('build', 'run') -%}
        {%- set selected = [] -%}
        {%- for unique_id in selected_resources -%}
            {%- do selected.append(unique_id.split('.')[-1]) -%}
        {%- endfor -%}
        {%- set database_input = '' -%}
        {%- set found = run_query(
            "select count(*) from duckdb_tables() where table_name = 'kilt_build_info'"
            ~ " and database_name = current_database()"
        ).columns[0].values()[0] -%}
        {%- if found > 0 -%}
            {%- set rows = run_query(
                "select kilt_path from " ~ adapter.quote(target.database) ~ "."
                ~ adapter.quote(target.schema) ~ ".kilt_build_info"
            ).rows -%}
            {%- set database_input = rows[0][0] if rows | length else '' -%}
        {%- endif -%}
        {%- set arguments = {
            'kilt_path': var('kilt_path') | string,
            'database_input': database_input or '',
            'export_dir': var('export_dir') | string,
            'replace': (var('replace_other_input') | string | lower) in ('true', '1'),
            'checks_input': 'base_kilt__pages' in selected or 'kilt_build_info' in selected,
            'writes_export': 'kilt_export' in selected or 'kilt_provenance_qrels' in selected,
        } -%}
        {%- set problems = run_query(
            "select kilt_replacing_problems('" ~ (tojson(arguments) | replace("'", "''"))
            ~ "', (select path from duckdb_databases()"
            ~ " where database_name = current_database()))"
        ).columns[0].values()[0] -%}
        {%- if problems -%}
            {%- do exceptions.raise_compiler_error(
                "kilt-chunks: " ~ (problems | replace("\n", "\n  "))
            ) -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}
