"""Chunking step: exact strings, streaming batches, worker-count independence."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pyarrow as pa
import pytest

from conftest import SAMPLE_JSONL, read_pages
from kilt_chunks.build.sections import page_sections, parse_section_path, section_title
from kilt_chunks.build.splitting import (
    CHUNK_SCHEMA,
    compacted_batch,
    split_batch,
    split_section,
    split_section_batches,
)
from kilt_chunks.chunking_settings import ChunkingSettings


def _sample_section_batches(batch_size: int) -> list[pa.RecordBatch]:
    rows = {
        "page_order": [],
        "wikipedia_id": [],
        "section_order": [],
        "section_text": [],
    }
    for page_order, page in enumerate(read_pages(SAMPLE_JSONL)[:30]):
        for section in page_sections(page["wikipedia_title"], page["text"]):
            rows["page_order"].append(page_order)
            rows["wikipedia_id"].append(page["wikipedia_id"])
            rows["section_order"].append(section.section_order)
            rows["section_text"].append(section.text)
    table = pa.table(
        rows,
        schema=pa.schema(
            [
                ("page_order", pa.int64()),
                ("wikipedia_id", pa.string()),
                ("section_order", pa.int32()),
                ("section_text", pa.string()),
            ]
        ),
    )
    return table.to_batches(max_chunksize=batch_size)


def test_short_section_is_one_stripped_chunk() -> None:
    assert split_section("  Albedo is a ratio.\n", splitter="llama_index") == [
        "Albedo is a ratio."
    ]


def test_blank_section_gives_no_chunk() -> None:
    assert split_section("", splitter="llama_index") == []
    assert split_section("\n\u00a0\u3000\n", splitter="llama_index") == []


def test_long_section_splits_at_sentences() -> None:
    sentence = "The quick brown fox jumps over the lazy dog near the river bank. "
    chunks = split_section(sentence * 60, splitter="llama_index")
    assert len(chunks) == 4
    assert all(chunk.endswith("river bank.") for chunk in chunks)
    assert "".join(c + " " for c in chunks) == sentence * 60


def test_unknown_splitter_is_rejected_before_any_batch() -> None:
    with pytest.raises(ValueError, match="splitter = 'nltk': must be one of"):
        next(split_section_batches(iter([]), splitter="nltk"))
    with pytest.raises(ValueError, match="chunk_size = 0: must be a whole number"):
        next(split_section_batches(iter([]), chunk_size=0))


def test_blank_section_in_a_batch_names_the_page() -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "page_order": pa.array([1], pa.int64()),
            "wikipedia_id": ["39"],
            "section_order": pa.array([2], pa.int32()),
            "section_text": ["  \n"],
        }
    )
    with pytest.raises(ValueError, match="page 39: section 2"):
        split_batch(batch, ChunkingSettings(splitter="llama_index"))


def test_a_million_spaces_split_fast_and_name_the_page_with_stock() -> None:
    """tiktoken (so stock) cannot pre-tokenize a run of about a million spaces
    before more text; the fast splitter chunks it, and a stock build stops
    with a message naming the page and section instead of a bare regex error."""
    text = "Before. " + " " * 1_000_000 + "after."
    batch = pa.RecordBatch.from_pydict(
        {
            "page_order": pa.array([1], pa.int64()),
            "wikipedia_id": ["39"],
            "section_order": pa.array([2], pa.int32()),
            "section_text": [text],
        }
    )
    chunks = split_batch(batch, ChunkingSettings(splitter="fast")).to_pydict()
    assert chunks["text"] == ["Before.", "after."]
    assert chunks["num_tokens"] == [2, 2]
    assert chunks["section_end_char"] == [7, len(text)]
    with pytest.raises(ValueError, match=r"page 39: section 2: the llama_index "):
        split_batch(batch, ChunkingSettings(splitter="llama_index"))


@pytest.mark.full
def test_output_is_identical_for_any_worker_count() -> None:
    # The default (fast) splitter: worker count and batch size are the pool's
    # business, and the splitter's identity with stock has its own tests.
    batches = _sample_section_batches(batch_size=37)
    one = pa.Table.from_batches(
        list(split_section_batches(batches, workers=1)),
        schema=CHUNK_SCHEMA,
    )
    two = pa.Table.from_batches(
        list(split_section_batches(batches, workers=2)),
        schema=CHUNK_SCHEMA,
    )
    assert one.num_rows > 500
    assert one.equals(two)
    # Batch size does not change the result either.
    other = pa.Table.from_batches(
        list(
            split_section_batches(
                _sample_section_batches(batch_size=500),
                workers=1,
            )
        ),
        schema=CHUNK_SCHEMA,
    )
    assert other.equals(one)


def test_section_path_and_title_helpers() -> None:
    assert parse_section_path("Section::::Why me?:Early years.\n") == [
        "Why me?",
        "Early years",
    ]
    assert parse_section_path("Section::::Move to the U.S..\n") == ["Move to the U.S."]
    assert section_title("Albedo", ["A", "B"]) == "# Albedo\n## A\n### B"
    assert section_title("Albedo", []) == "# Albedo"
    with pytest.raises(ValueError, match="not a header paragraph"):
        parse_section_path("History.\n")


def test_sliced_batches_are_compacted_before_pickling() -> None:
    """A slice of a big table is sent to a worker as its own rows only."""
    table = pa.table({"section_text": ["x" * 1000] * 5000})
    piece = table.to_batches(max_chunksize=50)[7]
    compact = compacted_batch(piece)
    assert compact.equals(piece)
    assert len(pickle.dumps(piece)) > 4_000_000  # the parent's buffers
    assert len(pickle.dumps(compact)) < 60_000


ORPHAN_SCRIPT = """
import pyarrow as pa
from kilt_chunks.build.splitting import split_section_batches

