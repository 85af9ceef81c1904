-- In the scratch database (removed after a successful build), written with
-- ZSTD compression (hooks: scratch_compression). Incremental only to skip the
-- work on a rerun over a reused load (base_kilt__pages drops this table after
-- a fresh load), e.g. after a build killed in chunking.
{{ config(
    materialized='incremental',
    database='kilt_scratch',
    pre_hook="{{ scratch_compression() }}",
    post_hook="{{ scratch_compression(false) }}"
) }}

with

pages as (

    select * from {{ ref('stg_kilt__pages') }}

),

loaded_pages as (

    -- Page metadata rides along with every section, so kilt_chunks needs no
    -- join (a join would neither keep the order nor stay small on the dump).
    select
        page_order,
        wikipedia_id,
        {% for column in page_metadata_columns() -%}
            {{ column }},
        {% endfor -%}
        paragraphs

    from pages

    where {{ is_new_loaded_page('pages.page_order') }}

),

page_parts as (

    -- One pass over each page (rules 1-3): paragraphs after the title line are
    -- joined, bullet markers removed, and every header paragraph becomes
    -- U+FFFF + header + U+FFFE, so splitting at U+FFFF gives the lead, then one
    -- part per header. The loader rejects pages holding these noncharacters
    -- (MediaWiki never emits them). No sort, no join, no per-section copy.
    select
        loaded_pages.* exclude (paragraphs),
        len(paragraphs) as num_paragraphs,
        list_filter(
            [
                case
                    when position > 1 and {{ has_marker('paragraph', 'header') }}
                        then position
                    else 0
                end
                for paragraph, position in paragraphs
            ],
            lambda position: position > 0
        ) as header_positions,
        -- Per paragraph after the title: its code points in the section text
        -- and whether it is a bullet (its text starts after the 10-character
        -- marker), coded as 2 x length + is_bullet and written as text split
        -- like the parts below (at each header), so the chunking step can
        -- give each chunk its KILT span without a join, and no lambda below
        -- captures a page-wide list (DuckDB copies a captured list for every
        -- element: quadratic in the number of sections).
        string_split(
            array_to_string(
                list_transform(
                    paragraphs[2:],
                    lambda paragraph: case
                        when {{ has_marker('paragraph', 'header') }} then chr(65535)
                        when {{ has_marker('paragraph', 'bullet') }}
                            then (
                                2 * (length(paragraph) - {{ marker_length('bullet') }})
                                + 1
                            )::varchar || ','
                        else (2 * length(paragraph))::varchar || ','
                    end
                ),
                ''
            ),
            chr(65535)
        ) as part_paragraph_codes,
        string_split(
            array_to_string(
                list_transform(
                    paragraphs[2:],
                    lambda paragraph: case
                        when {{ has_marker('paragraph', 'header') }}
                            then
                                chr(65535)
                                || {{ without_marker('paragraph', 'header') }}
                                || chr(65534)
                        when {{ has_marker('paragraph', 'bullet') }}
                            then {{ without_marker('paragraph', 'bullet') }}
                        else paragraph
                    end
                ),
                ''
            ),
            chr(65535)
        ) as parts

    from loaded_pages

),

sections_listed as (

    -- Part k (1-based) is the lead for k = 1, else the section opened by the
    -- (k-1)-th header; paragraph ids are 0-based KILT indexes of its first
    -- and last text paragraph. The lists are zipped, never captured (see
    -- part_paragraph_codes).
    select
        page_parts.* exclude (
            num_paragraphs, header_positions, parts, part_paragraph_codes
        ),
        list_transform(
            list_zip(
                parts,
                part_paragraph_codes,
                list_prepend(1, header_positions),
                list_append(header_positions, num_paragraphs + 1),
                range(1, len(parts) + 1)
            ),
            lambda part: {
                'header': case
                    when part[5] > 1 then split_part(part[1], chr(65534), 1)
                end,
                'section_text': case
                    when part[5] = 1 then part[1]
                    else split_part(part[1], chr(65534), 2)
                end,
                'start_paragraph_id': part[3],
                'end_paragraph_id': part[4] - 2,
                'paragraph_codes': part[2]
            }
        ) as sections

    from page_parts

),

sections_kept as (

    -- Rule 4: blank sections are dropped and take no number.
    select
        sections_listed.* exclude (sections),
        list_filter(
            sections, lambda section: not {{ is_blank('section.section_text') }}
        ) as sections

    from sections_listed

),

sections_numbered as (

    select
        sections_kept.* exclude (sections),
        len(sections)::integer as num_sections,
        unnest(range(len(sections)))::integer as section_order,
        unnest(sections) as section

    from sections_kept

),

sections_decoded as (

    -- Each section's paragraph codes (see part_paragraph_codes), parsed once.
    select
        sections_numbered.*,
        string_split(rtrim(section.paragraph_codes, ','), ',')::integer[]
            as paragraph_codes

    from sections_numbered

),

sections_parsed as (

    select
        sections_decoded.* exclude (section, paragraph_codes),
        case
            when section.header is null then []::varchar[]
            else {{ kilt_section_path("regexp_replace(section.header, '\\n$', '')") }}
        end as section_path,
        section.section_text,
        section.start_paragraph_id::integer as start_paragraph_id,
        section.end_paragraph_id::integer as end_paragraph_id,
        -- Paragraph ids p..q are the codes of this section, in order.
        list_transform(paragraph_codes, lambda code: code // 2)::integer[]
            as paragraph_text_lengths,
        list_transform(paragraph_codes, lambda code: code % 2 * 10)::integer[]
            as paragraph_start_characters

    from sections_decoded

),

sections_titled as (

    -- Stored in page and section order without a sort: every step above keeps
    -- the row order of the one-table staging select (the unnest emits a
    -- page's sections in list order). Chunking streams and resumes in this
    -- order and checks it; kilt_chunks pairs its rows with the chunks by
    -- position.
    select
        wikipedia_id,
        page_order,
        section_order,
        num_sections,
        section_path,
        {{ section_title('wikipedia_title', 'section_path') }} as title,
        section_text,
        start_paragraph_id,
        end_paragraph_id,
        paragraph_text_lengths,
        paragraph_start_characters,
        {{ page_metadata_columns() | join(',\n        ') }}

    from sections_parsed

)

select * from sections_titled
