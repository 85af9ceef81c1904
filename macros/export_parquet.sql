{% macro export_parquet(relation, build_info_relation) -%}
    {#- Into <export_dir>/<model name>/ (kilt_chunks/ is
        kilt_chunks.build_info.CHUNKS_EXPORT_SUBDIR; export_dir is created, and
        checked to be a folder, by kilt_prepare_export_dir, a function the
        kilt_chunks.dbt_plugin registers): overwrite deletes every file below the
        target folder, so each export has a folder of its own. Written into
        <export_dir>/.<model>.partial/ and moved into place when complete
        (kilt_move_into_place), so a failed or killed export leaves the
        previous one whole. -#}
    {%- set export_dir = var('export_dir') -%}
    {%- if export_dir and execute -%}
        {%- set info = run_query('select * from ' ~ build_info_relation) -%}
        {%- set pairs = [] -%}
        {%- for column in info.column_names -%}
            {%- do pairs.append(column ~ ": '" ~ (info.columns[column].values()[0] | replace("'", "''")) ~ "'") -%}
        {%- endfor -%}
        {%- set escaped_dir = export_dir | replace("'", "''") %}
        select kilt_prepare_export_dir('{{ escaped_dir }}');
        copy (select * from {{ relation }}) to '{{ escaped_dir }}/.{{ relation.identifier }}.partial' (
            format parquet,
            compression zstd,
            {#- DuckDB writes whole vectors: no row group below 2,048 rows. #}
            {%- set rows_per_file = [2048, var('export_rows_per_file') | int] | max %}
            {%- set row_group_rows = [100000, rows_per_file] | min %}
            row_group_size {{ row_group_rows }},
            row_groups_per_file {{ [1, rows_per_file // row_group_rows] | max }},
            file_size_bytes '256MB',
            filename_pattern '{{ relation.identifier }}_{i}',
            overwrite true,
            kv_metadata { {{ pairs | join(', ') }} }
        );
        select kilt_move_into_place(
            '{{ escaped_dir }}/.{{ relation.identifier }}.partial',
            '{{ escaped_dir }}/{{ relation.identifier }}'
        )
    {%- else -%}
        select 1
    {%- endif -%}
{%- endmacro %}
