{% macro create_task_lines_parser() -%}
    {#- Pre-hook of int_task_lines_read, run before the model's transaction:
        defines the DuckDB table macro kilt_task_lines_parsed(lines,
        task_name, task_file) in the build's database, which
        kilt_chunks.provenance.read_task_lines calls, on a cursor of its own,
        on each block of task-file lines it reads (2,048 at a time). `lines`
        names a relation of line_number, line (the raw line) and read_error
        (the line reader's reason, e.g. invalid UTF-8); one row comes out per
        line, with its task, file, query id, input, typed output and
        reject_reason (NULL for a usable line; duplicate ids are marked
        afterwards, across blocks, by read_task_lines). The post-hook
        drop_task_lines_parser removes it. Plain Jinja renders this file too
        (read_task_lines outside a dbt build), so it uses no dbt context. -#}
    create or replace macro kilt_task_lines_parsed(
        lines, task_name, task_file
    ) as table
    {{ task_lines_parsed() }}
{%- endmacro %}


{% macro drop_task_lines_parser() -%}
    {#- Post-hook of int_task_lines_read: the build's database keeps no macro
        of create_task_lines_parser. -#}
    drop macro table if exists kilt_task_lines_parsed
{%- endmacro %}


{% macro task_lines_parsed() -%}
    {#- The query of kilt_task_lines_parsed. A line is parsed with an explicit
        structure (written out, never sampled; other keys such as `meta` are
        ignored); a number given where text is expected (an integer id or
        wikipedia_id) becomes its decimal text, and the checks below reject
        the other type mismatches. -#}
    {%- set id_types = "('VARCHAR', 'BIGINT', 'UBIGINT')" -%}
    {%- set offsets = [] -%}
    {%- for key in [
        'start_paragraph_id', 'start_character', 'end_paragraph_id', 'end_character'
    ] -%}
        {%- set _ = offsets.append(
            "coalesce(json_type(line, '$.output[*].provenance[*]." ~ key ~ "'), [])"
        ) -%}
    {%- endfor -%}
    with parsed as not materialized (
        select
            line_number,
            line,
            read_error,
            json_valid(line) as is_valid
        from query_table(lines)
    ),

    typed as not materialized (
        select
            *,
            case when is_valid and json_type(line) = 'OBJECT' then
                json_transform(line, '{
                    "id": "VARCHAR",
                    "input": "VARCHAR",
                    "output": [{
                        "answer": "VARCHAR",
                        "provenance": [{
                            "wikipedia_id": "VARCHAR",
                            "title": "VARCHAR",
                            "section": "VARCHAR",
                            "start_paragraph_id": "BIGINT",
                            "start_character": "BIGINT",
                            "end_paragraph_id": "BIGINT",
                            "end_character": "BIGINT",
                            "bleu_score": "DOUBLE"
                        }]
                    }]
                }')
            end as parsed_line
        from parsed
    )

    select
        task_name as task,
        task_file as source_file,
        line_number,
        -- KILT compares ids as str(id).strip(): the id is trimmed of white
        -- space at both ends (Python's str.strip set); white space inside an
        -- id (AIDA's "947testa CRICKET") is kept.
        case when parsed_line is not null then {{ kilt_strip('parsed_line.id') }} end
            as query_id,
        parsed_line.input as input,
        parsed_line.output as output,
        case
            when read_error is not null then read_error
            when line is null or trim(line, ' ' || chr(9) || chr(10) || chr(13)) = ''
                then 'empty line'
            when not is_valid then 'invalid JSON (truncated or malformed line)'
            when json_type(line) <> 'OBJECT' then 'line is not a JSON object'
            when coalesce(json_type(line, '$.id'), 'NULL') = 'NULL' then 'missing id'
            when json_type(line, '$.id') not in {{ id_types }}
                then 'id is ' || lower(json_type(line, '$.id')) || ', not a string'
            when {{ kilt_strip('parsed_line.id') }} = '' then 'id is empty'
            when coalesce(json_type(line, '$.input'), 'NULL') = 'NULL'
                then 'missing input'
            when json_type(line, '$.input') <> 'VARCHAR'
                then 'input is ' || lower(json_type(line, '$.input'))
                    || ', not a string'
            when coalesce(json_type(line, '$.output'), 'NULL') not in ('ARRAY', 'NULL')
                then 'output is ' || lower(json_type(line, '$.output'))
                    || ', not a list'
            {{ first_bad_type(
                "json_type(line, '$.output[*]')", "('OBJECT')",
                'an output', 'JSON object'
            ) }}
            {{ first_bad_type(
                "json_type(line, '$.output[*].answer')", "('VARCHAR')",
                'an output answer', 'string'
            ) }}
            {{ first_bad_type(
                "json_type(line, '$.output[*].provenance')", "('ARRAY', 'NULL')",
                'an output provenance', 'list'
            ) }}
            {{ first_bad_type(
                "json_type(line, '$.output[*].provenance[*]')", "('OBJECT')",
                'a provenance entry', 'JSON object'
            ) }}
            {#- A null wikipedia_id is read as KILT's scorer reads it (that
                entry is rejected by the provenance checks, 'no wikipedia_id'). -#}
            {{ first_bad_type(
                "json_type(line, '$.output[*].provenance[*].wikipedia_id')",
                "('VARCHAR', 'BIGINT', 'UBIGINT', 'NULL')",
                'a provenance wikipedia_id', 'string'
            ) }}
            {{ first_bad_type(
                '(' ~ offsets | join(' || ') ~ ')', "('BIGINT', 'UBIGINT', 'NULL')",
                'a provenance offset', 'whole number'
            ) }}
        end as reject_reason
    from typed
{%- endmacro %}


{% macro first_bad_type(types, allowed, what, kind) -%}
    {#- CASE branch of task_lines_parsed: the first element of the list
        `types` (JSON type names) that is not in `allowed` names the problem,
        e.g. "a provenance offset is varchar, not a whole number". -#}
    when len([t for t in {{ types }} if t not in {{ allowed }}]) > 0
        then '{{ what }} is '
            || lower([t for t in {{ types }} if t not in {{ allowed }}][1])
            || ', not a {{ kind }}'
{%- endmacro %}


{% macro kilt_strip(expression) -%}
    {#- `expression` with white space removed at both ends as Python's
        str.strip() does (KILT's str(id).strip()): ASCII white space, the
        separators \x1c-\x1f, U+0085 and the Unicode space separators. -#}
    regexp_replace(
        {{ expression }},
        '^[\t-\r\x1c-\x1f\x{85}\p{Z}]+|[\t-\r\x1c-\x1f\x{85}\p{Z}]+$',
        '',
        'g'
    )
{%- endmacro %}
