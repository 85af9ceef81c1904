{% macro remove_scratch() -%}
    {#- Detach the scratch database (loaded pages, sections) and delete its
        file (kilt_remove_file, registered by the plugin), unless
        keep_scratch. A post-hook of kilt_chunks, the last model reading it
        (check_scratch_readers_before holds that), so the models after it and
        the export never share the disk with it; and an on-run-end step
        (remove_scratch_after_success). -#}
    {%- if execute
        and not (var('keep_scratch') | string | lower in ('true', '1', 'yes')) -%}
        {%- set files = run_query(
            "select path from duckdb_databases() where database_name = 'kilt_scratch'"
        ).columns[0].values() -%}
        {%- if files | length > 0 -%}
            {%- do run_query('detach database if exists kilt_scratch') -%}
            {%- for name in files -%}
                {%- do run_query(
                    "select kilt_remove_file('" ~ (name | replace("'", "''")) ~ "')"
                ) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}


{% macro check_scratch_readers_before(last_reader) -%}
    {#- on-run-start hook (last_reader: kilt_chunks): stop before anything
        runs, naming the model and the fix, when a model that lives in the
        scratch database or refs one that does is not built before
        last_reader, whose post-hook removes the scratch database. The order
        comes from refs; a new reader without one would fail late, or read a
        removed table. -#}
    {%- if execute -%}
        {%- set last = graph.nodes['model.' ~ project_name ~ '.' ~ last_reader] -%}
        {%- set before = models_built_from(last.unique_id, upstream=true)
            | map(attribute='unique_id') | list -%}
        {%- set models = graph.nodes.values()
            | selectattr('resource_type', 'equalto', 'model') | list -%}
        {%- set scratch = models | selectattr('database', 'equalto', 'kilt_scratch')
            | map(attribute='unique_id') | list -%}
        {%- for node in models if node.unique_id != last.unique_id
            and node.unique_id not in before
            and (node.unique_id in scratch
                or node.depends_on.nodes | select('in', scratch) | list) -%}
            {%- do exceptions.raise_compiler_error(
                "model " ~ node.name ~ " reads the scratch database but is not"
                ~ " built before " ~ last.name ~ ", whose post-hook removes it:"
                ~ " add `-- depends_on: {{ ref('" ~ node.name ~ "') }}` to "
                ~ last.original_file_path
            ) -%}
        {%- endfor -%}
    {%- endif -%}
    select 1
{%- endmacro %}


{% macro check_scratch_kept(loader='base_kilt__pages') -%}
    {#- on-run-start hook, before anything is recorded: stop in one line, naming
        the model and what to run first, when a selected model reads a table of
        the scratch database that this build does not make and that is gone (a
        successful build deletes the scratch database unless keep_scratch:
        true), e.g. `--select int_sections_chunked+` after a plain build. The
        loader's own table is checked by loaded_pages. A refused build changes
        nothing, so `kilt-chunks summary` still reports the build the database
        holds. -#}
    {%- if execute and flags.WHICH in ('build', 'run') -%}
        {%- set selected = selected_resources | list -%}
        {%- set scratch = graph.nodes.values()
            | selectattr('resource_type', 'equalto', 'model')
            | selectattr('database', 'equalto', 'kilt_scratch') | list -%}
        {%- set present = run_query(
            "select table_name from duckdb_tables() where database_name = 'kilt_scratch'"
            ~ " union all select view_name from duckdb_views()"
            ~ " where database_name = 'kilt_scratch'"
        ).columns[0].values() -%}
        {%- for read in scratch if read.name != loader
            and read.unique_id not in selected
            and (read.alias or read.name) not in present -%}
            {%- set readers = [] -%}
            {%- for unique_id in selected if unique_id in graph.nodes
                and read.unique_id in graph.nodes[unique_id].depends_on.nodes -%}
                {%- do readers.append(graph.nodes[unique_id].name) -%}
            {%- endfor -%}
            {%- if readers -%}
                {%- do exceptions.raise_compiler_error(
                    (readers | sort | join(", ")) ~ (" reads " if readers | length == 1 else " read ")
                    ~ read.name ~ ", which is gone: a build deletes its scratch database ("
                    ~ target.path ~ ".scratch) when it ends, unless keep_scratch: true."
                    ~ " Run the whole build once with --vars '{keep_scratch: true}'"
                    ~ " (it reads the input again), then this command"
                ) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    select 1
{%- endmacro %}
