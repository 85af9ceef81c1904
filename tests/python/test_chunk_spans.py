"""Chunk spans: every chunk of the sample is found again from its KILT span."""

from __future__ import annotations

import pyarrow as pa
import pytest
from llama_index.core.utils import get_tokenizer

from conftest import SAMPLE, SAMPLE_JSONL, Build, read_pages
from kilt_chunks.build.spans import kilt_spans, locate_chunks

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


def _kilt_spans(sections: list[dict]) -> list[list[tuple[int, int, int, int]]]:
    """kilt_spans over plain section dicts; per section, (sp, sc, ep, ec) per chunk."""
    column = lambda name, kind: pa.array([s[name] for s in sections], kind)  # noqa: E731
    lists = [
        column("starts", pa.list_(pa.int64())),
        column("ends", pa.list_(pa.int64())),
        column("first", pa.int32()),
        column("lengths", pa.list_(pa.int32())),
        column("offsets", pa.list_(pa.int32())),
        pa.array([str(k) for k in range(len(sections))]),
        pa.array(range(len(sections)), pa.int32()),
    ]
    columns = [c.to_pylist() for c in kilt_spans(*lists)]
    return [
        list(zip(*per_section, strict=True))
        for per_section in zip(*columns, strict=True)
    ]


def test_kilt_spans_count_the_bullet_marker_and_restart_per_section() -> None:
    # Section 0: paragraphs 1 ("Lead one.\n", 10 chars) and 2 (a bullet whose
    # 21 characters start at 10); section 1: paragraph 5 alone.
    sections = [
        {
            "starts": [0, 22],
            "ends": [21, 30],
            "first": 1,
            "lengths": [10, 21],
            "offsets": [0, 10],
        },
        {"starts": [0], "ends": [8], "first": 5, "lengths": [9], "offsets": [0]},
    ]
    assert _kilt_spans(sections) == [
        # Chunk 0 ends at section char 21 = char 11 of the bullet's text, so
        # KILT character 21 (end exclusive); chunk 1 starts at bullet text
        # char 12 = KILT 22.
        [(1, 0, 2, 21), (2, 22, 2, 30)],
        [(5, 0, 5, 8)],
    ]


def test_kilt_spans_never_choose_empty_paragraphs() -> None:
    # Paragraphs 3 (empty), 4 ("ab"), 5 (empty bullet), 6 ("cd"), 7 (empty).
    sections = [
        {
            "starts": [0, 2, 1],
            "ends": [1, 4, 3],
            "first": 3,
            "lengths": [0, 2, 0, 2, 0],
            "offsets": [0, 0, 10, 0, 0],
        },
    ]
    assert _kilt_spans(sections) == [[(4, 0, 4, 1), (6, 0, 6, 2), (4, 1, 6, 1)]]


def test_kilt_spans_are_null_without_paragraph_lengths() -> None:
    null_lists = pa.nulls(1, pa.list_(pa.int32()))
    columns = kilt_spans(
        pa.array([[0]], pa.list_(pa.int64())),
        pa.array([[3]], pa.list_(pa.int64())),
        pa.nulls(1, pa.int32()),
        null_lists,
        null_lists,
        pa.array(["1"]),
        pa.array([0], pa.int32()),
    )
    assert [c.to_pylist() for c in columns] == [[None]] * 4


def test_kilt_spans_reject_a_chunk_past_its_paragraphs() -> None:
    sections = [
        {"starts": [0], "ends": [3], "first": 1, "lengths": [3], "offsets": [0]},
        {"starts": [0], "ends": [5], "first": 1, "lengths": [2, 2], "offsets": [0, 0]},
    ]
    with pytest.raises(
        ValueError,
        match="page 1: section 1: a chunk ends at character 5, past the "
        "section's 4 characters",
    ):
        _kilt_spans(sections)


def chunks_not_rebuilt_from_their_kilt_spans(build: Build) -> tuple[int, list]:
    """(number of chunks, those whose KILT span does not give their text back)
    of a build of the sample."""
    pages = {page["wikipedia_id"]: page["text"] for page in read_pages(SAMPLE_JSONL)}
    rows = build.query(
        "select spans.wikipedia_id, spans.start_paragraph_id, spans.start_character,"
        " spans.end_paragraph_id, spans.end_character, chunks.text"
        " from kilt_chunk_spans as spans"
        " inner join kilt_chunks as chunks on spans.chunk_id = chunks.chunk_id"
    )
    assert len(rows) == build.query("select count(*) from kilt_chunks")[0][0]
    mismatches = [
        row for row in rows if text_from_kilt_span(pages[row[0]], *row[1:5]) != row[5]
    ]
    return len(rows), mismatches


@pytest.mark.dbt
def test_every_sample_chunk_is_rebuilt_from_its_kilt_span(sample_build: Build) -> None:
    assert chunks_not_rebuilt_from_their_kilt_spans(sample_build) == (SAMPLE.chunks, [])


@pytest.mark.dbt
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


@pytest.mark.dbt
def test_chunk_spans_keep_mart_order(sample_build: Build) -> None:
    spans = sample_build.query("select chunk_id from kilt_chunk_spans")
    chunks = sample_build.query("select chunk_id from kilt_chunks")
    assert spans == chunks


@pytest.mark.dbt
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
