"""KILT task provenance mapped onto chunks: a handmade task file on the sample.

The task file `fixtures/kilt_tasks/handmade-dev-kilt.jsonl` holds spans on the
sample's pages 39 (Albedo) and 696 (Aa River): inside one paragraph, across
two paragraphs, across a chunk boundary, on list items, on the header of a
section without text, on a missing page, outside the page, page-level only,
repeated, two evidence sets on two pages, and three lines that cannot be a
query (an `output` that is an object, an id with a space, a truncated line).
Expected chunks are found here from the page text alone: the chunk whose text
holds the span's sentence.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import (
    FIXTURES,
    SAMPLE_JSONL,
    Build,
    failed_dbt_build,
    read_pages,
    run_dbt_build,
)
from kilt_chunks.evaluation.provenance import (
    KILT_SNAPSHOT_DATE,
    TASK_FILE_SUFFIXES,
    gold_pages_check,
    resolve_task_files,
    task_name,
    write_task_files,
)

TASK = "handmade-dev-kilt"
TASK_FILE = FIXTURES / "kilt_tasks" / f"{TASK}.jsonl"


@pytest.fixture(scope="module")
def build(sample_task_build: Build) -> Build:
    """The sample with the provenance models rebuilt for the task (the
    shared session build of conftest.py)."""
    return sample_task_build


@pytest.fixture(scope="module")
def pages() -> dict[str, list[str]]:
    return {page["wikipedia_id"]: page["text"] for page in read_pages(SAMPLE_JSONL)}


@pytest.fixture(scope="module")
def queries() -> dict[str, dict]:
    with TASK_FILE.open(encoding="utf-8") as f:
        # The first 11 lines; 12-14 are the bad lines.
        lines = [json.loads(line) for line in f.readlines()[:11]]
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


@pytest.mark.dbt
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


@pytest.mark.dbt
def test_span_inside_one_paragraph(build, queries) -> None:
    answer = queries["handmade-1"]["output"][0]["answer"]
    chunk = chunk_holding(build, "39", answer)
    assert matches(build)["handmade-1"] == {
        chunk: (len(answer), len(answer), True, "39@9:0-9:118")
    }


@pytest.mark.dbt
def test_span_across_paragraphs_in_one_chunk(build, pages, queries) -> None:
    _, sp, sc, ep, ec = span_of(queries["handmade-2"])
    head, tail = pages["39"][sp][sc:], pages["39"][ep][:ec]
    chunk = chunk_holding(build, "39", head + tail)
    overlap, span_chars, inside, _ = matches(build)["handmade-2"][chunk]
    assert len(matches(build)["handmade-2"]) == 1
    assert (overlap, span_chars, inside) == (len(head + tail),) * 2 + (True,)


@pytest.mark.dbt
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


@pytest.mark.dbt
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


@pytest.mark.dbt
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


@pytest.mark.dbt
def test_rejected_and_not_found_spans(build) -> None:
    """Page-level provenance (handmade-8) is kept, not rejected; bad lines are
    rejected with their file and line, and the build went on."""
    rows = build.query(
        "select query_id, line_number, span_id, reject_reason, is_not_found"
        " from kilt_provenance_rejected"
    )
    not_found = rows[0][3]
    assert not_found.startswith("overlaps no chunk")
    assert rows == [
        ("handmade-5", 5, "39@25:11-25:50", not_found, True),
        ("handmade-6", 6, "99999999@1:0-1:10", "page not in corpus", False),
        (
            "handmade-7",
            7,
            "39@500:0-500:5",
            "start_paragraph_id 500 beyond page (80 paragraphs)",
            False,
        ),
        (
            "handmade-7",
            7,
            "39@8:0-8:9999",
            "end_character 9999 beyond paragraph 8 (573 characters)",
            False,
        ),
        ("handmade-12", 12, None, "output is object, not a list", False),
        ("", 13, None, "id is empty", False),
        (None, 14, None, "invalid JSON (truncated or malformed line)", False),
    ]
    assert build.query("select distinct source_file from kilt_provenance_rejected") == [
        (str(TASK_FILE),)
    ]


@pytest.mark.dbt
def test_summary_counts(build) -> None:
    (summary,) = build.query(
        "select task, num_lines, num_lines_rejected, num_queries,"
        " num_queries_with_provenance, num_queries_with_chunks,"
        " num_queries_without_chunks, num_provenance, num_spans,"
        " num_spans_page_level, num_spans_one_chunk, num_spans_several_chunks,"
        " num_spans_not_found, num_spans_rejected, num_qrels,"
        " num_chunk_qrels_whole_span, num_page_qrels from kilt_provenance_summary"
    )
    # 14 lines, 3 rejected (12-14); 11 queries (handmade-9 has no output);
    # 15 entries, 14 distinct spans: 1 page level (8), 8 in one chunk (1, 2,
    # 4 x2, 10 x2, 11 x2), 1 across chunks (3), 1 not found (5), 3 rejected
    # (6, 7 x2); 9 (query, chunk) pairs from 6 queries, 7 of them whole
    # spans; 12 (query, page) pairs.
    assert summary == (TASK, 14, 3, 11, 10, 6, 5, 15, 14, 1, 8, 1, 1, 3, 9, 7, 12)
    from kilt_chunks.cli import build_summary

    assert (
        f"  task {TASK}: 11 queries, 5 without any relevant chunk; 12 page and 9"
        " chunk qrels; 3 lines rejected"
    ) in build_summary(str(build.db_path)).splitlines()


@pytest.mark.dbt
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
    assert len(expected.splitlines()) == 9
    folder = build.export_dir / "qrels"
    assert build.query(
        "select kind, path, num_queries, num_lines from kilt_provenance_qrels"
    ) == [
        ("chunks", str(path), 6, 9),
        ("chunks_graded", str(folder / f"{TASK}.graded.qrels"), 6, 9),
        ("pages", str(folder / f"{TASK}.pages.qrels"), 10, 12),
        ("topics", str(folder / f"{TASK}.topics.tsv"), 11, 11),
        ("queries", str(folder / f"{TASK}.queries.jsonl"), 11, 11),
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


@pytest.mark.dbt
def test_spans_read_keep_queries_without_provenance(build) -> None:
    rows = build.query(
        "select query_id, provenance_index from int_provenance_spans_read"
    )
    assert len(rows) == 16  # 15 entries + handmade-9, which has no output
    assert {q for q, index in rows if index is None} == {"handmade-9"}


def _relations(con: duckdb.DuckDBPyConnection):
    chunks = con.sql(
        "select 't' as task, 'q' as query_id, 'c' as chunk_id, 2 as relevance"
    )
    pages = con.sql(
        "select 't' as task, 'q' as query_id, '39' as wikipedia_id, 1 as relevance"
    )
    queries = con.sql("select 't' as task, 'q' as query_id, 'a\tb\nc' as input")
    return chunks, pages, queries


def test_write_task_files_writes_nothing_without_export_dir(tmp_path: Path) -> None:
    with duckdb.connect() as con:
        assert write_task_files(*_relations(con), ["t"], "").num_rows == 0
        assert write_task_files(*_relations(con), [], str(tmp_path)).num_rows == 0
    assert list(tmp_path.iterdir()) == []


def test_write_task_files_formats(tmp_path: Path) -> None:
    with duckdb.connect() as con:
        written = write_task_files(*_relations(con), ["t"], str(tmp_path))
    assert sorted(written.column("kind").to_pylist()) == sorted(TASK_FILE_SUFFIXES)
    folder = tmp_path / "qrels"
    assert (folder / "t.qrels").read_text() == "q 0 c 1\n"
    assert (folder / "t.graded.qrels").read_text() == "q 0 c 2\n"
    assert (folder / "t.pages.qrels").read_text() == "q 0 39 1\n"
    assert (folder / "t.topics.tsv").read_text() == "q\ta b c\n"
    assert json.loads((folder / "t.queries.jsonl").read_text()) == {
        "task": "t",
        "query_id": "q",
        "input": "a\tb\nc",
    }


def test_write_task_files_encodes_ids_with_white_space(tmp_path: Path) -> None:
    """A task's page id ``12 34`` wrote ``q 0 12 34 1``, five fields, into
    pages.qrels; every id is now one field, percent-encoded as the query ids
    are (trec_id), and read back whole by read_qrels."""
    from kilt_chunks.evaluation import read_qrels

    with duckdb.connect() as con:
        chunks = con.sql(
            "select 't' as task, 'o 1' as query_id, 'c%1' as chunk_id, 2 as relevance"
        )
        pages = con.sql(
            "select 't' as task, 'o 1' as query_id, '12 34' as wikipedia_id,"
            " 1 as relevance"
        )
        queries = con.sql("select 't' as task, 'o 1' as query_id, 'x' as input")
        write_task_files(chunks, pages, queries, ["t"], str(tmp_path))
    folder = tmp_path / "qrels"
    assert (folder / "t.pages.qrels").read_text() == "o%201 0 12%2034 1\n"
    assert (folder / "t.qrels").read_text() == "o%201 0 c%251 1\n"
    assert (folder / "t.graded.qrels").read_text() == "o%201 0 c%251 2\n"
    assert read_qrels(folder / "t.pages.qrels") == {"o 1": {"12 34": 1}}
    assert read_qrels(folder / "t.graded.qrels") == {"o 1": {"c%1": 2}}


def _check(kind: str, timestamps: dict[str, str | None]) -> list[dict]:
    """gold_pages_check on three spans of task t (pages 39, 39, 696: one
    with offsets each), one page-level span and one on a page without
    chunks, for pages of these revision timestamps."""
    with duckdb.connect() as con:
        spans = con.sql(
            "select * from (values ('t', '39', false), ('t', '39', false),"
            " ('t', '696', false), ('t', '696', true), ('t', '5', false))"
            " as s(task, wikipedia_id, is_page_level)"
        )
        rows = ", ".join(
            f"('{page}', {'NULL' if ts is None else repr(ts)})"
            for page, ts in timestamps.items()
            for _ in range(2)  # two chunks per page
        )
        chunks = con.sql(f"select * from (values {rows}) as c(wikipedia_id, timestamp)")
        table = gold_pages_check(
            spans, chunks, ["t", "u"], input_kind=kind, input_name="x"
        )
    return table.to_pylist()


def test_gold_pages_check_rules() -> None:
    """Issue 31 item 15, by hand: 3 spans with offsets on pages with chunks
    (page 5 has none; the page-level span has no offsets); task u has no
    span."""
    sample = {"39": "2016-04-18T23:12:22Z", "696": "2016-03-02T10:29:10Z"}
    t, u = _check("pages", sample)
    assert (t["num_spans"], t["num_spans_revised_later"]) == (3, 0)
    assert t["warning"] is None and u["num_spans"] == 0 and u["warning"] is None
    # The last day of KILT's snapshot is not later; the next one is.
    assert KILT_SNAPSHOT_DATE == "2019-08-01"
    later = {"39": "2019-08-02T00:00:00Z", "696": "2019-08-01T23:59:59Z"}
    t, u = _check("pages", later)
    assert (t["num_spans"], t["num_spans_revised_later"]) == (3, 2)
    assert t["warning"].startswith("task t: 2 of 3 provenance spans are in pages")
    assert u["warning"] is None
    # from-dump pages: every located span, whatever the date.
    t, u = _check("dump", sample)
    assert t["warning"].startswith("task t: 3 provenance spans located by their")
    assert "kilt-chunks from-dump rendered (x)" in t["warning"]
    assert u["warning"] is None  # no span, nothing to warn about
    # A timestamp that is not ISO is counted as undated, not as later.
    t, _ = _check("kilt", {"39": "18 April 2016", "696": None})
    assert (t["num_spans_undated"], t["num_spans_revised_later"]) == (3, 0)
    assert t["warning"] is None and t["input_kind"] == "kilt"


#: Spans of the handmade task with offsets on a page with chunks (39, 696):
#: every span but handmade-6's (page not in the corpus) and handmade-8's
#: (page level), handmade-10 and -11 two each, handmade-4 and -7 two each.
LOCATED_SPANS = 12


@pytest.mark.dbt
def test_gold_on_the_pages_it_was_made_on_gives_no_warning(build: Build) -> None:
    """Issue 31 item 15, the bundled sample: the handmade task was written on
    these pages (KILT-format JSON lines, revisions of 2016): no warning."""
    from kilt_chunks.evaluation import gold_from_database

    assert build.query(
        "select task, input_kind, num_spans, num_spans_revised_later,"
        " num_spans_undated, warning from kilt_provenance_pages_check"
    ) == [(TASK, "pages", LOCATED_SPANS, 0, 0, None)]
    assert "PASS warn_on_gold_offsets_on_other_pages" in build.output
    notes = gold_from_database(build.db_path, TASK).notes
    assert not any("WARNING" in note for note in notes)


@pytest.mark.dbt
def test_gold_on_from_dump_pages_is_a_warning(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, capsys
) -> None:
    """Issue 31 item 15: the handmade task on a from-dump build of the test
    dump (the same 2016 revisions, rendered by from-dump: 7 chunk qrels,
    some from offsets that point at other text) ended WARN=0; now dbt warns
    and ``eval --task`` prints the warning."""
    from dump_helpers import enwiki_dump_dbt_build

    from kilt_chunks.cli import main

    build = enwiki_dump_dbt_build(tmp_path_factory)  # with the task at TASK_FILE
    assert "WARN 1 warn_on_gold_offsets_on_other_pages" in build.output
    [(kind, spans, later, warning)] = build.query(
        "select input_kind, num_spans, num_spans_revised_later, warning"
        " from kilt_provenance_pages_check"
    )
    assert (kind, spans, later) == ("dump", LOCATED_SPANS, 0)
    assert warning.startswith(
        f"task {TASK}: {LOCATED_SPANS} provenance spans located by their offsets"
        " in pages that kilt-chunks from-dump rendered"
    )
    run = tmp_path / "run.trec"
    run.write_text("handmade-1 Q0 doc-39_0::s-1::chunk-0 1 1 x\n")
    code = main(["eval", str(run), "--task", TASK, "--db", str(build.db_path)])
    assert code == 0
    assert f"{LOCATED_SPANS:>8,}  spans checked; WARNING {warning}" in (
        capsys.readouterr().out
    )


def test_build_without_tasks_removes_stale_qrels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """qrels of an earlier build name chunks that may no longer exist. Issue
    31 item 9: they went without a word; the build says which go."""
    qrels = tmp_path / "qrels"
    qrels.mkdir()
    (qrels / "old-task.qrels").write_text("q 0 doc-1_0::s-0::chunk-0 1\n")
    (qrels / "old-task.pages.qrels").write_text("q 0 1 1\n")
    (qrels / "old-task.topics.tsv").write_text("q\tx\n")
    (qrels / "notes.txt").write_text("mine\n")
    from kilt_chunks import progress

    warnings: list[str] = []
    monkeypatch.setattr(progress, "emit_warning", warnings.append)
    with duckdb.connect() as con:
        assert write_task_files(*_relations(con), [], str(tmp_path)).num_rows == 0
    assert sorted(p.name for p in qrels.iterdir()) == ["notes.txt"]
    assert warnings == [
        "kilt_provenance_qrels: removes 3 evaluation files of tasks this"
        f" build did not read from {os.path.realpath(qrels)}: old-task.pages.qrels,"
        " old-task.qrels, old-task.topics.tsv; pass the same kilt_tasks again to"
        " keep them"
    ]
    # Files of the tasks read again are replaced, without a warning.
    with duckdb.connect() as con:
        write_task_files(*_relations(con), ["t"], str(tmp_path))
        write_task_files(*_relations(con), ["t"], str(tmp_path))
    assert len(warnings) == 1


@pytest.mark.dbt
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
    task_vars = {"kilt_tasks": str(TASK_FILE)}
    run_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        select="int_task_lines_read+ kilt_build_info",
        extra_vars=task_vars,
        data_tests=False,
    )
    qrels = exports / "qrels" / f"{TASK}.qrels"
    written = qrels.read_text(encoding="utf-8")
    assert len(written.splitlines()) == 9
    partial = run_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        select="path:models/marts kilt_export",
        extra_vars=task_vars,
        data_tests=False,
    )
    assert qrels.read_text(encoding="utf-8") == written
    assert (exports / "notes.txt").read_text() == "mine\n"
    files = sorted((exports / "data" / "chunks").glob("*.parquet"))
    with duckdb.connect() as con:
        assert con.sql(
            f"select count(*) from read_parquet({[str(f) for f in files]})"
        ).fetchall() == partial.query("select count(*) from kilt_chunks")


@pytest.mark.dbt
def test_queries_table(build) -> None:
    rows = build.query(
        "select query_id, answers, num_evidence_sets, evidence_sets,"
        " num_relevant_pages, num_relevant_chunks, is_evidence_in_chunks,"
        " dataset, task_family from kilt_queries order by line_number"
    )
    assert [r[0] for r in rows] == [f"handmade-{n}" for n in range(1, 12)]
    by_id = {r[0]: r[1:] for r in rows}
    assert by_id["handmade-4"][:2] == (
        ["Aerosol indirect effect", "Aerosol direct effect"],
        1,  # two outputs, the same page: one evidence set
    )
    assert by_id["handmade-10"][1:5] == (2, [["39"], ["39", "696"]], 2, 2)
    # In output order (KILT's get_rank order): page 696 is the first output's.
    assert by_id["handmade-11"][1:5] == (2, [["696"], ["39"]], 2, 2)
    assert by_id["handmade-9"][:5] == ([], 0, [], 0, 0)
    # Without any relevant chunk: a header of a dropped section (5), a page
    # not in the corpus (6), bad offsets (7), page-level provenance (8), no
    # output (9).
    assert [q for q, *rest in rows if not rest[5]] == [
        f"handmade-{n}" for n in (5, 6, 7, 8, 9)
    ]
    # An unknown task file is labelled with its own name.
    assert {(r[7], r[8]) for r in rows} == {(TASK, None)}


@pytest.mark.dbt
def test_page_qrels_keep_page_level_provenance(build) -> None:
    rows = build.query(
        "select query_id, wikipedia_id, relevance, is_page_level_only,"
        " is_page_in_corpus from kilt_qrels_pages"
        " where query_id in ('handmade-6', 'handmade-8', 'handmade-10')"
    )
    assert rows == [
        ("handmade-10", "39", 1, False, True),
        ("handmade-10", "696", 1, False, True),
        ("handmade-6", "99999999", 1, False, False),
        ("handmade-8", "696", 1, True, True),
    ]
    text = (build.export_dir / "qrels" / f"{TASK}.pages.qrels").read_text()
    assert "handmade-8 0 696 1\n" in text and len(text.splitlines()) == 12


@pytest.mark.dbt
def test_graded_chunk_qrels(build, queries) -> None:
    """2 where the chunk holds the whole span, 1 for each of the two chunks
    that share handmade-3's span."""
    graded = {
        (q, c): r
        for q, c, r in build.query(
            "select query_id, chunk_id, relevance from kilt_qrels_chunks"
        )
    }
    answer = queries["handmade-3"]["output"][0]["answer"]
    left, right = answer.split(" If ")
    assert graded[("handmade-3", chunk_holding(build, "39", left))] == 1
    assert graded[("handmade-3", chunk_holding(build, "39", "If " + right))] == 1
    assert {r for (q, _), r in graded.items() if q != "handmade-3"} == {2}
    text = (build.export_dir / "qrels" / f"{TASK}.graded.qrels").read_text()
    assert sorted(text.splitlines()) == sorted(
        f"{q} 0 {c} {r}" for (q, c), r in graded.items()
    )


