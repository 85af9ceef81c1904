"""Chunk spans: every chunk of the sample is found again from its KILT span."""

from __future__ import annotations

import pytest
from llama_index.core.utils import get_tokenizer

from conftest import SAMPLE_JSONL, Build, read_pages
from kilt_chunks.spans import locate_chunks

BULLET = "BULLET::::"


def text_from_kilt_span(
    paragraphs: list[str], sp: int, sc: int, ep: int, ec: int
) -> str:
    """KILT text from (sp, sc) to (ep, ec), end exclusive, as a section has it.

    A paragraph after the first contributes from its text start: past a leading
    bullet marker, which section text (SPEC rule 3) does not have.
    """
    pieces = []
    for paragraph_id in range(sp, ep + 1):
        paragraph = paragraphs[paragraph_id]
        if paragraph_id == sp:
            start = sc
        else:
            start = len(BULLET) if paragraph.startswith(BULLET) else 0
        end = ec if paragraph_id == ep else len(paragraph)
        pieces.append(paragraph[start:end])
    return "".join(pieces)


def test_locate_chunks_scans_forward_from_previous_end() -> None:
    text = "Aa. Bb.\nAa. Cc.\n- item\n"
    chunks = ["Aa. Bb.", "Aa. Cc.", "- item"]
    spans = locate_chunks(text, chunks)
    assert spans == [(0, 7), (8, 15), (16, 22)]
    assert [text[s:e] for s, e in spans] == chunks


def test_locate_chunks_counts_code_points() -> None:
    text = "🇺🇸 é\u00a0x. Next one."
    spans = locate_chunks(text, ["🇺🇸 é\u00a0x.", "Next one."])
    assert spans == [(0, 7), (8, 17)]


def test_missing_chunk_names_page_section_and_chunk() -> None:
    with pytest.raises(ValueError, match=r"page 39: section 4: chunk 1: chunk text"):
        locate_chunks("one two", ["one", "one"], wikipedia_id="39", section_order=4)


def test_every_sample_chunk_is_rebuilt_from_its_kilt_span(sample_build: Build) -> None:
    pages = {page["wikipedia_id"]: page["text"] for page in read_pages(SAMPLE_JSONL)}
    rows = sample_build.query(
        "select spans.wikipedia_id, spans.start_paragraph_id, spans.start_character,"
        " spans.end_paragraph_id, spans.end_character, chunks.text"
        " from kilt_chunk_spans as spans"
        " inner join kilt_chunks as chunks on spans.chunk_id = chunks.chunk_id"
    )
    assert len(rows) == sample_build.query("select count(*) from kilt_chunks")[0][0]
    assert len(rows) == 3710
    mismatches = [
        row for row in rows if text_from_kilt_span(pages[row[0]], *row[1:5]) != row[5]
    ]
    assert mismatches == []


def test_sample_section_offsets_and_token_counts(sample_build: Build) -> None:
    rows = sample_build.query(
        "select sections.section_text, spans.section_start_char,"
        " spans.section_end_char, spans.num_tokens, chunks.text"
        " from kilt_chunk_spans as spans"
        " inner join kilt_chunks as chunks on spans.chunk_id = chunks.chunk_id"
        " inner join kilt_scratch.int_sections_assembled as sections"
        " on spans.wikipedia_id = sections.wikipedia_id"
        " and spans.section_order = sections.section_order"
    )
    tokenizer = get_tokenizer()
    assert tokenizer.func.__self__.name == "cl100k_base"
    assert all(text[start:end] == chunk for text, start, end, _, chunk in rows)
    assert all(n == len(tokenizer(chunk)) for _, _, _, n, chunk in rows)


def test_chunk_spans_keep_mart_order(sample_build: Build) -> None:
    spans = sample_build.query("select chunk_id from kilt_chunk_spans")
    chunks = sample_build.query("select chunk_id from kilt_chunks")
    assert spans == chunks


def test_provenance_models_are_empty_without_tasks(sample_build: Build) -> None:
    for table in (
        "int_task_lines_read",
        "int_provenance_spans_read",
        "kilt_queries",
        "kilt_qrels_pages",
        "kilt_qrels_chunks",
        "kilt_provenance_chunks",
        "kilt_provenance_rejected",
        "kilt_provenance_summary",
        "kilt_provenance_qrels",
    ):
        assert sample_build.query(f"select count(*) from {table}") == [(0,)]
    assert not (sample_build.export_dir / "qrels").exists()
