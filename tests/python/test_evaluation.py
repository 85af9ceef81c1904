"""Retrieval evaluation: KILT's page-level measures against values worked out
by hand, agreement with ir_measures where both compute the same measure, and
the run and qrels readers.

Hand fixture (pages p1..p9):

* query A: evidence sets {p1, p2} and {p3}; run p4 p1 p1 p3 p2 (p1 twice).
  Deduplicated: p4 p1 p3 p2. R-precision: {p1, p2} has R = 2 and the first 2
  pages p4 p1 hold one of them: 1/2; {p3}: R = 1, p4 is not p3: 0; max 0.5.
  KILT rank: p4 -> F; p1 -> pending point of set 0; p3 completes set 1 -> T;
  p2 completes set 0 -> its pending point goes, T: [F, T, T]. recall@1 = 0,
  recall@2 = 1/2, recall@3 = 2/2.
* query B: no evidence set (no relevant page); run p1: 0 everywhere.
* query C: evidence set {p5}, not in the run: 0 everywhere.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import ir_measures
import pytest
from ir_measures import R, Rprec

from kilt_chunks.evaluation import (
    EvaluationError,
    Gold,
    evaluate,
    format_table,
    gold_from_qrels,
    kilt_r_precision,
    kilt_rank,
    kilt_recall_at_k,
    page_of_chunk,
    pages_of_chunk_ranking,
    read_qrels,
    read_run,
)

SETS_A = [{"p1", "p2"}, {"p3"}]
RUN_A = ["p4", "p1", "p1", "p3", "p2"]


def test_kilt_r_precision_by_hand() -> None:
    assert kilt_r_precision(RUN_A, SETS_A) == 0.5
    assert kilt_r_precision(["p3"], SETS_A) == 1.0  # best set: {p3}
    assert kilt_r_precision(["p1"], []) == 0.0  # query B
    assert kilt_r_precision([], [{"p5"}]) == 0.0  # query C
    # Duplicates count once: p1 p1 p2 covers {p1, p2} in its first 2 pages.
    assert kilt_r_precision(["p1", "p1", "p2"], [{"p1", "p2"}]) == 1.0


def test_kilt_rank_and_recall_by_hand() -> None:
    assert kilt_rank(["p4", "p1", "p3", "p2"], SETS_A) == [False, True, True]
    assert [kilt_recall_at_k(RUN_A, SETS_A, k) for k in (1, 2, 3, 5)] == [
        0.0,
        0.5,
        1.0,
        1.0,
    ]
    # The same set given twice (two outputs with the same pages) is one set.
    assert kilt_recall_at_k(["p3"], [{"p3"}, {"p3"}], 1) == 1.0
    assert kilt_recall_at_k(["p1"], [], 5) == 0.0
    # A set of two pages at ranks 1 and 7 counts from k = 6: its pending
    # point moves down to the completing page.
    ranking = ["p1", "x1", "x2", "x3", "x4", "x5", "p2"]
    assert kilt_recall_at_k(ranking, [{"p1", "p2"}], 5) == 0.0
    assert kilt_recall_at_k(ranking, [{"p1", "p2"}], 6) == 1.0
    with pytest.raises(ValueError, match="k must be at least 1"):
        kilt_recall_at_k(RUN_A, SETS_A, 0)


def test_kilt_measures_agree_with_ir_measures_on_one_set_per_query() -> None:
    """With one evidence set per query, KILT's R-precision is R-precision;
    with one page per set, KILT's recall@k is recall@k."""
    gold = {"d": {"p1", "p2"}, "e": {"p7"}, "f": {"p1", "p2", "p3"}}
    runs = {"d": ["p2", "p9", "p1"], "e": ["p8", "p7"], "f": ["p3", "p4", "p1"]}
    qrels = [ir_measures.Qrel(q, p, 1) for q, pages in gold.items() for p in pages]
    scored = [
        ir_measures.ScoredDoc(q, p, float(len(docs) - i))
        for q, docs in runs.items()
        for i, p in enumerate(docs)
    ]
    library = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc([Rprec, R @ 1, R @ 2], qrels, scored)
    }
    for q in gold:
        assert kilt_r_precision(runs[q], [gold[q]]) == pytest.approx(
            library[(q, "Rprec")]
        )
    assert kilt_r_precision(runs["d"], [gold["d"]]) == 0.5
    assert kilt_r_precision(runs["f"], [gold["f"]]) == pytest.approx(2 / 3)
    for k in (1, 2):
        assert kilt_recall_at_k(runs["e"], [gold["e"]], k) == library[("e", f"R@{k}")]


CHUNK_A = "doc-1_0::s-0::chunk-0"
CHUNK_B = "doc-2_0::s-0::chunk-0"
CHUNK_C = "doc-1_0::s-0::chunk-1"