if __name__ == "__main__":
    n = 400
    table = pa.table({
        "page_order": pa.array(range(n), pa.int64()),
        "wikipedia_id": [str(i) for i in range(n)],
        "section_order": pa.array([0] * n, pa.int32()),
        "section_text": ["Hello world. " * 2000] * n,
    })
    for _ in split_section_batches(table.to_batches(max_chunksize=5), workers=2):
        print("batch", flush=True)
"""


@pytest.mark.full
def test_workers_exit_when_the_build_process_is_killed(tmp_path: Path) -> None:
    """SIGKILL of the process that owns the pool leaves no worker behind."""
    script = tmp_path / "chunk_forever.py"
    script.write_text(ORPHAN_SCRIPT, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline() == "batch\n"  # the pool is up and working
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert len(workers) >= 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert [w.pid for w in alive if w.status() != psutil.STATUS_ZOMBIE] == []


def test_only_a_section_over_the_large_size_carries_its_chunk_texts() -> None:
    """Issue 21 item 8: kilt_chunks cuts chunks with DuckDB's substring, which
    is quadratic in a section's length (a 40 MB page ran for hours); a section
    over LARGE_SECTION_CHARS brings its chunks' text instead, equal to the
    cut the offsets give."""
    from kilt_chunks.build.splitting import LARGE_SECTION_CHARS

    sentence = "Ärger über Öl: ein Satz. "
    long_text = sentence * (LARGE_SECTION_CHARS // len(sentence) + 1)
    short_text = sentence * 40
    assert len(long_text) > LARGE_SECTION_CHARS >= len(short_text)
    batch = pa.RecordBatch.from_pydict(
        {
            "page_order": pa.array([1, 1], pa.int64()),
            "wikipedia_id": ["5", "5"],
            "section_order": pa.array([0, 1], pa.int32()),
            "section_text": [short_text, long_text],
        }
    )
    rows = split_batch(batch, by_section=True).to_pylist()
    assert rows[0]["chunk_texts"] is None
    texts = rows[1]["chunk_texts"]
    assert texts == split_section(long_text)
    assert texts == [
        long_text[start:end]
        for start, end in zip(
            rows[1]["chunk_start_chars"], rows[1]["chunk_end_chars"], strict=True
        )
    ]
    assert len(texts) == rows[1]["num_chunks"] > 100