@pytest.mark.dbt
def test_queries_and_topics_files(build) -> None:
    folder = build.export_dir / "qrels"
    topics = (folder / f"{TASK}.topics.tsv").read_text(encoding="utf-8")
    assert topics.splitlines()[0] == (
        "handmade-1\tHow is Earth's surface albedo estimated?"
    )
    with (folder / f"{TASK}.queries.jsonl").open(encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    assert len(records) == 11
    assert records[9]["evidence_sets"] == [["39"], ["39", "696"]]
    assert records[4]["is_evidence_in_chunks"] is False


@pytest.mark.dbt
def test_eval_of_a_perfect_run_and_of_bm25(build, tmp_path: Path) -> None:
    """A run ranking each query's gold chunks (best grade first): chunk nDCG@10
    1 for the 6 queries with chunk qrels, 0 for the other 5, mean 6/11; its
    page ranking finds every evidence set of those 6 (handmade-10 and -11
    have two), so page R-precision and recall@5 are 6/11 too. Then the
    README's commands: BM25 run, eval."""
    from kilt_chunks.cli import main

    graded = build.query(
        "select query_id, chunk_id, relevance from kilt_qrels_chunks"
        " order by query_id, relevance desc, wikipedia_id, section_order,"
        " chunk_order"
    )
    run = tmp_path / "perfect.trec"
    lines, rank = [], {}
    for q, c, _ in graded:
        rank[q] = rank.get(q, 0) + 1
        lines.append(f"{q} Q0 {c} {rank[q]} {100 - rank[q]} perfect\n")
    run.write_text("".join(lines))
    db = str(build.db_path)
    assert main(["eval", str(run), "--task", TASK, "--db", db]) == 0
    result = json.loads(Path(f"{run}.eval.json").read_text())
    assert result["chunk"]["measures"]["chunk nDCG@10"] == pytest.approx(6 / 11)
    assert result["chunk"]["measures"]["chunk MRR@10"] == pytest.approx(6 / 11)
    assert result["page"]["measures"]["Rprec"] == pytest.approx(6 / 11)
    assert result["page"]["measures"]["recall@5"] == pytest.approx(6 / 11)
    assert result["page"]["num_queries_without_evidence"] == 1  # handmade-9
    assert result["chunk"]["num_queries_with_relevant"] == 6
    # trec_eval's convention: the 6 queries with a relevant chunk only.
    assert result["chunk"]["measures_trec_eval"]["chunk nDCG@10"] == pytest.approx(1)
    assert result["num_queries"] == 11

    bm25_run = tmp_path / "bm25.trec"
    index = tmp_path / "index"
    args = ["--task", TASK, "--db", db, "--index", str(index)]
    assert main(["bm25", *args, "--run", str(bm25_run)]) == 0
    ranked = bm25_run.read_text().splitlines()
    assert len({line.split()[0] for line in ranked}) == 11
    answer = "Earth's surface albedo is regularly estimated"
    top = next(line.split()[2] for line in ranked if line.startswith("handmade-1 "))
    assert top == chunk_holding(build, "39", answer)
    out = tmp_path / "bm25.json"
    assert (
        main(["eval", str(bm25_run), "--task", TASK, "--db", db, "--json", str(out)])
        == 0
    )
    scored = json.loads(out.read_text())
    assert scored["per_query"]["handmade-1"]["chunk MRR@10"] == 1.0
    assert scored["per_query"]["handmade-9"]["Rprec"] == 0.0
    assert main(["eval", str(bm25_run), "--task", "nope", "--db", db]) == 1


@pytest.mark.dbt
def test_missing_task_path_stops_the_build_with_one_line(
    tmp_path: Path, sample_build: Build
) -> None:
    shutil.copyfile(sample_build.db_path, tmp_path / sample_build.db_path.name)
    missing = tmp_path / "no-such-dev-kilt.jsonl"
    failed = failed_dbt_build(
        tmp_path,
        SAMPLE_JSONL,
        select="int_task_lines_read",
        extra_vars={"kilt_tasks": str(missing)},
    )
    assert f"kilt_tasks {str(missing)!r}: no KILT task file there" in failed


@pytest.mark.dbt
def test_task_tables_are_configs_of_the_dataset_export(build: Build) -> None:
    """A build that read kilt_tasks exports its queries and page and chunk
    qrels as configs of the dataset folder, rows in table order."""
    import datasets

    for config, model, key in (
        ("queries", "kilt_queries", "query_id"),
        ("qrels_pages", "kilt_qrels_pages", "wikipedia_id"),
        ("qrels_chunks", "kilt_qrels_chunks", "chunk_id"),
    ):
        # handmade-dev-kilt is a dev file: split validation.
        loaded = datasets.load_dataset(
            str(build.export_dir), config, split="validation"
        )
        rows = build.query(f"select query_id, {key} from {model}")
        assert rows, model
        assert list(zip(loaded["query_id"], loaded[key], strict=True)) == rows
    card = (build.export_dir / "README.md").read_text(encoding="utf-8")
    assert "config_name: qrels_chunks" in card
