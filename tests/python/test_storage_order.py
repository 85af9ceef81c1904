"""Tables are stored in input order without sorts, and kilt_chunks refuses to
pair sections with chunks that do not line up."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import SAMPLE, SAMPLE_JSONL, Build, read_pages, run_dbt_build
from contracts import contract_names


def _page_positions() -> dict[str, int]:
    return {
        str(page["wikipedia_id"]): i for i, page in enumerate(read_pages(SAMPLE_JSONL))
    }


@pytest.mark.dbt
def test_sections_are_stored_in_page_and_section_order(sample_build: Build) -> None:
    # A scan without ORDER BY returns the stored order.
    keys = sample_build.query(
        "select page_order, section_order from kilt_scratch.int_sections_assembled"
    )
    assert len(keys) == SAMPLE.sections
    assert all(a < b for a, b in zip(keys, keys[1:], strict=False))
    chunked = sample_build.query(
        "select page_order, section_order from int_sections_chunked"
    )
    assert chunked == keys


@pytest.mark.dbt
def test_chunks_are_stored_in_input_order(sample_build: Build) -> None:
    rows = sample_build.query(
        "select wikipedia_id, section_order, chunk_order from kilt_chunks"
    )
    position = _page_positions()
    keys = [(position[w], s, c) for w, s, c in rows]
    assert len(keys) == SAMPLE.chunks
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    # The first chunk is the first page's lead.
    assert rows[0] == (str(read_pages(SAMPLE_JSONL)[0]["wikipedia_id"]), 0, 0)


@pytest.mark.dbt
def test_page_metadata_reaches_every_chunk(sample_build: Build) -> None:
    # kilt_chunks takes page metadata from the sections (no join): it must equal
    # the page's own row for every chunk, in every column the two share.
    page_columns = {
        name
        for (name,) in sample_build.query(
            "select column_name from information_schema.columns"
            " where table_catalog = 'kilt_scratch'"
            " and table_name = 'stg_kilt__pages'"
        )
    }
    shared = [name for name in contract_names("kilt_chunks") if name in page_columns]
    assert shared[:3] == ["wikipedia_id", "wikipedia_title", "categories"]
    assert len(shared) >= 9  # SPEC's page fields, and any added since
    assert sample_build.query(
        "select count(*) from kilt_chunks as c"
        " join kilt_scratch.stg_kilt__pages as p on c.wikipedia_id = p.wikipedia_id"
        " where p.is_loaded and ("
        + " or ".join(f"c.{name} is distinct from p.{name}" for name in shared)
        + ")"
    ) == [(0,)]
    assert sample_build.query(
        "select count(*) from kilt_chunks where url is null or wikipedia_title is null"
    ) == [(0,)]


@pytest.mark.dbt
def test_misaligned_chunk_rows_stop_kilt_chunks(
    tmp_path: Path, sample_build: Build
) -> None:
    # A chunk row missing (e.g. a table edited by hand): the positional pairing
    # must stop with a clear message rather than cut the wrong section's text.
    shutil.copy(sample_build.db_path, tmp_path / "kilt_chunks.duckdb")
    shutil.copy(
        f"{sample_build.db_path}.scratch", tmp_path / "kilt_chunks.duckdb.scratch"
    )
    with duckdb.connect(str(tmp_path / "kilt_chunks.duckdb")) as con:
        con.execute(
            "delete from int_sections_chunked where page_order = "
            "(select min(page_order) from int_sections_chunked) and section_order = 1"
        )
    build = run_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        select="kilt_chunks",
        extra_vars={"export_dir": ""},
        check=False,
    )
    assert build.returncode != 0
    assert "int_sections_chunked is not aligned with int_sections_assembled" in (
        build.output
    )
    assert "rebuild with dbt build --full-refresh" in build.output


def test_chunking_refuses_sections_out_of_order(tmp_path: Path) -> None:
    # The safety net if DuckDB ever stopped keeping the staging order: the
    # chunking step stops rather than store chunks kilt_chunks would mis-pair.
    from kilt_chunks.build.checkpoint import chunk_sections_resumable

    with duckdb.connect(str(tmp_path / "t.duckdb")) as con:
        con.execute(
            "create table sections as select * from (values"
            " (2::bigint, '9', 0, 'Second page.'),"
            " (1::bigint, '7', 0, 'First page.'))"
            " as t(page_order, wikipedia_id, section_order, section_text)"
        )
        with pytest.raises(ValueError, match=r"not in \(page_order, section_order\)"):
            chunk_sections_resumable(con, con.table("sections"), workers=1)
