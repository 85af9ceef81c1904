"""The BM25 baseline (tantivy) on a tiny hand-made corpus: the chunk that
holds a query's rare words comes first, a score equals BM25 worked out by
hand, a killed index resumes to the same index, the run is TREC format (ids
with white space percent-encoded), and a stale index is noticed."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from kilt_chunks.evaluation import trec_id, untrec_id
from kilt_chunks.evaluation.bm25 import (
    Bm25Error,
    build_index,
    chunk_ids_of_rows,
    chunk_rows,
    corpus_fingerprint,
    index_chunks,
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
    meta = build_index(db, tmp_path / "index", progress_seconds=0)
    assert (meta["num_chunks"], meta["num_indexed"], meta["resumed_from"]) == (5, 5, 0)
    assert index_is_current(db, tmp_path / "index")
    queries = task_queries(db, "t")
    assert [q for q, _ in queries] == ["q1", "q2", "q3"]
    hits = search(
        tmp_path / "index", [text for _, text in queries], k=3, db_path=db, threads=2
    )
    assert hits[0][0][0] == "doc-3_0::s-0::chunk-0"
    # "rivers" is stemmed to "river"; the title path is indexed too.
    assert hits[1][0][0] == "doc-2_0::s-0::chunk-0"
    # Only stop words: no term, no chunk.
    assert [len(h) for h in hits] == [1, 1, 0]
    # Rows are kilt_chunks rowids (storage order); one DuckDB query for all.
    assert chunk_ids_of_rows(db, [3, 0, 3, 99]) == [
        "doc-3_0::s-0::chunk-0",
        "doc-1_0::s-0::chunk-0",
        "doc-3_0::s-0::chunk-0",
        None,
    ]
    run = tmp_path / "runs" / "bm25.t.trec"
    assert write_trec_run(run, [q for q, _ in queries], hits) == 2
    first = run.read_text().splitlines()[0].split()
    assert first[:4] == ["q1", "Q0", "doc-3_0::s-0::chunk-0", "1"]
    assert first[5] == "bm25-tantivy" and float(first[4]) > 0


def test_scores_are_corpus_wide_bm25(tmp_path: Path) -> None:
    """tantivy's score of a one-term query, worked out by hand: BM25 with
    k1 1.2, b 0.75, idf ln(1 + (N - n + 0.5) / (n + 0.5)), over all 5 chunks.
    "saturn" is in one chunk (n 1), doc-3 chunk 0, of 4 tokens after stop
    words (title "enceladus", then enceladus, moon, saturn); the average
    length is 29 / 5 = 5.8 tokens."""
    import math

    db = make_db(tmp_path / "c.duckdb")
    build_index(db, tmp_path / "index", progress_seconds=0)
    (hits,) = search(tmp_path / "index", ["saturn"], k=5, db_path=db)
    assert [c for c, _ in hits] == ["doc-3_0::s-0::chunk-0"]
    # Token counts per chunk after analysis (title | text; "most", "its",
    # "very" are no stop words of tantivy's English list): albedo | albedo
    # fraction sunlight reflect = 5; albedo snow | fresh snow reflect most
    # light = 7; aa river | große aa river lower saxoni = 7; enceladus |
    # enceladus moon saturn = 4; enceladus | it ici surfac veri bright = 6.
    lengths = [5, 7, 7, 4, 6]
    avg = sum(lengths) / len(lengths)
    idf = math.log(1 + (5 - 1 + 0.5) / (1 + 0.5))
    tf, dl = 1, 4
    expected = idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avg))
    assert expected == pytest.approx(1.58789, rel=1e-5)
    assert hits[0][1] == pytest.approx(expected, rel=1e-6)


def test_a_killed_index_resumes_at_its_last_commit(tmp_path: Path) -> None:
    db = make_db(tmp_path / "c.duckdb")
    with duckdb.connect(str(db), read_only=True) as con:
        fingerprint = corpus_fingerprint(con)

    def dying():
        yield from chunk_rows(db, batch_rows=2)
        raise KeyboardInterrupt  # killed before the last commit

    with pytest.raises(KeyboardInterrupt):
        index_chunks(
            tmp_path / "index",
            fingerprint,
            dying(),
            commit_chunks=2,
            progress_seconds=0,
        )
    assert not index_is_current(db, tmp_path / "index")
    with pytest.raises(Bm25Error, match="no BM25 index"):
        search(tmp_path / "index", ["saturn"], db_path=db)
    # Batches of 2 with a commit each: 4 chunks committed; the 5th was added
    # after the last commit and rolled back.
    meta = build_index(db, tmp_path / "index", progress_seconds=0)
    assert (meta["resumed_from"], meta["num_indexed"]) == (4, 5)
    build_index(db, tmp_path / "fresh", progress_seconds=0)
    queries = ["which moon of saturn", "rivers in lower saxony", "snow"]
    assert search(tmp_path / "index", queries, db_path=db) == search(
        tmp_path / "fresh", queries, db_path=db
    )


def test_ids_with_white_space_are_percent_encoded_in_trec_files() -> None:
    assert trec_id("947testa CRICKET") == "947testa%20CRICKET"
    assert trec_id("a%b\tc") == "a%25b%09c"
    assert trec_id("plain-id_1") == "plain-id_1"
    for identifier in ("947testa CRICKET", "a%b\tc", "plain-id_1", "100%"):
        assert untrec_id(trec_id(identifier)) == identifier


def test_a_changed_corpus_makes_the_index_stale(tmp_path: Path) -> None:
    db = make_db(tmp_path / "c.duckdb")
    build_index(db, tmp_path / "index", progress_seconds=0)
    with duckdb.connect(str(db)) as con:
        con.execute("delete from kilt_chunks where chunk_id like 'doc-3%'")
    assert not index_is_current(db, tmp_path / "index")
    # "saturn" hits rowid 3 (doc-3, chunk 0), deleted since: not a wrong id.
    with pytest.raises(Bm25Error, match="1 hit rows are not in kilt_chunks"):
        search(tmp_path / "index", ["saturn"], db_path=db)
    with pytest.raises(Bm25Error, match="task 'nope': no queries"):
        task_queries(db, "nope")
    with pytest.raises(Bm25Error, match="no BM25 index"):
        search(tmp_path / "missing", ["x"], db_path=db)
    with duckdb.connect(str(db)) as con:
        con.execute("delete from kilt_chunks")
    with pytest.raises(Bm25Error, match="kilt_chunks is empty"):
        build_index(db, tmp_path / "index", progress_seconds=0)


def test_an_index_of_another_format_is_refused_and_rebuilt(tmp_path: Path) -> None:
    """Format 1 (the chunk id in tantivy's document store) wrote no
    ``index_format`` in kilt_bm25.json: such an index is refused by search
    with a message naming both formats, is not current, and the next build
    replaces it by one of format 2 (a rowid fast field)."""
    import json

    from kilt_chunks.evaluation.bm25 import INDEX_FORMAT, META_FILE, index_format

    db = make_db(tmp_path / "c.duckdb")
    build_index(db, tmp_path / "index", progress_seconds=0)
    assert INDEX_FORMAT == 2 and index_format(tmp_path / "index") == 2
    meta_file = tmp_path / "index" / META_FILE
    meta = json.loads(meta_file.read_text())
    del meta["index_format"]
    meta_file.write_text(json.dumps(meta))
    assert index_format(tmp_path / "index") == 1
    assert not index_is_current(db, tmp_path / "index")
    with pytest.raises(Bm25Error, match="index of format 1, this kilt-chunks reads"):
        search(tmp_path / "index", ["saturn"], db_path=db)
    rebuilt = build_index(db, tmp_path / "index", progress_seconds=0)
    assert (rebuilt["index_format"], rebuilt["resumed_from"]) == (2, 0)
    assert search(tmp_path / "index", ["saturn"], db_path=db) == [
        [("doc-3_0::s-0::chunk-0", pytest.approx(1.58789, rel=1e-5))]
    ]


def test_max_df_share_drops_frequent_terms_and_is_not_the_default(
    tmp_path: Path,
) -> None:
    """ "albedo" is in 2 of the 5 chunks (share 0.4, its title path counts),
    "saturn" in 1. Exact BM25 (the default) of "albedo saturn" ranks the
    saturn chunk and both albedo chunks; with max_df_share 0.3 "albedo" is
    dropped and the one hit scores as the query "saturn" alone (1.58789, see
    test_scores_are_corpus_wide_bm25). When every term is too frequent, the
    rarest stays."""
    db = make_db(tmp_path / "c.duckdb")
    build_index(db, tmp_path / "index", progress_seconds=0)
    (exact,) = search(tmp_path / "index", ["albedo saturn"], db_path=db)
    assert sorted(c for c, _ in exact) == [
        "doc-1_0::s-0::chunk-0",
        "doc-1_1::s-1::chunk-0",
        "doc-3_0::s-0::chunk-0",
    ]
    (pruned,) = search(
        tmp_path / "index", ["albedo saturn"], db_path=db, max_df_share=0.3
    )
    assert pruned == [("doc-3_0::s-0::chunk-0", pytest.approx(1.58789, rel=1e-5))]
    (rarest,) = search(
        tmp_path / "index", ["albedo saturn"], db_path=db, max_df_share=0.1
    )
    assert [c for c, _ in rarest] == ["doc-3_0::s-0::chunk-0"]
    with pytest.raises(ValueError, match="max_df_share must be in"):
        search(tmp_path / "index", ["x"], db_path=db, max_df_share=0)
