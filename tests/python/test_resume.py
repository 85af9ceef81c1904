"""A killed build resumes to identical output; reruns are idempotent; one
build at a time per DuckDB file."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from conftest import (
    ROOT,
    SAMPLE,
    SAMPLE_JSONL,
    WITHOUT_DATA_TESTS,
    Build,
    copy_build,
    database_held_by_another_process,
    dbt_command,
    dbt_env,
    invoke_dbt_in_process,
    run_dbt_build,
)
from kilt_chunks.chunking_settings import DEFAULT_CHUNKING

ORDERED = "select * from kilt_chunks order by chunk_id"
TOTAL_CHUNKS = SAMPLE.chunks


def _start_build(
    workdir: Path, extra_vars: dict, kilt_path: Path = SAMPLE_JSONL
) -> subprocess.Popen:
    """Start `dbt build` in its own process group, without the data and
    unit tests (the build is killed, or its rows compared with a shared
    build's, whose data tests check them)."""
    variables = {
        "kilt_path": str(kilt_path),
        "export_dir": "",
        "progress_seconds": 0,
        **extra_vars,
    }
    return subprocess.Popen(
        dbt_command(workdir, variables, *WITHOUT_DATA_TESTS),
        cwd=ROOT,
        env=dbt_env(workdir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _wait_for_progress(
    proc: subprocess.Popen, min_sections: int, timeout: float
) -> None:
    """Wait until the chunking progress line shows min_sections done."""
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    for line in proc.stdout:  # text mode turns tqdm's carriage returns into lines
        done = re.search(r"sections=([\d,]+)", line)
        if done and int(done.group(1).replace(",", "")) >= min_sections:
            return
        assert time.monotonic() < deadline, f"under {min_sections} sections in time"
    raise AssertionError("build ended before the chunking progress was seen")


@pytest.mark.dbt
def test_killed_build_resumes_to_identical_output(
    tmp_path: Path, sample_build: Build
) -> None:
    # One worker, stock splitter and small batches: chunking takes several
    # seconds and commits many times, so the kill lands in the middle of it.
    # The sample's first 50 pages (about half its sections): their chunks are
    # the shared sample build's chunks of these pages.
    slow = {"workers": 1, "splitter": "llama_index", "batch_size": 40}
    lines = SAMPLE_JSONL.read_text(encoding="utf-8").splitlines(keepends=True)
    pages = tmp_path / "first_50_pages.jsonl"
    pages.write_text("".join(lines[:50]), encoding="utf-8")
    page_ids = sorted(json.loads(line)["wikipedia_id"] for line in lines[:50])
    expected = sample_build.query(
        "select * from kilt_chunks where wikipedia_id in"
        f" ({', '.join(repr(i) for i in page_ids)}) order by chunk_id"
    )
    assert 1_000 < len(expected) < TOTAL_CHUNKS
    # Progress lines report sections only after their batch is committed.
    proc = _start_build(tmp_path, {**slow, "progress_seconds": 0.1}, kilt_path=pages)
    _wait_for_progress(proc, min_sections=200, timeout=180)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    db_path = tmp_path / "kilt_chunks.duckdb"
    with duckdb.connect(str(db_path)) as con:
        (committed,) = con.sql(
            "select coalesce(sum(num_chunks), 0) from kilt_chunking_checkpoint"
        ).fetchall()[0]
        tables = {row[0] for row in con.sql("show tables").fetchall()}
    assert 0 < committed < len(expected), committed  # killed part way
    assert "kilt_chunks" not in tables

    resumed = run_dbt_build(
        tmp_path, pages, extra_vars={**slow, "export_dir": ""}, data_tests=False
    )
    assert resumed.query(ORDERED) == expected
    assert resumed.query("select sum(num_chunks) from kilt_chunking_checkpoint") == [
        (len(expected),)
    ]


@pytest.mark.dbt
def test_rerun_is_idempotent_and_full_refresh_rebuilds(
    tmp_path: Path, sample_build: Build
) -> None:
    # The first build: a copy of the shared sample build (scratch kept).
    copy_build(sample_build, tmp_path)
    rows = sample_build.query(ORDERED)
    assert len(rows) == TOTAL_CHUNKS
    keep = {"export_dir": "", "keep_scratch": True}
    again = run_dbt_build(tmp_path, SAMPLE_JSONL, extra_vars=keep, data_tests=False)
    assert again.query(ORDERED) == rows
    # Issue 21 item 15: a rerun that reuses the stored load left
    # base_kilt__pages__dbt_tmp<timestamp> behind in the scratch database.
    assert again.query("select is_reused from kilt_scratch.base_kilt__pages") == [
        (True,)
    ]
    assert (
        again.query(
            "select database_name, table_name from duckdb_tables()"
            " where table_name like '%dbt_tmp%'"
        )
        == []
    )
    refreshed = run_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        extra_vars={"export_dir": ""},
        args=("--full-refresh",),
        data_tests=False,
    )
    assert refreshed.query(ORDERED) == rows
    # No copies of the chunks pile up across reruns.
    assert (
        refreshed.query(
            "select table_name from duckdb_tables() where table_name like '%dbt_tmp%'"
        )
        == []
    )


@pytest.mark.dbt
def test_changed_input_does_not_reuse_old_chunks(
    tmp_path: Path, sample_build: Build
) -> None:
    copy_build(sample_build, tmp_path)  # a finished build of the whole sample
    first_page = SAMPLE_JSONL.read_text(encoding="utf-8").splitlines()[0]
    smaller = tmp_path / "one_page.jsonl"
    smaller.write_text(first_page + "\n", encoding="utf-8")
    # Another input over the sample's build: allowed with replace_other_input.
    build = run_dbt_build(
        tmp_path,
        smaller,
        extra_vars={"export_dir": "", "replace_other_input": True},
        data_tests=False,
    )
    assert build.query("select distinct wikipedia_id from kilt_chunks") == [("12",)]
    assert build.query(
        "select sum(num_chunks) from kilt_chunking_checkpoint"
    ) == build.query("select count(*) from kilt_chunks")


@pytest.mark.dbt
def test_second_build_on_a_busy_database_gets_a_clear_message(tmp_path: Path) -> None:
    """A build started while another process holds the DuckDB file for
    writing (as a running build does: DuckDB's file lock is the same) stops
    at its connection with one line naming the file and the holder's PID."""
    db_path = tmp_path / "kilt_chunks.duckdb"
    with database_held_by_another_process(db_path) as holder_pid:
        second = run_dbt_build(tmp_path, SAMPLE_JSONL, check=False)
    assert second.returncode != 0
    assert (
        f"database {db_path} is in use by another process (PID {holder_pid})"
        in second.output
    )
    assert "Traceback" not in second.output


def _memory_limit(con: duckdb.DuckDBPyConnection) -> str:
    return con.sql("select current_setting('memory_limit')").fetchall()[0][0]


def test_memory_limit_is_lowered_for_a_block_and_restored() -> None:
    from kilt_chunks.database import memory_limit_at_most, memory_limit_bytes

    with duckdb.connect() as con:
        con.execute("set memory_limit = '2GB'")
        before = _memory_limit(con)
        assert before == "1.8 GiB"  # DuckDB cuts 1.86 GiB to one decimal
        assert memory_limit_bytes(con) == math.ceil(1.85 * 2**30)
        for _ in range(3):  # no drift
            with memory_limit_at_most(con, 256 * 2**20):
                assert _memory_limit(con) == "256.0 MiB"
            assert _memory_limit(con) == before
        # Restored after an error too; a lower limit is left as it is.
        con.execute("set memory_limit = '100MB'")
        low = _memory_limit(con)
        with memory_limit_at_most(con, 256 * 2**20):
            assert _memory_limit(con) == low
        con.execute("set memory_limit = '2GB'")
        try:
            with memory_limit_at_most(con, 256 * 2**20):
                raise RuntimeError("boom")
        except RuntimeError:
            pass
        assert _memory_limit(con) == before


def test_chunking_restores_the_memory_limit(tmp_path: Path) -> None:
    """The chunking step caps DuckDB's memory while its workers run (cached
    pages would otherwise sit beside them) and gives the cap back after."""
    from kilt_chunks.build.checkpoint import chunk_sections_resumable

    with duckdb.connect(str(tmp_path / "t.duckdb")) as con:
        con.execute("set memory_limit = '1GB'")
        before = _memory_limit(con)
        con.execute(
            "create table sections as select 1::bigint as page_order, "
            "'7'::varchar as wikipedia_id, 0::integer as section_order, "
            "'One sentence. Another one.'::varchar as section_text"
        )
        chunks = chunk_sections_resumable(con, con.table("sections"), workers=1)
        text_hash = con.sql("select hash('One sentence. Another one.')").fetchall()
        # The chunk lists (no chunk_texts for a short section), then the
        # carried section columns, then the KILT spans (this relation has no
        # paragraph range or lengths: NULL).
        assert chunks.fetchall() == [
            (1, "7", 0, 1, [0], [26], [6], None, text_hash[0][0], 26) + (None,) * 6
        ]
        assert _memory_limit(con) == before


def test_unreadable_memory_limit_names_the_variable() -> None:
    from kilt_chunks.dbt_plugin import check_memory_limit

    for good in ("1GB", "512MB", "75%"):
        check_memory_limit({"memory_limit": good})
    check_memory_limit({})
    with pytest.raises(ValueError, match=r"'bogus' \(KILT_CHUNKS_MEMORY_LIMIT\)"):
        check_memory_limit({"memory_limit": "bogus"})
    check_memory_limit({"memory_limit": "64MiB"})
    for small in ("30MB", "100KB"):
        with pytest.raises(ValueError, match=r"is below the 64 MiB the build needs"):
            check_memory_limit({"memory_limit": small})


def test_load_caps_the_database_then_reuses_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """load_pages stores every page (at LOAD_MEMORY_LIMIT, its loader needs
    memory beside it; the limit is given back), and a second call with the
    record of the first reuses the stored pages without reading the input."""

    from kilt_chunks.build import page_load

    seen: list[str] = []
    caps: list[int] = []
    real_reader = page_load.read_kilt_pages
    real_cap = page_load.memory_limit_at_most

    def reader(*args: object, **kwargs: object) -> pa.RecordBatchReader:
        seen.append(_memory_limit(con))
        return real_reader(*args, **kwargs)

    def cap(cursor: duckdb.DuckDBPyConnection, limit: int):  # noqa: ANN202
        caps.append(limit)
        return real_cap(cursor, limit)

    monkeypatch.setattr(page_load, "read_kilt_pages", reader)
    monkeypatch.setattr(page_load, "memory_limit_at_most", cap)
    with duckdb.connect(str(tmp_path / "t.duckdb")) as con:
        con.execute("set memory_limit = '1GB'")
        before = _memory_limit(con)
        record = page_load.load_pages(con, str(SAMPLE_JSONL), "pages")
        assert seen == [before]  # the reader starts before the cap is set
        assert caps == [page_load.LOAD_MEMORY_LIMIT]
        assert _memory_limit(con) == before
        assert con.sql("select count(*) from pages").fetchall() == [(SAMPLE.pages,)]
        row = record.to_pylist()[0]
        assert (row["lines_read"], row["is_reused"]) == (SAMPLE.pages, False)
        assert row["kilt_path"] == str(SAMPLE_JSONL.resolve())
        con.register("record_df", record)
        con.execute("create table record as select * from record_df")
        again = page_load.load_pages(
            con, str(SAMPLE_JSONL), "pages", record_relation="record"
        )
        assert len(seen) == 1  # not read again
        assert again.to_pylist()[0]["is_reused"] is True
        con.execute("delete from pages where page_order > 100")
        page_load.load_pages(con, str(SAMPLE_JSONL), "pages", record_relation="record")
        assert len(seen) == 2  # an incomplete load is loaded again
        assert con.sql("select count(*) from pages").fetchall() == [(SAMPLE.pages,)]


def test_changed_page_id_alone_changes_the_fingerprint() -> None:
    """A checkpoint row carries its page's wikipedia_id, so an input that
    differs only in an id must not resume from the old chunks."""
    from kilt_chunks.build.checkpoint import sections_fingerprint

    with duckdb.connect() as con:
        fingerprints = []
        for page_id in ("7", "8"):
            sections = con.sql(
                f"select 1::bigint as page_order, '{page_id}'::varchar as wikipedia_id,"
                " 0::integer as section_order, 'Same text.'::varchar as section_text"
            )
            fingerprints.append(sections_fingerprint(sections, DEFAULT_CHUNKING))
        assert fingerprints[0][1:] == fingerprints[1][1:] == (1, 10)
        assert fingerprints[0][0] != fingerprints[1][0]


def test_resume_continues_after_the_last_checkpoint_row(tmp_path: Path) -> None:
    """The resume point is the checkpoint's last row: a checkpoint cut back to
    a prefix (as a kill leaves it) is completed to the uninterrupted result."""
    from kilt_chunks.build.checkpoint import CHECKPOINT_TABLE, chunk_sections_resumable

    with duckdb.connect(str(tmp_path / "t.duckdb")) as con:
        con.execute(
            "create table sections as select (i // 3)::bigint as page_order,"
            " (i // 3)::varchar as wikipedia_id, (i % 3)::integer as section_order,"
            " 'Sentence ' || i::varchar || '. ' || repeat('word ', i % 400)"
            " as section_text from range(3000) t(i)"
        )
        full = chunk_sections_resumable(
            con, con.table("sections"), workers=1, batch_size=100
        ).fetchall()
        con.execute(f"delete from {CHECKPOINT_TABLE} where page_order >= 555")
        assert con.sql(f"select count(*) from {CHECKPOINT_TABLE}").fetchall() == [
            (1665,)
        ]
        # Marked, to tell rows kept from rows chunked again.
        con.execute(f"update {CHECKPOINT_TABLE} set wikipedia_id = 'kept'")
        resumed = chunk_sections_resumable(
            con, con.table("sections"), workers=1, batch_size=100
        ).fetchall()
        assert [row[1] for row in resumed] == ["kept"] * 1665 + [
            row[1] for row in full[1665:]
        ]
        assert [row[:1] + row[2:] for row in resumed] == [
            row[:1] + row[2:] for row in full
        ]
        assert len(full) == 3000


def test_sections_swapping_texts_change_the_fingerprint() -> None:
    """Texts moved between sections (of one page, or of two pages) with the
    same keys, count and bytes must not resume from the old chunks' offsets."""
    from kilt_chunks.build.checkpoint import sections_fingerprint

    def fingerprint(rows: list[tuple[int, str, int, str]]) -> tuple:
        values = ", ".join(f"({p}, '{w}', {s}, '{t}')" for p, w, s, t in rows)
        with duckdb.connect() as con:
            sections = con.sql(
                "select c0::bigint as page_order, c1 as wikipedia_id,"
                " c2::integer as section_order, c3 as section_text"
                f" from (values {values}) t(c0, c1, c2, c3)"
            )
            return sections_fingerprint(sections, DEFAULT_CHUNKING)

    base = fingerprint([(1, "7", 0, "Lead one."), (1, "7", 1, "Second part.")])
    within_page = fingerprint([(1, "7", 0, "Second part."), (1, "7", 1, "Lead one.")])
    base_pages = fingerprint([(1, "7", 0, "Lead one."), (2, "8", 0, "Lead two.")])
    across_pages = fingerprint([(1, "7", 0, "Lead two."), (2, "8", 0, "Lead one.")])
    assert base[1:] == within_page[1:] and base_pages[1:] == across_pages[1:]
    assert base[0] != within_page[0]
    assert base_pages[0] != across_pages[0]


@pytest.mark.full
def test_chunking_memory_stays_bounded_however_many_sections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Appended checkpoint rows are checkpointed to disk as chunking goes: a
    read of the sections held open for the whole step kept them in memory
    until a commit failed ("failed to pin block"; on the full dump after 11 M
    sections at the 128 MiB cap). Here: 300,000 sections, several windows,
    a 16 MiB cap (a streaming read of the sections fails there; the
    checkpoint's 15 columns need more than 8 MiB to start)."""
    from kilt_chunks.build import checkpoint
    from kilt_chunks.build.checkpoint import chunk_sections_resumable

    monkeypatch.setattr(checkpoint, "CHUNKING_MEMORY_LIMIT", 16 * 2**20)
    monkeypatch.setattr(checkpoint, "WINDOW_PAGES", 40_000, raising=False)
    with duckdb.connect(str(tmp_path / "t.duckdb")) as con:
        con.execute(
            "create table sections as select range + 1 as page_order,"
            " (range + 1)::varchar as wikipedia_id, 0::integer as section_order,"
            " 'Section ' || range::varchar || ' has one sentence.' as section_text"
            " from range(300000)"
        )
        chunks = chunk_sections_resumable(
            con, con.table("sections"), workers=1, batch_size=5000
        )
        assert chunks.aggregate("count(*), sum(num_chunks)").fetchall() == [
            (300_000, 300_000)
        ]


def test_load_records_the_longest_window_of_pages_and_the_memory_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load record carries the text bytes of the longest run of
    WINDOW_PAGES pages (windows in input order, across the loader's
    batches), and says when the memory limit is below the floor they need;
    a reused load is judged against the limit of the new build."""
    from kilt_chunks.build import page_load

    monkeypatch.setattr(page_load, "WINDOW_PAGES", 10)
    pages = [json.loads(line) for line in SAMPLE_JSONL.read_text().splitlines()]
    text_bytes = [sum(len(p.encode()) for p in page["text"]) for page in pages]
    expected = max(sum(text_bytes[k : k + 10]) for k in range(0, len(pages), 10))
    with duckdb.connect(str(tmp_path / "t.duckdb")) as con:
        con.execute("set memory_limit = '1GB'")
        # Batches of 7 rows: windows of 10 span two batches.
        row = page_load.load_pages(
            con, str(SAMPLE_JSONL), "pages", batch_size=7
        ).to_pylist()[0]
        assert row["max_window_text_bytes"] == expected
        assert row["memory_problem"] is None
        con.execute("set memory_limit = '1MB'")
        con.register(
            "record_df", pa.Table.from_pylist([row], page_load.LOAD_RECORD_SCHEMA)
        )
        con.execute("create table record as select * from record_df")
        again = page_load.load_pages(
            con, str(SAMPLE_JSONL), "pages", record_relation="record"
        ).to_pylist()[0]
    assert again["is_reused"] is True
    floor_mib = expected * page_load.SECTIONS_MEMORY_PER_TEXT_BYTE / 2**20
    assert again["memory_problem"].startswith(
        f"KILT_CHUNKS_MEMORY_LIMIT (1 MiB) is below the {floor_mib:,.0f} MiB this"
        " input needs: its longest run of 10 pages holds"
    )


def test_memory_floor_problem_names_the_variable_and_a_limit_that_passes() -> None:
    from kilt_chunks.build.page_load import memory_floor_problem

    # The long-page corpus the factor was measured on: 58.3 MB per 2,048
    # pages; its sections step fails at 512 MB and completes at 576 MiB.
    assert memory_floor_problem(58_300_000, 640 * 2**20) is None
    problem = memory_floor_problem(58_300_000, 512 * 10**6)
    assert problem is not None
    assert "KILT_CHUNKS_MEMORY_LIMIT (488 MiB) is below the 584 MiB" in problem
    assert "set KILT_CHUNKS_MEMORY_LIMIT=1GiB or more" in problem
    assert not problem.endswith("the machine is small for this input")
    # Issue 31 item 16: at the default limit (a share of the machine's
    # memory), the stop says the machine is what is too small.
    default = memory_floor_problem(58_300_000, 512 * 10**6, default_limit=True)
    assert default is not None and default.startswith(problem)
    assert default.endswith(
        "; KILT_CHUNKS_MEMORY_LIMIT is unset, so the limit was half of this"
        " machine's memory: the machine is small for this input"
    )


@pytest.mark.parametrize("floor_mib", [1, 300, 498, 512, 513, 1000, 5000])
def test_advised_memory_limit_passes_the_floor_check_it_came_from(
    floor_mib: int,
) -> None:
    """Issue 21 item 10: for a floor of 498 MiB the advice was 512MB, which
    DuckDB reads as 488 MiB and the next build refused again. The advice now
    is a binary size that DuckDB, set to it, reports at or above the floor."""
    import duckdb

    from kilt_chunks.build.page_load import (
        SECTIONS_MEMORY_PER_TEXT_BYTE,
        advised_memory_limit,
        memory_floor_problem,
    )
    from kilt_chunks.database import memory_limit_bytes

    floor = floor_mib * 2**20
    window = int(floor / SECTIONS_MEMORY_PER_TEXT_BYTE) + 1
    problem = memory_floor_problem(window, 64 * 2**20)
    advice = advised_memory_limit(int(window * SECTIONS_MEMORY_PER_TEXT_BYTE))
    if floor_mib > 64:
        assert problem is not None and f"KILT_CHUNKS_MEMORY_LIMIT={advice} " in problem
    with duckdb.connect(config={"memory_limit": advice}) as con:
        assert memory_floor_problem(window, memory_limit_bytes(con)) is None
    assert advised_memory_limit(498 * 2**20) == "512MiB"
    assert advised_memory_limit(1500 * 2**20) == "2GiB"


@pytest.mark.dbt
def test_connection_setup_errors_are_one_message_without_traceback(
    tmp_path: Path,
) -> None:
    """A bad memory limit or a database folder that does not exist stop dbt
    with the plain message (a dbt error), not 90-250 lines of tracebacks."""
    from kilt_chunks.dbt_plugin import check_database_folder

    check_database_folder(str(tmp_path / "x.duckdb"))
    with pytest.raises(ValueError, match="its folder .* does not exist"):
        check_database_folder(str(tmp_path / "missing" / "x.duckdb"))
    cases = {
        "KILT_CHUNKS_MEMORY_LIMIT": (
            "bogus",
            "'bogus' (KILT_CHUNKS_MEMORY_LIMIT) is not",
        ),
        "KILT_CHUNKS_DB": (
            str(tmp_path / "missing" / "x.duckdb"),
            f"its folder '{tmp_path / 'missing'}' does not exist",
        ),
    }
    for variable, (value, message) in cases.items():
        env = {**dbt_env(tmp_path), variable: value}
        returncode, output = invoke_dbt_in_process(
            dbt_command(tmp_path, {"kilt_path": str(SAMPLE_JSONL), "export_dir": ""}),
            env,
        )
        assert returncode != 0
        assert message in output
        assert "Traceback" not in output
