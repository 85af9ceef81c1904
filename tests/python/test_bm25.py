"""The BM25 baseline on a tiny hand-made corpus: the chunk that holds a
query's rare words comes first, shards merge to the same ranking, the run is
TREC format, and a stale index is noticed."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from kilt_chunks.bm25 import (
    Bm25Error,
    build_index,
    index_is_current,
    search,
    task_queries,
    write_trec_run,
)

CHUNKS = [
    (
        "doc-1_0::s-0::chunk-0",
        "# Albedo",
        "Albedo is the fraction of sunlight reflected.",
    ),
    ("doc-1_1::s-1::chunk-0", "# Albedo\n## Snow", "Fresh snow reflects most light."),
    ("doc-2_0::s-0::chunk-0", "# Aa River", "The Große Aa is a river in Lower Saxony."),
    ("doc-3_0::s-0::chunk-0", "# Enceladus", "Enceladus is a moon of Saturn."),
    ("doc-3_0::s-0::chunk-1", "# Enceladus", "Its icy surface is very bright."),
]


def make_db(path: Path, chunks=CHUNKS) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute(
            "create table kilt_chunks (chunk_id varchar, title varchar, text varchar)"
        )
        con.executemany("insert into kilt_chunks values (?, ?, ?)", chunks)
        con.execute(
            "create table kilt_build_info as select 'sample.jsonl' as kilt_path,"
            " 'fast' as splitter, 256 as chunk_size"
        )
        con.execute(
            "create table kilt_queries as select * from (values"
            " ('t', 'q1', 'which moon of saturn', 1),"
            " ('t', 'q2', 'rivers in lower saxony', 2),"
            " ('t', 'q3', 'the of and', 3)) as v(task, query_id, input, line_number)"
        )
    return path


def test_index_search_and_run(tmp_path: Path) -> None:
    db = make_db(tmp_path / "c.duckdb")
    meta = build_index(db, tmp_path / "index")
    assert (meta["num_chunks"], meta["shards"]) == (5, 1)
    assert index_is_current(db, tmp_path / "index")
    queries = task_queries(db, "t")
    assert [q for q, _ in queries] == ["q1", "q2", "q3"]
    hits = search(tmp_path / "index", [text for _, text in queries], k=3)
    assert hits[0][0][0] == "doc-3_0::s-0::chunk-0"
    # "rivers" is stemmed to "river"; the title path is indexed too.
    assert hits[1][0][0] == "doc-2_0::s-0::chunk-0"
    assert all(len(h) == 3 for h in hits)
    assert all(score == 0 for _, score in hits[2])  # only stop words
    run = tmp_path / "runs" / "bm25.t.trec"
    assert write_trec_run(run, [q for q, _ in queries], hits) == 9
    first = run.read_text().splitlines()[0].split()
    assert first[:4] == ["q1", "Q0", "doc-3_0::s-0::chunk-0", "1"]
    assert first[5] == "bm25s" and float(first[4]) > 0


def test_shards_give_the_same_top_chunks(tmp_path: Path) -> None:
    db = make_db(tmp_path / "c.duckdb")
    meta = build_index(db, tmp_path / "sharded", shard_chunks=2, batch_rows=3)
    assert meta["shards"] == 3
    one = build_index(db, tmp_path / "one")
    assert one["num_tokens"] == meta["num_tokens"]
    queries = ["which moon of saturn", "rivers in lower saxony"]
    sharded = search(tmp_path / "sharded", queries, k=2)
    assert [h[0][0] for h in sharded] == [
        h[0][0] for h in search(tmp_path / "one", queries, k=2)
    ]
    assert all(len(h) == 2 for h in sharded)


def test_a_changed_corpus_makes_the_index_stale(tmp_path: Path) -> None:
    db = make_db(tmp_path / "c.duckdb")
    build_index(db, tmp_path / "index")
    with duckdb.connect(str(db)) as con:
        con.execute("delete from kilt_chunks where chunk_id like 'doc-3%'")
    assert not index_is_current(db, tmp_path / "index")
    with pytest.raises(Bm25Error, match="task 'nope': no queries"):
        task_queries(db, "nope")
    with pytest.raises(Bm25Error, match="no BM25 index"):
        search(tmp_path / "missing", ["x"])
    with duckdb.connect(str(db)) as con:
        con.execute("delete from kilt_chunks")
    with pytest.raises(Bm25Error, match="kilt_chunks is empty"):
        build_index(db, tmp_path / "index")
