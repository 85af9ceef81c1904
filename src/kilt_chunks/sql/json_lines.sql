{#- The parsers of KILT's JSON lines, pages and task files alike, and their
    reject reasons, written once. Package data of kilt_chunks: the loader
    (kilt_chunks.build.loading) and the task reader (kilt_chunks.evaluation.provenance) render
    these macros with plain Jinja (kilt_chunks.sql_templates), so they work
    from a wheel; the dbt project loads this folder as a macro path
    (dbt_project.yml), so its hooks call the same macros. Nothing here uses
    dbt's context. -#}


{% macro unreadable_input_marker() -%}
    {#- Prefix of the reject reason of the one row that marks input that
        cannot be read at all (pages or task files): the model's post-hook
        (stop_on_unreadable_input) stops the build with the rest of it. -#}
    {{- 'unreadable input: ' -}}
{%- endmacro %}


{% macro json_line_reject_reason() -%}
    {#- The first CASE branches of every JSON-line parser, over the columns
        `line` (the raw line with its line end, NULL when unreadable),
        `read_error` (the line reader's reason: invalid UTF-8, too long) and
        `is_valid` (json_valid(line)): a line that is no JSON object. White
        space is trimmed only when the line is invalid: trim with a character
        set is slow, and valid lines (nearly all) need no such check. -#}
    when read_error is not null then read_error
            when line is null then 'empty line'
            when not is_valid then case
                when trim(line, ' ' || chr(9) || chr(10) || chr(13)) = ''
                    then 'empty line'
                else 'invalid JSON (truncated or malformed line)'
            end
            when json_type(line) <> 'OBJECT' then 'line is not a JSON object'
{%- endmacro %}


{% macro page_lines_parsed(source_file, lines) -%}
    {#- The raw page rows of one block of a KILT JSON lines file: `lines`
        names a relation of line and read_error (kilt_chunks.build.loading splits
        the lines, never a parser whose state machine could stop at one odd
        byte); `source_file` is the file as an SQL literal. Each line is
        parsed with an explicit structure (page_json_structure), so nothing
        is sampled or skipped; reject_reason is NULL for a usable page. -#}
    with lines as not materialized (
        select
            {{ source_file }} as source_file,
            -- With its line end (LF or CRLF), white space to JSON.
            line,
            read_error
        from {{ lines }}
    ),

    parsed as not materialized (
        -- Three parses per line (valid, typed transform, paragraph types); the
        -- rarer checks below parse again only for rows that reach them. JSON
        -- functions hold parse arenas per vector, so fewer means less memory.
        select
            source_file,
            line,
            read_error,
            json_valid(line) as is_valid,
            case when json_valid(line) then
                json_transform(line, '{{ page_json_structure() }}')
            end as page,
            case when json_valid(line) then json_type(line, '$.text[*]') end
                as paragraph_types
        from lines
    )

    select
        source_file,
        page._id as kilt_id,
        page.wikipedia_id,
        page.wikipedia_title,
        page.text,
        page.categories,
        page.history.pageid,
        page.history.parentid,
        page.history.revid,
        page.history.timestamp,
        page.history.url,
        page.wikidata_info.wikidata_id,
        case
            {{ json_line_reject_reason() }}
            {{ missing_or_mistyped("wikipedia_id", "not a string") }}
            {{ wikipedia_id_check("page.wikipedia_id") }}
            {{ missing_or_mistyped("wikipedia_title", "not a string") }}
            {{ missing_or_mistyped("text", "not a list") }}
            when len(paragraph_types) = 0 then 'text is empty (no title line)'
            when list_bool_or([t <> 'VARCHAR' for t in paragraph_types])
                then 'paragraph '
                    || (list_position(
                        [t <> 'VARCHAR' for t in paragraph_types], true
                    ) - 1)::varchar
                    || ' is '
                    || lower(paragraph_types[list_position(
                        [t <> 'VARCHAR' for t in paragraph_types], true
                    )])
                    || ', not a string'
            when {{ holds_noncharacters("page.text") }}
                then 'text holds U+FFFE or U+FFFF (noncharacters, reserved)'
        end as reject_reason
    from parsed
{%- endmacro %}


{% macro page_json_structure() -%}
    {#- The page fields read from each JSON line, with their types written
        out. History values are read as text so that a string `revid` does
        not stop a 35 GB load; the staging model parses them. -#}
    {
    "_id": "VARCHAR",
    "wikipedia_id": "VARCHAR",
    "wikipedia_title": "VARCHAR",
    "text": "VARCHAR[]",
    "categories": "VARCHAR",
    "history": {
        "pageid": "VARCHAR",
        "parentid": "VARCHAR",
        "revid": "VARCHAR",
        "timestamp": "VARCHAR",
        "url": "VARCHAR"
    },
    "wikidata_info": {"wikidata_id": "VARCHAR"}
}
{%- endmacro %}


{% macro hf_pages_parsed(relation) -%}
    {#- Rows of the facebook/kilt_wikipedia shape (Parquet, datasets) as raw
        pages: `relation` has that shape's columns and source_file. -#}
    select
        source_file,
        kilt_id,
        wikipedia_id,
        wikipedia_title,
        text.paragraph as text,
        categories,
        history.pageid::varchar as pageid,
        history.parentid::varchar as parentid,
        history.revid::varchar as revid,
        history.timestamp::varchar as timestamp,
        history.url::varchar as url,
        wikidata_info.wikidata_id::varchar as wikidata_id,
        case
            when wikipedia_id is null then 'missing wikipedia_id'
            {{ wikipedia_id_check("wikipedia_id") }}
            when wikipedia_title is null then 'missing wikipedia_title'
            when text.paragraph is null then 'missing text'
            when len(text.paragraph) = 0 then 'text is empty (no title line)'
            when list_bool_or([p is null for p in text.paragraph])
                then 'paragraph '
                    || (list_position([p is null for p in text.paragraph], true)
                        - 1)::varchar
                    || ' is null, not a string'
            when {{ holds_noncharacters("text.paragraph") }}
                then 'text holds U+FFFE or U+FFFF (noncharacters, reserved)'
        end as reject_reason
    from {{ relation }}
{%- endmacro %}


{% macro missing_or_mistyped(field, wrong_type) -%}
    {#- CASE branch of page_lines_parsed: a page field the typed transform
        left NULL, and why. -#}
    when page.{{ field }} is null
                then case
                    when coalesce(json_type(line, '$.{{ field }}'), 'NULL') = 'NULL'
                        then 'missing {{ field }}'
                    else '{{ field }} is {{ wrong_type }}'
                end
{%- endmacro %}


{% macro wikipedia_id_check(id_column) -%}
    {#- CASE branches rejecting an empty wikipedia_id or one holding white
        space (`id_column` is known not to be NULL here). A wikipedia_id must
        be usable as it is wherever it leaves the database (chunk ids, TREC
        run and qrels files, which split at white space): empty ids and ids
        holding any white space (Python's str.isspace() set, NBSP included)
        are rejected, so no two loaded ids are equal after trimming. -#}
    when {{ id_column }} = '' then 'wikipedia_id is empty'
            when regexp_matches({{ id_column }}, '[\t\n\x0b\x0c\r\x1c-\x1f\x{85}\p{Z}]')
                then 'wikipedia_id holds white space'
{%- endmacro %}


{% macro holds_noncharacters(text) -%}
    {#- Whether a list of paragraphs holds U+FFFF or U+FFFE: section assembly
        (int_sections_assembled) uses them as separators; MediaWiki never
        emits these noncharacters, and a page holding them is rejected
        rather than mis-split. -#}
    list_bool_or([contains(p, chr(65535)) or contains(p, chr(65534)) for p in {{ text }}])
{%- endmacro %}


{% macro create_task_lines_parser() -%}
    {#- Pre-hook of int_task_lines_read, run before the model's transaction:
        defines the DuckDB table macro kilt_task_lines_parsed(lines,
        task_name, task_file) in the build's database, which
        kilt_chunks.evaluation.provenance.read_task_lines calls, on a cursor of its own,
        on each block of task-file lines it reads (2,048 at a time). `lines`
        names a relation of line_number, line (the raw line) and read_error
        (the line reader's reason, e.g. invalid UTF-8); one row comes out per
        line, with its task, file, query id, input, typed output and
        reject_reason (NULL for a usable line; duplicate ids are marked
        afterwards, across blocks, by read_task_lines). The post-hook
        drop_task_lines_parser removes it. -#}
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
            {{ json_line_reject_reason() }}
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
