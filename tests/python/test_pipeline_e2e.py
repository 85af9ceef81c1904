"""End to end: `dbt build` on the bundled sample, then the DuckDB file and Parquet."""

from __future__ import annotations

from pathlib import Path

import datasets
import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import SAMPLE, SAMPLE_JSONL, Build, read_pages, run_dbt_build
from contracts import contract_columns, contract_names
from kilt_chunks.build.sections import chunk_page
from kilt_chunks.export.folder import config_files

#: Every test of this module runs dbt (make test-fast leaves them out).
pytestmark = pytest.mark.dbt

#: SPEC's columns of kilt_chunks, as its enforced contract declares them.
SPEC_COLUMNS = contract_names("kilt_chunks")

ORDERED = "select * from kilt_chunks order by chunk_id"


def test_mart_has_spec_columns_in_order(sample_build: Build) -> None:
    columns = sample_build.query(
        "select column_name, data_type, is_nullable = 'NO' from"
        " information_schema.columns where table_name = 'kilt_chunks'"
        " order by ordinal_position"
    )
    assert columns == [tuple(column) for column in contract_columns("kilt_chunks")]
    # NOT NULL where the contract says so (a data test no longer checks it).
    assert columns[7] == ("section", "VARCHAR[]", True)
    assert ("wikidata_id", "VARCHAR", False) in columns


def test_sample_counts_are_accounted_for(sample_build: Build) -> None:
    (audit,) = sample_build.query(
        "select lines_read, pages_loaded, pages_chunked, pages_without_text,"
        " pages_rejected, sections_total, sections_kept, sections_dropped,"
        " chunks_written from kilt_load_audit"
    )
    assert audit == (
        *(SAMPLE.pages,) * 3,
        0,
        0,
        SAMPLE.raw_sections,
        SAMPLE.sections,
        SAMPLE.blank_sections,
        SAMPLE.chunks,
    )
    assert sample_build.query("select count(*) from kilt_chunks") == [(SAMPLE.chunks,)]


def test_chunks_equal_python_reference_for_every_page(sample_build: Build) -> None:
    """SQL sections + dbt chunking == kilt_chunks.build.sections + stock LlamaIndex."""
    expected = []
    for page in read_pages(SAMPLE_JSONL):
        for section, chunks in chunk_page(
            page["wikipedia_title"], page["text"], splitter="llama_index"
        ):
            for chunk_order, text in enumerate(chunks):
                expected.append(
                    (
                        page["wikipedia_id"],
                        section.section_order,
                        chunk_order,
                        text,
                        section.title,
                        section.section_path,
                        section.num_sections,
                    )
                )
    actual = sample_build.query(
        "select wikipedia_id, section_order, chunk_order, text, title, section,"
        " num_sections from kilt_chunks"
    )
    assert actual == expected  # same rows, same order (page, section, chunk)


def test_metadata_columns_follow_the_page(sample_build: Build) -> None:
    rows = sample_build.query(
        "select distinct wikipedia_id, wikipedia_title, categories, pageid,"
        " parentid, revid, timestamp, url, wikidata_id from kilt_chunks"
    )
    by_id = {row[0]: row for row in rows}
    for page in read_pages(SAMPLE_JSONL):
        history = page["history"]
        assert by_id[page["wikipedia_id"]] == (
            page["wikipedia_id"],
            page["wikipedia_title"],
            page["categories"],
            str(history["pageid"]),
            str(history["parentid"]),
            str(history["revid"]),
            history["timestamp"],
            history["url"],
            None,  # the 2016 sample has no wikidata_info
        )


def test_parquet_export_matches_table(sample_build: Build) -> None:
    files = config_files(sample_build.export_dir, "chunks")
    assert [f.name for f in files] == ["train-00000-of-00001.parquet"]
    table = pq.read_table(files)
    assert table.column_names == SPEC_COLUMNS
    assert table.num_rows == SAMPLE.chunks
    metadata = pq.read_metadata(files[0]).metadata
    assert metadata[b"splitter"] == b"fast"  # the build default (dbt_project.yml)
    assert metadata[b"chunk_size"] == b"256"
    assert metadata[b"llama_index_core_version"] == b"0.14.25"
    with duckdb.connect(str(sample_build.db_path), read_only=True) as con:
        from_parquet = con.sql(
            f"select * from read_parquet({[str(f) for f in files]}) order by chunk_id"
        ).fetchall()
        assert from_parquet == con.sql(ORDERED).fetchall()
    dataset = datasets.load_dataset(
        "parquet", data_files=[str(f) for f in files], split="train"
    )
    assert dataset.num_rows == SAMPLE.chunks
    assert dataset.column_names == SPEC_COLUMNS
    first = dataset[0]
    assert first["chunk_id"] == "doc-12_0::s-0::chunk-0"
    assert first["section"] == []


def test_jsonl_and_hf_parquet_give_identical_rows(
    sample_build: Build, sample_parquet_build: Build
) -> None:
    assert sample_build.query(ORDERED) == sample_parquet_build.query(ORDERED)


def test_build_info_records_versions(sample_build: Build) -> None:
    (row,) = sample_build.query(
        "select chunk_size, chunk_overlap, llama_index_core_version, nltk_version"
        " from kilt_build_info"
    )
    assert row == ("256", "0", "0.14.25", "3.10.4")


def test_chunk_spans_are_exported_beside_the_chunks(sample_build: Build) -> None:
    """Token counts and KILT spans reach the Parquet user too, in their own
    folder, one row per chunk, with the build info as metadata."""
    files = config_files(sample_build.export_dir, "chunk_spans")
    assert [f.name for f in files] == ["train-00000-of-00001.parquet"]
    assert pq.read_metadata(files[0]).metadata[b"chunk_size"] == b"256"
    with duckdb.connect(str(sample_build.db_path), read_only=True) as con:
        exported = con.sql(
            f"select * from read_parquet('{files[0]}') order by chunk_id"
        ).fetchall()
        assert (
            exported
            == con.sql("select * from kilt_chunk_spans order by chunk_id").fetchall()
        )
        # Joinable with the chunk export on chunk_id, one to one.
        assert con.sql(
            "select count(*), count(distinct chunk_id), max(num_tokens)"
            f" from read_parquet('{files[0]}')"
        ).fetchall() == [(SAMPLE.chunks, SAMPLE.chunks, 256)]


def test_partial_build_creates_a_missing_export_dir(
    tmp_path: Path, sample_build: Build
) -> None:
    """The export makes its folder itself, parents included; the summary of
    a partial run that did not chunk gives no MB/s (the full build's does)."""
    from conftest import copy_build
    from kilt_chunks.cli import build_summary

    copy_build(sample_build, tmp_path)
    db_path = str(tmp_path / "kilt_chunks.duckdb")
    assert "MB/s of section text)" in build_summary(db_path)
    nested = tmp_path / "new" / "exports"
    run_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        select="kilt_chunks+",
        # Kept for the second partial build below, which needs the sections.
        extra_vars={"export_dir": str(nested), "keep_scratch": True},
        data_tests=False,
    )
    summary = build_summary(db_path)
    assert "(a partial run: it did not chunk)" in summary
    assert "MB/s" not in summary
    assert [f.name for f in config_files(nested, "chunks")] == [
        "train-00000-of-00001.parquet"
    ]
    assert (nested / "data" / "chunk_spans" / "train-00000-of-00001.parquet").exists()
