"""Re-chunking without reloading: the README's one-line command on a kept
scratch database builds the corpus again at another chunk_size, chunk_overlap
and tokenizer, without reading the input, and records the settings it ran."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_chunk_spans import chunks_not_rebuilt_from_their_kilt_spans

from conftest import (
    FIXTURES,
    ROOT,
    SAMPLE_JSONL,
    Build,
    copy_build,
    run_dbt_build,
)
from kilt_chunks.splitter import FastSentenceSplitter

# Every test here reads dbt builds (the explicit marker of the fast lane).
pytestmark = pytest.mark.dbt

TASK_FILE = FIXTURES / "kilt_tasks" / "handmade-dev-kilt.jsonl"
ORDERED = "select * from kilt_chunks order by chunk_id"


def readme_rechunk_vars() -> dict:
    """The variables of the re-chunk recipe (the one line of the README or
    docs/ that starts the build with ``--select int_sections_chunked+``), so
    the test runs what it documents."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    (line,) = [
        line
        for page in pages
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith(".venv/bin/dbt build --select int_sections_chunked+")
    ]
    assert line.startswith(".venv/bin/dbt build --select int_sections_chunked+ --vars ")
    # The recipe's line ends in `&&`: the next command runs only if it worked.
    text = line.split("--vars ", 1)[1].strip().removesuffix("&&").strip().strip("'")
    import yaml

    variables = yaml.safe_load(text)
    assert variables["keep_scratch"] is True
    return variables


def executed_models(workdir: Path) -> set[str]:
    results = json.loads((workdir / "target" / "run_results.json").read_text())
    return {r["unique_id"].split(".")[-1] for r in results["results"]}


@pytest.fixture(scope="module")
def rechunked(tmp_path_factory: pytest.TempPathFactory, sample_build: Build) -> Build:
    """The sample build, re-chunked by the README's command."""
    workdir = tmp_path_factory.mktemp("rechunk")
    copy_build(sample_build, workdir)
    variables = readme_rechunk_vars()
    assert variables["chunk_overlap"] > 0
    # The task lines are read too (the sample build read none), so the chunk
    # qrels are made for the new chunks.
    build = run_dbt_build(
        workdir,
        SAMPLE_JSONL,
        select="int_sections_chunked+ int_task_lines_read+",
        extra_vars={**variables, "kilt_tasks": str(TASK_FILE)},
    )
    ran = executed_models(workdir)
    # The input is not read: neither the loader nor the sections ran.
    assert "base_kilt__pages" not in ran and "int_sections_assembled" not in ran
    assert {"int_sections_chunked", "kilt_chunks", "kilt_build_info"} <= ran
    return build


def test_rechunk_records_the_settings_it_ran(rechunked: Build) -> None:
    variables = readme_rechunk_vars()
    (row,) = rechunked.query(
        "select chunk_size, chunk_overlap, tokenizer, token_counting"
        " from kilt_build_info"
    )
    assert row == (
        str(variables["chunk_size"]),
        str(variables["chunk_overlap"]),
        "tiktoken cl100k_base (allowed_special=all)",
        "fast",
    )
    card = " ".join((rechunked.export_dir / "README.md").read_text("utf-8").split())
    overlap = variables["chunk_overlap"]
    assert (
        f"(chunk_size {variables['chunk_size']}, chunk_overlap {overlap}: consecutive"
        f" chunks of a section share up to {overlap} tokens of text; tokens counted"
        " by tiktoken cl100k_base (allowed_special=all); see Limitations"
    ) in card
    assert "This is **not** the published corpus" in card
    (over,) = rechunked.query(
        "select value from kilt_corpus_stats where statistic = 'chunks_over_chunk_size'"
    )
    size = variables["chunk_size"]
    (expected_over,) = rechunked.query(
        f"select count(*) from kilt_chunk_spans where num_tokens > {size}"
    )
    assert over[0] == expected_over[0]
    from kilt_chunks.cli import build_summary

    summary = build_summary(str(rechunked.db_path))
    assert (
        f"(splitter fast, chunk_size {size}, chunk_overlap {overlap}, tokenizer"
        " tiktoken cl100k_base (allowed_special=all); fast counting)"
    ) in summary.splitlines()[0]


