"""KILT task provenance mapped onto chunks: a handmade task file on the sample.

The task file `fixtures/kilt_tasks/handmade-dev-kilt.jsonl` holds spans on the
sample's pages 39 (Albedo) and 696 (Aa River): inside one paragraph, across
two paragraphs, across a chunk boundary, on list items, on the header of a
section without text, on a missing page, outside the page, page-level only,
and repeated. Expected chunks are found here from the page text alone: the
chunk whose text holds the span's sentence.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import FIXTURES, SAMPLE_JSONL, Build, read_pages, run_dbt_build
from kilt_chunks.provenance import (
    read_task_provenance,
    resolve_task_files,
    task_name,
    write_qrels,
)

TASK = "handmade-dev-kilt"
TASK_FILE = FIXTURES / "kilt_tasks" / f"{TASK}.jsonl"


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory, sample_build: Build) -> Build:
    """The sample build's DuckDB file alone (no scratch database: the
    provenance models read only the main file), with the provenance models
    rebuilt for the task."""
    workdir = tmp_path_factory.mktemp("provenance")
    shutil.copyfile(sample_build.db_path, workdir / sample_build.db_path.name)
    return run_dbt_build(
        workdir,
        SAMPLE_JSONL,
        select="int_provenance_spans_read+",
        extra_vars={"kilt_tasks": str(TASK_FILE)},
    )


@pytest.fixture(scope="module")
def pages() -> dict[str, list[str]]:
    return {page["wikipedia_id"]: page["text"] for page in read_pages(SAMPLE_JSONL)}


@pytest.fixture(scope="module")
def queries() -> dict[str, dict]:
    with TASK_FILE.open(encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    return {line["id"]: line for line in lines}


def chunk_holding(build: Build, wikipedia_id: str, *sentences: str) -> str:
    """The one chunk of the page whose text holds every sentence."""
    rows = build.query(
        f"select chunk_id, text from kilt_chunks where wikipedia_id = '{wikipedia_id}'"
    )
    found = [cid for cid, text in rows if all(s in text for s in sentences)]
    assert len(found) == 1, (wikipedia_id, sentences, found)
    return found[0]


def span_of(query: dict, answer_index: int = 0, entry_index: int = 0) -> tuple:
    entry = query["output"][answer_index]["provenance"][entry_index]
    return (
        entry["wikipedia_id"],
        entry["start_paragraph_id"],
        entry["start_character"],
        entry["end_paragraph_id"],
        entry["end_character"],
    )


def matches(build: Build) -> dict[str, dict[str, tuple]]:
    """query_id -> chunk_id -> (overlap_chars, span_chars, inside, span_id)."""
    out: dict[str, dict[str, tuple]] = {}
    for query_id, chunk_id, *rest in build.query(
        "select query_id, chunk_id, overlap_chars, span_chars,"
        " is_span_inside_chunk, span_id from kilt_provenance_chunks"
    ):
        out.setdefault(query_id, {})[chunk_id] = tuple(rest)
    return out


def test_fixture_spans_hold_the_answers(pages, queries) -> None:
    albedo = pages["39"]
    for query_id in ("handmade-1", "handmade-3"):
        _, sp, sc, ep, ec = span_of(queries[query_id])
        assert sp == ep
        assert albedo[sp][sc:ec] == queries[query_id]["output"][0]["answer"]
    _, sp, sc, ep, ec = span_of(queries["handmade-2"])
    assert (sp, ep) == (17, 18)
    assert albedo[18][:ec] == "Enceladus, a moon of Saturn"
    assert albedo[25].startswith("Section::::")  # handmade-5: a header
    assert albedo[26].startswith("Section::::")  # ... of a section without text


def test_span_inside_one_paragraph(build, queries) -> None:
    answer = queries["handmade-1"]["output"][0]["answer"]
    chunk = chunk_holding(build, "39", answer)
    assert matches(build)["handmade-1"] == {
        chunk: (len(answer), len(answer), True, "39@9:0-9:118")
    }


def test_span_across_paragraphs_in_one_chunk(build, pages, queries) -> None:
    _, sp, sc, ep, ec = span_of(queries["handmade-2"])
    head, tail = pages["39"][sp][sc:], pages["39"][ep][:ec]
    chunk = chunk_holding(build, "39", head + tail)
    overlap, span_chars, inside, _ = matches(build)["handmade-2"][chunk]
    assert len(matches(build)["handmade-2"]) == 1
    assert (overlap, span_chars, inside) == (len(head + tail),) * 2 + (True,)


def test_span_across_a_chunk_boundary_maps_to_both_chunks(build, queries) -> None:
    answer = queries["handmade-3"]["output"][0]["answer"]
    left, right = answer.split(" If ")
    right = "If " + right
    first = chunk_holding(build, "39", left)
    second = chunk_holding(build, "39", right)
    assert first != second
    found = matches(build)["handmade-3"]
    assert set(found) == {first, second}
    # The space between the chunks was stripped by the splitter: in no chunk.
    assert found[first][:3] == (len(left), len(answer), False)
    assert found[second][:3] == (len(right), len(answer), False)


def test_spans_on_list_items(build, pages) -> None:
    direct, indirect = pages["39"][55], pages["39"][56]
    assert direct.startswith("BULLET::::") and indirect.startswith("BULLET::::")
    chunk = chunk_holding(build, "39", direct[10:], '"Aerosol indirect effect."')
    found = {
        row[0]: row[1:]
        for row in build.query(
            "select span_id, chunk_id, overlap_chars, span_chars"
            " from kilt_provenance_chunks where query_id = 'handmade-4'"
        )
    }
    # Whole item, marker included: the marker is in no chunk.
    assert found["39@55:0-55:191"] == (chunk, len(direct) - 10, len(direct))
    assert found["39@56:12-56:38"] == (chunk, 26, 26)


def test_repeated_span_is_one_span_and_second_page_is_matched(build, queries) -> None:
    answer = queries["handmade-1"]["output"][0]["answer"]
    expected = {
        chunk_holding(build, "39", answer),
        chunk_holding(build, "696", "Große Aa, a river in Lower Saxony"),
    }
    assert set(matches(build)["handmade-10"]) == expected
    assert build.query(
        "select num_entries from int_provenance_spans_checked"
        " where query_id = 'handmade-10' order by span_id"
    ) == [(2,), (1,)]


def test_rejected_and_not_found_spans(build) -> None:
    rows = build.query(
        "select query_id, span_id, reject_reason, is_not_found"
        " from kilt_provenance_rejected"
    )
    not_found = rows[0][2]
    assert not_found.startswith("overlaps no chunk")
    assert rows == [
        ("handmade-5", "39@25:11-25:50", not_found, True),
        ("handmade-6", "99999999@1:0-1:10", "page not in corpus", False),
        (
            "handmade-7",
            "39@500:0-500:5",
            "start_paragraph_id 500 beyond page (80 paragraphs)",
            False,
        ),
        (
            "handmade-7",
            "39@8:0-8:9999",
            "end_character 9999 beyond paragraph 8 (573 characters)",
            False,
        ),
        ("handmade-8", "696@:-:", "no span offsets (page-level provenance)", False),
    ]


def test_summary_counts(build) -> None:
    (summary,) = build.query(
        "select task, num_queries, num_queries_with_provenance,"
        " num_queries_with_chunks, num_provenance, num_spans, num_spans_one_chunk,"
        " num_spans_several_chunks, num_spans_not_found, num_spans_rejected,"
        " num_qrels from kilt_provenance_summary"
    )
    # 10 queries (handmade-9 has no output); 13 entries, 12 distinct spans:
    # 6 in one chunk (1, 2, 4 x2, 10 x2), 1 across chunks (3), 1 not found (5),
    # 4 rejected (6, 7 x2, 8); 7 (query, chunk) pairs from 5 queries.
    assert summary == (TASK, 10, 9, 5, 13, 12, 6, 1, 1, 4, 7)


def test_qrels_file(build) -> None:
    order = {
        cid: (wid, s, c)
        for cid, wid, s, c in build.query(
            "select chunk_id, wikipedia_id, section_order, chunk_order from kilt_chunks"
        )
    }
    pairs = {(q, c) for q, chunks in matches(build).items() for c in chunks}
    expected = "".join(
        f"{q} 0 {c} 1\n" for q, c in sorted(pairs, key=lambda p: (p[0], order[p[1]]))
    )
    path = build.export_dir / "qrels" / f"{TASK}.qrels"
    assert path.read_text(encoding="utf-8") == expected
    assert len(expected.splitlines()) == 7
    assert build.query("select * from kilt_provenance_qrels") == [
        (TASK, str(path), 5, 7)
    ]


def test_task_files_from_file_folder_and_glob(tmp_path: Path) -> None:
    for name in ("b-dev-kilt.jsonl", "a-train-kilt.json.gz", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    assert [t for t, _ in resolve_task_files(str(tmp_path))] == [
        "a-train-kilt",
        "b-dev-kilt",
    ]
    assert [t for t, _ in resolve_task_files(str(tmp_path / "b-*"))] == ["b-dev-kilt"]
    assert resolve_task_files("") == []
    assert task_name("/x/nq-dev-kilt.jsonl") == "nq-dev-kilt"
    with pytest.raises(FileNotFoundError, match="no KILT task file"):
        resolve_task_files(str(tmp_path / "missing-*.jsonl"))
    (tmp_path / "b-dev-kilt.json").write_text("")
    with pytest.raises(ValueError, match="both give task 'b-dev-kilt'"):
        resolve_task_files(str(tmp_path))


def test_read_task_provenance_keeps_queries_without_provenance() -> None:
    with duckdb.connect() as con:
        rows = read_task_provenance(con, str(TASK_FILE)).fetchall()
        empty = read_task_provenance(con, "")
        assert empty.fetchall() == []
        assert len(empty.columns) == 13
    assert len(rows) == 14  # 13 entries + handmade-9, which has no output
    assert {r[2] for r in rows if r[4] is None} == {"handmade-9"}


def test_write_qrels_writes_nothing_without_export_dir(tmp_path: Path) -> None:
    with duckdb.connect() as con:
        rel = con.sql("select 'q' as query_id, 'c' as chunk_id, 't' as task")
        assert write_qrels(rel, ["t"], "").num_rows == 0
        assert write_qrels(rel, [], str(tmp_path)).num_rows == 0
    assert list(tmp_path.iterdir()) == []


def test_build_without_tasks_removes_stale_qrels(tmp_path: Path) -> None:
    """qrels of an earlier build name chunks that may no longer exist."""
    qrels = tmp_path / "qrels"
    qrels.mkdir()
    (qrels / "old-task.qrels").write_text("q 0 doc-1_0::s-0::chunk-0 1\n")
    (qrels / "notes.txt").write_text("mine\n")
    with duckdb.connect() as con:
        rel = con.sql("select 'q' as query_id, 'c' as chunk_id, 't' as task")
        assert write_qrels(rel, [], str(tmp_path)).num_rows == 0
    assert sorted(p.name for p in qrels.iterdir()) == ["notes.txt"]


def test_partial_marts_build_keeps_qrels_and_other_files(
    tmp_path: Path, sample_build: Build
) -> None:
    """The export replaces only its own parts of export_dir (data/, figures/,
    README.md): a partial build (`--select path:models/marts` skips the Python
    marts, so the qrels stay; `kilt_export` exports again) must not take the
    qrels, or a user's own files, with it."""
    from conftest import copy_build

    copy_build(sample_build, tmp_path)
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "notes.txt").write_text("mine\n")
    (exports / "kilt_chunks_0.parquet").write_bytes(b"old layout")
    task_vars = {"kilt_tasks": str(TASK_FILE)}
    run_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        select="int_provenance_spans_read+ kilt_build_info",
        extra_vars=task_vars,
    )
    qrels = exports / "qrels" / f"{TASK}.qrels"
    written = qrels.read_text(encoding="utf-8")
    assert len(written.splitlines()) == 7
    partial = run_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        select="path:models/marts kilt_export",
        extra_vars=task_vars,
    )
    # A file of the old layout (export straight into export_dir) is gone.
    assert not (exports / "kilt_chunks_0.parquet").exists()
    assert qrels.read_text(encoding="utf-8") == written
    assert (exports / "notes.txt").read_text() == "mine\n"
    files = sorted((exports / "data" / "chunks").glob("*.parquet"))
    with duckdb.connect() as con:
        assert con.sql(
            f"select count(*) from read_parquet({[str(f) for f in files]})"
        ).fetchall() == partial.query("select count(*) from kilt_chunks")
