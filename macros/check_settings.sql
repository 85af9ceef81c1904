{% macro check_settings() -%}
    {#- on-run-start hook (after record_build_run): stops the build, before any input is
        read, when a variable given with --vars is unknown (naming the
        closest known one) or a variable's value is not allowed; one line per
        problem (kilt_chunks.settings). -#}
    {%- if execute -%}
        {%- set given = invocation_args_dict.get('vars') or {} -%}
        {%- set names = run_query('select kilt_settings_names()')
            .columns[0].values()[0].split(',') -%}
        {%- set values = {} -%}
        {%- for name in names -%}
            {%- do values.update({name: var(name, none)}) -%}
        {%- endfor -%}
        {%- set problems = run_query(
            "select kilt_settings_problems('"
            ~ (tojson(given if given is mapping else {}) | replace("'", "''")) ~ "', '"
            ~ (tojson(values) | replace("'", "''")) ~ "')"
        ).columns[0].values()[0] -%}
        {%- if problems -%}
            {%- do exceptions.raise_compiler_error(
                "kilt-chunks settings (--vars):\n  " ~ (problems | replace("\n", "\n  "))
            ) -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}