def test_a_rebuild_keeps_the_recorded_settings_it_is_not_given(
    rechunked: Build, tmp_path: Path
) -> None:
    """Issue 31 item 9: rebuilding the chunking of a database chunked with
    chunk_overlap 32, given only another tokenizer, chunked with overlap 0
    (the project's default) without a word. A remembered setting is
    remembered whole: the recorded overlap is kept, and the build says so.
    Issue 31 item 10: the statistics, the card's tables and the figure title
    said cl100k_base whatever the tokenizer; they name it now. And the
    rebuild reads no task file (no kilt_tasks): the task files and query
    configs of the export go, and the build says so (item 9)."""
    import shutil

    from kilt_chunks.export.folder import OWNER_FILE

    copy_build(rechunked, tmp_path)
    # The rechunked build's export (with its task configs and qrels), as
    # this copy's own.
    shutil.copytree(rechunked.export_dir, tmp_path / "exports")
    owner = json.loads((tmp_path / "exports" / OWNER_FILE).read_text())
    owner["database"] = os.path.realpath(tmp_path / "kilt_chunks.duckdb")
    (tmp_path / "exports" / OWNER_FILE).write_text(json.dumps(owner))
    variables = readme_rechunk_vars()
    build = run_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        select="int_sections_chunked+ int_task_lines_read+",
        extra_vars={"tokenizer": "o200k_base", "keep_scratch": True},
        data_tests=False,
    )
    qrels = os.path.realpath(tmp_path / "exports" / "qrels")
    assert (
        "WARNING: kilt_provenance_qrels: removes 5 evaluation files of tasks this"
        f" build did not read from {qrels}: handmade-dev-kilt.graded.qrels,"
    ) in build.output
    assert (
        "WARNING: export: the configs qrels_chunks, qrels_pages, queries of the"
        " previous export"
    ) in build.output
    assert not list((tmp_path / "exports" / "qrels").glob("handmade*"))
    (row,) = build.query(
        "select chunk_size, chunk_overlap, tokenizer from kilt_build_info"
    )
    assert row == (
        str(variables["chunk_size"]),
        str(variables["chunk_overlap"]),
        "tiktoken o200k_base (allowed_special=all)",
    )
    assert (
        f"int_sections_chunked: chunk_overlap = {variables['chunk_overlap']}, as"
        " the database's chunks were built (not the project's 0)"
    ) in build.output
    recorded = dict(
        build.query(
            "select setting, value from kilt_build_settings"
            " where model = 'int_sections_chunked'"
        )
    )
    assert recorded["chunk_overlap"] == str(variables["chunk_overlap"])
    assert recorded["tokenizer"] == '"o200k_base"'
    from kilt_chunks.cli import corpus_stats

    stats = corpus_stats(str(build.db_path))
    assert "o200k_base tokens over all chunks" in stats
    card = (build.export_dir / "README.md").read_text("utf-8")
    assert "o200k_base tokens over all chunks" in card
    assert "![Tokens per chunk (o200k_base), buckets of 8 tokens]" in card
    assert "cl100k_base tokens" not in card + stats


def test_rechunked_chunks_are_the_splitters_with_exact_spans(rechunked: Build) -> None:
    variables = readme_rechunk_vars()
    splitter = FastSentenceSplitter(variables["chunk_size"], variables["chunk_overlap"])
    sections = rechunked.query(
        "select wikipedia_id, section_order, section_text"
        " from kilt_scratch.int_sections_assembled order by page_order, section_order"
    )
    expected = []
    for wikipedia_id, section_order, text in sections:
        for k, row in enumerate(splitter.split_text_with_spans(text)):
            expected.append((wikipedia_id, section_order, k, *row))
    got = rechunked.query(
        "select chunks.wikipedia_id, spans.section_order, spans.chunk_order,"
        " chunks.text, spans.num_tokens, spans.section_start_char,"
        " spans.section_end_char"
        " from kilt_chunks as chunks inner join kilt_chunk_spans as spans"
        " using (chunk_id)"
    )
    assert sorted(got) == sorted(expected)
    assert len(got) > 2000
    # The span rebuild: every chunk is found again from its KILT span.
    assert chunks_not_rebuilt_from_their_kilt_spans(rechunked) == (len(got), [])
    # Consecutive chunks of a section share text.
    (shared,) = rechunked.query(
        "select count(*) from (select section_start_char, lag(section_end_char)"
        " over (partition by wikipedia_id, section_order order by chunk_order) as prev"
        " from kilt_chunk_spans) where section_start_char < prev"
    )
    assert shared[0] > 200


def test_chunk_qrels_follow_the_overlapping_spans(rechunked: Build) -> None:
    """Every chunk sharing a character with a provenance span is matched to it,
    and no other (min_overlap 1), checked from the spans alone."""
    spans = rechunked.query(
        "select distinct query_id, wikipedia_id, start_paragraph_id,"
        " start_character, end_paragraph_id, end_character"
        " from kilt_provenance_chunks"
    )
    chunks = rechunked.query(
        "select wikipedia_id, chunk_id, start_paragraph_id, start_character,"
        " end_paragraph_id, end_character from kilt_chunk_spans"
    )
    matched = {
        (q, c)
        for q, c in rechunked.query(
            "select query_id, chunk_id from kilt_provenance_chunks"
        )
    }
    expected = set()
    for query_id, page, sp, sc, ep, ec in spans:
        for chunk_page, chunk_id, cp, cc, dp, dc in chunks:
            if chunk_page == page and (cp, cc) < (ep, ec) and (sp, sc) < (dp, dc):
                expected.add((query_id, chunk_id))
    assert matched == expected
    assert len(matched) >= 5


def test_rechunk_back_to_the_defaults_gives_the_spec_corpus(
    tmp_path: Path, sample_build: Build, rechunked: Build
) -> None:
    copy_build(rechunked, tmp_path)
    variables = {
        "keep_scratch": True,
        "chunk_size": 256,
        "chunk_overlap": 0,
        "tokenizer": "cl100k_base",
    }
    # Without data tests: its rows are compared with the shared sample
    # build's, whose data tests check them.
    back = run_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        select="int_sections_chunked+",
        extra_vars=variables,
        data_tests=False,
    )
    assert back.query(ORDERED) == sample_build.query(ORDERED)
    assert back.query("select chunk_size, chunk_overlap from kilt_build_info") == [
        ("256", "0")
    ]