def test_chunk_ids_map_to_pages() -> None:
    assert page_of_chunk("doc-39_14::s-14::chunk-0") == "39"
    assert pages_of_chunk_ranking([CHUNK_C, CHUNK_B, CHUNK_A]) == ["1", "2"]
    with pytest.raises(EvaluationError, match="not a chunk id"):
        page_of_chunk("39")


def test_evaluate_counts_queries_without_relevant_items_as_zero() -> None:
    """q1: gold chunks a (2) and b (1), run b a: nDCG@10 = (1 + 2/log2 3) /
    (2 + 1/log2 3) (trec_eval's linear gain); pages 2 1, evidence set {1}:
    R-precision 0 (R = 1, first page 2), recall@5 1. q2: no relevant item,
    run a: zero. q3: evidence set {2}, chunk b relevant, not in the run: zero.
    Means over the 3 queries; the run's query "other" is ignored."""
    gold = Gold(
        query_ids=["q1", "q2", "q3"],
        evidence_sets={"q1": [{"1"}], "q2": [], "q3": [{"2"}]},
        chunk_qrels={"q1": {CHUNK_A: 2, CHUNK_B: 1}, "q3": {CHUNK_B: 2}},
        labels={"task": "t"},
    )
    run = {"q1": [CHUNK_B, CHUNK_A], "q2": [CHUNK_A], "other": [CHUNK_A]}
    result = evaluate(gold, run)
    ndcg_q1 = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    chunk = result["chunk"]["measures"]
    assert chunk["chunk nDCG@10"] == pytest.approx(ndcg_q1 / 3)
    assert chunk["chunk recall@5"] == pytest.approx(1 / 3)
    assert chunk["chunk MRR@10"] == pytest.approx(1 / 3)
    page = result["page"]["measures"]
    assert page["page R-precision"] == 0.0
    assert page["page recall@5"] == pytest.approx(1 / 3)
    assert result["per_query"]["q1"]["chunk nDCG@10"] == pytest.approx(ndcg_q1)
    assert result["page"]["num_queries_without_relevant"] == 1
    assert result["chunk"]["num_queries_without_relevant"] == 1
    assert (result["num_queries"], result["num_queries_in_run"]) == (3, 2)
    assert result["num_run_queries_not_in_gold"] == 1
    table = format_table(result)
    assert "chunk nDCG@10" in table and "counted as 0, not dropped" in table


def test_page_run_has_no_chunk_level() -> None:
    gold = Gold(query_ids=["q"], evidence_sets={"q": [{"1"}]})
    result = evaluate(gold, {"q": ["2", "1"]})
    assert result["chunk"] is None
    assert result["page"]["measures"]["page recall@5"] == 1.0
    assert "run ranks pages" in format_table(result)


def test_read_runs_in_trec_and_kilt_format(tmp_path: Path) -> None:
    trec = tmp_path / "run.trec"
    trec.write_text(
        f"q1 Q0 {CHUNK_A} 2 1.5 x\nq1 Q0 {CHUNK_B} 1 2.5 x\nq2 Q0 {CHUNK_C} 1 1 x\n"
    )
    assert read_run(trec) == ({"q1": [CHUNK_B, CHUNK_A], "q2": [CHUNK_C]}, "trec")
    kilt = tmp_path / "run.jsonl"
    kilt.write_text(
        json.dumps({"id": "q1", "output": [{"provenance": [{"wikipedia_id": "7"}]}]})
        + "\n"
        + json.dumps({"id": 5, "output": [{"provenance": []}]})
        + "\n"
    )
    assert read_run(kilt) == ({"q1": ["7"], "5": []}, "kilt")
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d 1 1 x\nq1 Q0 d\n")
    with pytest.raises(EvaluationError, match=r"bad.trec, line 2: expected"):
        read_run(bad)
    bad.write_text('{"id": "q1", "output": [{"provenance": [{"title": "x"}]}]}\n')
    with pytest.raises(EvaluationError, match=r"line 1: not a KILT prediction"):
        read_run(bad)


def test_gold_from_a_qrels_file(tmp_path: Path) -> None:
    chunks = tmp_path / "t.graded.qrels"
    chunks.write_text(f"q1 0 {CHUNK_A} 2\nq1 0 {CHUNK_C} 1\nq1 0 {CHUNK_B} 0\n")
    assert read_qrels(chunks) == {"q1": {CHUNK_A: 2, CHUNK_C: 1}}
    gold = gold_from_qrels(chunks, {"q9": []})
    assert gold.query_ids == ["q1", "q9"]
    assert gold.evidence_sets == {"q1": [{"1"}]}
    pages = tmp_path / "t.pages.qrels"
    pages.write_text("q1 0 39 1\nq1 0 696 1\n")
    assert gold_from_qrels(pages, {}).evidence_sets == {"q1": [{"39", "696"}]}
    pages.write_text("q1 0 39 high\n")
    with pytest.raises(EvaluationError, match="relevance 'high' is not a whole"):
        read_qrels(pages)
