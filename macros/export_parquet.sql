{% macro export_parquet(relation, build_info_relation) -%}
    {#- Into <export_dir>/<model name>/ (kilt_chunks/ is
        kilt_chunks.build_info.CHUNKS_EXPORT_SUBDIR; export_dir is created by
        the kilt_build_info model): overwrite deletes every file below the
        target folder, so each export has a folder of its own. -#}
    {%- set export_dir = var('export_dir') -%}
    {%- if export_dir and execute -%}
        {%- set info = run_query('select * from ' ~ build_info_relation) -%}
        {%- set pairs = [] -%}
        {%- for column in info.column_names -%}
            {%- do pairs.append(column ~ ": '" ~ (info.columns[column].values()[0] | replace("'", "''")) ~ "'") -%}
        {%- endfor -%}
        copy (select * from {{ relation }}) to '{{ export_dir }}/{{ relation.identifier }}' (
            format parquet,
            compression zstd,
            row_group_size 100000,
            row_groups_per_file {{ [1, (var('export_rows_per_file') | int) // 100000] | max }},
            file_size_bytes '256MB',
            filename_pattern '{{ relation.identifier }}_{i}',
            overwrite true,
            kv_metadata { {{ pairs | join(', ') }} }
        )
    {%- else -%}
        select 1
    {%- endif -%}
{%- endmacro %}
