"""Evaluation: each rule of KILT's scorer (kilt/eval_retrieval.py,
kilt/eval_downstream.py) on its own case, with values worked out by hand;
the chunk level's two means; the readers.

The rule numbers are those of the module docstring of
``kilt_chunks.evaluation`` (and of the README's evaluation table).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import ir_measures
import pytest
from ir_measures import R, Rprec

from kilt_chunks.evaluation import (
    EvaluationError,
    Gold,
    GoldQuery,
    answer_and_entity_in_context,
    answer_in_context,
    context_hits,
    downstream_scores,
    entity_in_context,
    evaluate,
    evidence_sets,
    format_table,
    gold_from_database,
    gold_from_kilt_file,
    gold_from_qrels,
    kilt_r_precision,
    kilt_rank,
    kilt_recall_at_k,
    normalize_answer,
    page_of_chunk,
    pages_of_chunk_ranking,
    r_precision_lists,
    read_qrels,
    read_run,
)


def prov(*ids: object) -> dict:
    """An output whose provenance names these pages (None: an entry without
    wikipedia_id)."""
    return {
        "provenance": [
            {"title": "no id"} if i is None else {"wikipedia_id": i} for i in ids
        ]
    }


def score(tmp_path: Path, gold_lines: list[dict], guess_lines: list[dict], **kw):
    """Write KILT gold and prediction files and evaluate them."""
    gold_file = tmp_path / "gold.jsonl"
    guess_file = tmp_path / "guess.jsonl"
    gold_file.write_text("".join(json.dumps(g) + "\n" for g in gold_lines))
    guess_file.write_text("".join(json.dumps(g) + "\n" for g in guess_lines))
    return evaluate(gold_from_kilt_file(gold_file), read_run(guess_file), **kw)


PREDICTION = ["25", "303", "305", "307", "39"]


def test_rule1_evidence_sets_keep_output_order(tmp_path: Path) -> None:
    """The issue's repro. Gold [{39, 736}, {39}], prediction 25 303 305 307
    39: page 39 is in both sets; set 0 still lacks 736 (pending point), then
    set 1 is complete: rank [F, F, F, F, es0, T]; the True is 6th, so
    recall@5 = 0, recall@10 = 1/2. Gold [{39}, {12, 39}]: rank [F, F, F, F,
    T, es1]: recall@5 = 1/2, precision@5 = 1/5, success_rate@5 = 1."""
    first = score(
        tmp_path,
        [{"id": "q", "output": [prov("39", "736"), prov("39")]}],
        [{"id": "q", "output": [prov(*PREDICTION)]}],
        ks=[5, 10],
    )["per_query"]["q"]
    assert (first["recall@5"], first["recall@10"]) == (0.0, 0.5)
    assert (first["precision@5"], first["success_rate@5"]) == (0.0, 0.0)
    assert first["Rprec"] == 0.0
    second = score(
        tmp_path,
        [{"id": "q", "output": [prov("39"), prov("12", "39")]}],
        [{"id": "q", "output": [prov(*PREDICTION)]}],
        ks=[5],
    )["per_query"]["q"]
    assert (second["recall@5"], second["precision@5"]) == (0.5, 0.2)
    assert second["success_rate@5"] == 1.0
    assert kilt_rank(PREDICTION, [{"39", "736"}, {"39"}]) == [
        False,
        False,
        False,
        False,
        "evidence_set:0",
        True,
    ]


def test_kilt_rank_removes_the_pending_point_of_a_completed_set(
    tmp_path: Path,
) -> None:
    """KILT's ``get_rank`` (kilt/eval_retrieval.py, step 3: "remove from the
    rank previous points referring to this evidence set"), worked by hand.
    Gold {a, b}, ranking a, b: a leaves the set pending, rank
    ["evidence_set:0"]; b removes that point and completes the set, rank
    [True]. So precision@1 = 1/1, recall@1 = 1/1 (one set), success_rate@1 =
    1, precision@2 = 1/2; R-precision: R = 2, both of the first 2 in the
    gold, 2/2 = 1. Ranking a, x, b: [es0] -> [es0, False] -> [False, True]:
    recall@1 = 0, recall@2 = 1, precision@2 = 1/2. Without the removal the
    ranks would be [es0, True] and [es0, False, True]: recall@1 = 0 and
    recall@2 = 0."""
    assert kilt_rank(["a", "b"], [{"a", "b"}]) == [True]
    assert kilt_rank(["a", "x", "b"], [{"a", "b"}]) == [False, True]
    assert kilt_recall_at_k(["a", "b"], [{"a", "b"}], 1) == 1.0
    assert kilt_recall_at_k(["a", "x", "b"], [{"a", "b"}], 2) == 1.0
    gold = [{"id": "q", "output": [prov("a", "b")]}]
    values = score(
        tmp_path, gold, [{"id": "q", "output": [prov("a", "b")]}], ks=[1, 2]
    )["per_query"]["q"]
    assert values["Rprec"] == 1.0
    assert (values["precision@1"], values["recall@1"]) == (1.0, 1.0)
    assert (values["precision@2"], values["recall@2"]) == (0.5, 1.0)
    assert values["success_rate@1"] == 1.0
    values = score(
        tmp_path, gold, [{"id": "q", "output": [prov("a", "x", "b")]}], ks=[1, 2]
    )["per_query"]["q"]
    assert (values["recall@1"], values["recall@2"]) == (0.0, 1.0)
    assert (values["precision@2"], values["Rprec"]) == (0.5, 0.5)


def test_rule2_an_empty_provenance_list_is_an_evidence_set(tmp_path: Path) -> None:
    """Gold outputs {39} and []: two sets, the empty one never complete.
    Prediction 39: recall@1 = 1/2 (KILT), 1 with skip_empty_sets (named)."""
    gold = [{"id": "q", "output": [prov("39"), {"provenance": []}, {"answer": "x"}]}]
    guess = [{"id": "q", "output": [prov("39")]}]
    kilt = score(tmp_path, gold, guess, ks=[1])
    assert kilt["per_query"]["q"]["recall@1"] == 0.5
    assert kilt["per_query"]["q"]["precision@1"] == 1.0
    assert kilt["per_query"]["q"]["Rprec"] == 1.0
    other = score(tmp_path, gold, guess, ks=[1], skip_empty_sets=True)
    assert other["per_query"]["q"]["recall@1"] == 1.0
    assert "empty evidence sets skipped, not KILT's reading" in format_table(other)
    # An answer-only output is no evidence set at all (no provenance key).
    assert evidence_sets([["39"], [], None]) == [{"39"}, set()]


def test_rule3_the_output_with_provenance_is_read(tmp_path: Path) -> None:
    """Prediction [answer, provenance 39]: 39 is read (not output[0]): Rprec
    1. A prediction without provenance scores 0, one with two provenance
    outputs uses the first; both are counted in the table."""
    gold = [{"id": q, "output": [prov("39")]} for q in ("a", "b", "c")]
    guess = [
        {"id": "a", "output": [{"answer": "x"}, prov("39")]},
        {"id": "b", "output": [{"answer": "x"}]},
        {"id": "c", "output": [prov("39"), prov("7")]},
    ]
    result = score(tmp_path, gold, guess, ks=[1])
    assert [result["per_query"][q]["Rprec"] for q in "abc"] == [1.0, 0.0, 1.0]
    notes = result["notes"]
    assert (
        notes[
            "predictions without an output with provenance (page scores 0;"
            " KILT's eval_retrieval refuses the file)"
        ]
        == 1
    )
    assert (
        notes[
            "predictions with several outputs with provenance (first used;"
            " KILT refuses the file)"
        ]
        == 1
    )


def test_rule4_ids_are_stripped(tmp_path: Path) -> None:
    """Page " 303" hits gold "303 " and 303 (a number); query " q1 " is q1."""
    result = score(
        tmp_path,
        [{"id": "q1", "output": [prov("303 ")]}, {"id": 2, "output": [prov(5)]}],
        [
            {"id": " q1 ", "output": [prov(" 303")]},
            {"id": "2", "output": [prov("5")]},
        ],
        ks=[1],
    )
    assert result["per_query"]["q1"]["Rprec"] == 1.0
    assert result["per_query"]["2"]["recall@1"] == 1.0
    assert result["num_queries_in_run"] == 2


def test_rule5_entries_without_wikipedia_id(tmp_path: Path) -> None:
    """A prediction entry without wikipedia_id is skipped (not an error):
    [no id, 39] ranks 39 first. A gold entry without one: R-precision reads
    the list [39] (R 1: Rprec 1), get_rank the set {39, ""}, never complete
    (recall@5 0)."""
    result = score(
        tmp_path,
        [{"id": "q", "output": [prov("39", None)]}],
        [{"id": "q", "output": [prov(None, "39")]}],
        ks=[5],
    )
    values = result["per_query"]["q"]
    assert (values["Rprec"], values["recall@5"]) == (1.0, 0.0)
    assert (
        result["notes"]["provenance entries without wikipedia_id (skipped, as KILT)"]
        == 1
    )
    assert r_precision_lists([["39", None], None]) == [["39"], []]
    assert evidence_sets([["39", None]]) == [{"39", ""}]


def test_rule6_every_gold_query_counts(tmp_path: Path) -> None:
    """Gold q1 (found), q2 (missing from the run), q3 (a duplicate id, its
    second line skipped): mean R-precision 1/2 over 2 queries, both counted
    in the table."""
    result = score(
        tmp_path,
        [
            {"id": "q1", "output": [prov("1")]},
            {"id": "q2", "output": [prov("2")]},
            {"id": "q1", "output": [prov("3")]},
        ],
        [{"id": "q1", "output": [prov("1")]}],
        ks=[1],
    )
    assert result["num_queries"] == 2
    assert result["page"]["measures"]["Rprec"] == 0.5
    assert result["notes"] == {
        "duplicate gold ids (first kept; KILT refuses the file)": 1
    }
    assert "queries in run" in format_table(result)


def task_database(path: Path) -> Path:
    """The tables gold_from_database reads, hand-made: one task, two queries
    (one with an id holding a space, AIDA style), one line the build rejected,
    one gold page outside the corpus."""
    with duckdb.connect(str(path)) as con:
        con.execute(
            "create table kilt_queries as select * from (values"
            " ('t', '947testa CRICKET', [['39', '736'], ['39']], ['Lara'],"
            "  ['Brian Lara'], 'who is lara', 'x', 'entity_linking', 1),"
            " ('t', 'q2', [null, []], [], [], 'nothing', 'x', 'entity_linking', 2))"
            " as v(task, query_id, output_page_ids, answers, provenance_titles,"
            " input, dataset, task_family, line_number)"
        )
        con.execute(
            "create table kilt_qrels_chunks as select 't' as task,"
            " '947testa CRICKET' as query_id, 'doc-39_0::s-0::chunk-0' as chunk_id,"
            " 2 as relevance"
        )
        con.execute(
            "create table kilt_provenance_rejected as select * from (values"
            " ('t', null, 3), ('t', '39@1:0-1:5', 4)) as v(task, span_id, line)"
        )
        con.execute(
            "create table kilt_qrels_pages as select * from (values"
            " ('t', true), ('t', false)) as v(task, is_page_in_corpus)"
        )
        con.execute(
            "create table kilt_chunks as select 'doc-39_0::s-0::chunk-0' as"
            " chunk_id, 'Brian Lara is a cricketer.' as text"
        )
    return path


def test_rule6_database_gold_counts_rejected_lines(tmp_path: Path) -> None:
    db = task_database(tmp_path / "t.duckdb")
    gold = gold_from_database(db, "t")
    assert gold.query_ids == ["947testa CRICKET", "q2"]
    assert gold.pages_outside_corpus == 1
    assert list(gold.notes.values()) == [1]
    run = tmp_path / "run.trec"
    run.write_text("947testa%20CRICKET Q0 doc-39_0::s-0::chunk-0 1 9.5 bm25\n")
    result = evaluate(gold, read_run(run), ks=[5])
    values = result["per_query"]["947testa CRICKET"]
    # Sets [{39, 736}, {39}] in output order: page 39 -> [es0, T]: recall@5
    # 1/2; R-precision: the list [39] (R 1) is hit: 1.
    assert (values["recall@5"], values["Rprec"]) == (0.5, 1.0)
    assert "answer_in_context@5" not in values  # no chunk texts given
    # q2: outputs [no provenance, []]: one empty set, never found.
    assert result["page"]["num_queries_without_evidence"] == 0
    assert result["per_query"]["q2"]["recall@5"] == 0.0
    with_texts = evaluate(
        gold, read_run(run), ks=[5], chunk_texts=lambda ids: {ids[0]: "Lara won."}
    )
    # The answer "Lara" is in the chunk's text; the title "Brian Lara" is
    # not inside the input "who is lara".
    assert with_texts["per_query"]["947testa CRICKET"]["answer_in_context@5"] == 1.0
    assert with_texts["per_query"]["947testa CRICKET"]["entity_in_input"] == 0.0
    table = format_table(result)
    assert "gold pages not in corpus" in table
    assert "task lines the build rejected" in table
    with duckdb.connect(str(db)) as con:
        con.execute("alter table kilt_queries drop column output_page_ids")
    with pytest.raises(EvaluationError, match="lacks output_page_ids"):
        gold_from_database(db, "t")


def test_rule8_page_qrels_are_not_kilt_evidence_sets(tmp_path: Path) -> None:
    """Gold outputs {39} and {696}: a page qrels file holds 39 and 696 as
    one set (R 2: prediction 39 gives Rprec 1/2, labelled not KILT's); the
    build's queries.jsonl (output_page_ids) gives KILT's Rprec 1."""
    pages = tmp_path / "t.pages.qrels"
    pages.write_text("q1 0 39 1\nq1 0 696 1\n")
    run_file = tmp_path / "run.jsonl"
    run_file.write_text(json.dumps({"id": "q1", "output": [prov("39")]}) + "\n")
    run = read_run(run_file)
    qrels_result = evaluate(gold_from_qrels(pages, run), run, ks=[1])
    assert qrels_result["page"]["measures"]["Rprec"] == 0.5
    assert "NOT KILT's evidence sets" in format_table(qrels_result)
    queries = tmp_path / "t.queries.jsonl"
    queries.write_text(
        json.dumps(
            {"query_id": "q1", "output_page_ids": [["39"], ["696"]], "answers": []}
        )
        + "\n"
    )
    kilt_result = evaluate(gold_from_kilt_file(queries), run, ks=[1])
    assert kilt_result["page"]["measures"]["Rprec"] == 1.0
    assert kilt_result["labels"] == {"task": "t"}


CHUNK_A = "doc-1_0::s-0::chunk-0"
CHUNK_B = "doc-2_0::s-0::chunk-0"
CHUNK_C = "doc-1_0::s-0::chunk-1"


def test_rule9_chunk_level_gives_both_means() -> None:
    """q1: gold chunks a (2) and b (1), run b a: nDCG@10 = (1 + 2/log2 3) /
    (2 + 1/log2 3) (trec_eval's linear gain). q2: no relevant chunk, run a.
    q3: chunk b relevant, not in the run. Every query: sums / 3; trec_eval's
    convention (queries with a relevant chunk: q1, q3): sums / 2."""
    gold = Gold(
        queries=[
            GoldQuery("q1", [["1"]]),
            GoldQuery("q2", []),
            GoldQuery("q3", [["2"]]),
        ],
        chunk_qrels={"q1": {CHUNK_A: 2, CHUNK_B: 1}, "q3": {CHUNK_B: 2}},
        labels={"task": "t"},
    )
    run_lines = [f"q1 Q0 {CHUNK_B} 1 2 x", f"q1 Q0 {CHUNK_A} 2 1 x"]
    run_lines += [f"q2 Q0 {CHUNK_A} 1 1 x", f"other Q0 {CHUNK_A} 1 1 x"]
    run = _run(run_lines)
    result = evaluate(gold, run, ks=[5])
    ndcg_q1 = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    chunk = result["chunk"]
    assert chunk["measures"]["chunk nDCG@10"] == pytest.approx(ndcg_q1 / 3)
    assert chunk["measures_trec_eval"]["chunk nDCG@10"] == pytest.approx(ndcg_q1 / 2)
    assert chunk["measures"]["chunk MRR@10"] == pytest.approx(1 / 3)
    assert chunk["measures_trec_eval"]["chunk recall@5"] == pytest.approx(1 / 2)
    assert chunk["num_queries_with_relevant"] == 2
    page = result["page"]["measures"]
    # q1: pages 2 1, set {1}: Rprec 0 (R 1, first page 2), recall@5 1.
    assert (page["Rprec"], page["recall@5"]) == (0.0, pytest.approx(1 / 3))
    assert (result["num_queries"], result["num_queries_in_run"]) == (3, 2)
    assert result["num_run_queries_not_in_gold"] == 1
    assert "trec_eval's mean over queries with a relevant chunk" in format_table(result)


def _run(lines: list[str]):
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".trec", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    return read_run(f.name)


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
    for k in (1, 2):
        assert kilt_recall_at_k(runs["e"], [gold["e"]], k) == library[("e", f"R@{k}")]


def test_downstream_scores_by_hand(tmp_path: Path) -> None:
    """Gold answers "the cat is on the mat" and "Mat". Prediction "The cat
    sat on the mat": accuracy 0 (no exact string); EM 0; F1 on normalised
    tokens (articles dropped): cat sat on mat vs cat is on mat, 3 shared of
    4 and 4: 3/4. ROUGE-L as the rouge package (KILT's) computes it, text as
    given (case kept: "The" is not "the"): the LCS is "cat on the mat", 4
    words; the package divides by the DISTINCT words: 5 in the reference
    (the cat is on mat), 6 in the prediction (The cat sat on the mat): R =
    4/5, P = 4/6, F = 2PR / (P + R) = 8/11 (against "Mat": no shared word).
    Prediction "mat!": EM 1 with "Mat" after normalisation."""
    scores = downstream_scores(
        "The cat sat on the mat", ["the cat is on the mat", "Mat"]
    )
    assert scores["accuracy"] == 0.0
    assert scores["em"] == 0.0
    assert scores["f1"] == pytest.approx(0.75)
    assert scores["rougel"] == pytest.approx(8 / 11, abs=1e-7)
    assert downstream_scores("mat!", ["Mat"])["em"] == 1.0
    assert downstream_scores("Mat", ["Mat"])["accuracy"] == 1.0
    assert downstream_scores(" ", ["Mat"]) == dict.fromkeys(
        ("accuracy", "em", "f1", "rougel"), 0.0
    )
    assert normalize_answer("The  Eiffel-Tower, an icon!") == "eiffeltower icon"


def test_kilt_downstream_counts_only_with_r_precision_one(tmp_path: Path) -> None:
    """q1: answer right, page right: KILT-EM 1. q2: answer right, page wrong
    (Rprec 0): EM 1, KILT-EM 0. Means over 2: EM 1, KILT-EM 1/2. The
    provenance texts give answer_in_context@1 = 0 (q1: text of page 2 only
    at rank 2) and @2 = 1 for q1."""
    gold = [
        {"id": "q1", "input": "x", "output": [{"answer": "Paris"}, prov("1")]},
        {"id": "q2", "input": "x", "output": [{"answer": "Rome"}, prov("5")]},
    ]
    guess = [
        {
            "id": "q1",
            "output": [
                {
                    "answer": "paris",
                    "provenance": [
                        {"wikipedia_id": "1", "text": "A city."},
                        {"wikipedia_id": "2", "text": "Paris, France"},
                    ],
                }
            ],
        },
        {
            "id": "q2",
            "output": [{"answer": "Rome", "provenance": [{"wikipedia_id": "6"}]}],
        },
    ]
    result = score(tmp_path, gold, guess, ks=[1, 2])
    down = result["downstream"]["measures"]
    assert (down["em"], down["KILT-EM"]) == (1.0, 0.5)
    assert (down["accuracy"], down["KILT-AC"]) == (0.5, 0.0)
    q1 = result["per_query"]["q1"]
    assert (q1["answer_in_context@1"], q1["answer_in_context@2"]) == (0.0, 1.0)
    assert answer_in_context(["The Paris"], [None, "paris!"], 2) == 1


def test_answer_and_entity_in_context_by_hand(tmp_path: Path) -> None:
    """KILT's _answer_and_ent_in_context_at_k and _ent_in_context_at_k
    (kilt/eval_retrieval.py): the first k provenance entries of the
    prediction as given (an entry without wikipedia_id is not ranked but is
    a context), each entry's own ``text`` normalised (an entry without text
    holds nothing); answer and title must be in the same entry.

    Gold: answer "Claude Monet", title "Impression, Sunrise". Entries:
    0 "Impression, Sunrise is a painting." (title only), 1 no wikipedia_id,
    "Claude Monet painted it." (answer only), 2 "Monet's Impression Sunrise,
    by claude monet" (both: "monets impression sunrise by claude monet"),
    3 no text. So answer@1 0, @2 1; answer_and_ent@2 0, @3 1; entity@1 1.
    """
    gold = [
        {
            "id": "q1",
            "input": "who painted impression sunrise",
            "output": [
                {"answer": "Claude Monet"},
                {
                    "provenance": [
                        {"wikipedia_id": "10", "title": "Impression, Sunrise"}
                    ]
                },
            ],
        },
        {"id": "q2", "input": "x", "output": [{"answer": "Rome"}, prov("5")]},
    ]
    entries = [
        {"wikipedia_id": "10", "text": "Impression, Sunrise is a painting."},
        {"text": "Claude Monet painted it."},
        {"wikipedia_id": "11", "text": "Monet's Impression Sunrise, by claude monet"},
        {"wikipedia_id": "12"},
    ]
    guess = [
        {"id": "q1", "output": [{"provenance": entries}]},
        {"id": "q2", "output": [{"provenance": [{"wikipedia_id": "5"}]}]},
    ]
    result = score(tmp_path, gold, guess, ks=[1, 2, 3])
    q1 = result["per_query"]["q1"]
    assert [q1[f"answer_in_context@{k}"] for k in (1, 2, 3)] == [0.0, 1.0, 1.0]
    assert [q1[f"answer_and_ent_in_context@{k}"] for k in (1, 2, 3)] == [0.0, 0.0, 1.0]
    assert [q1[f"entity_in_context@{k}"] for k in (1, 2, 3)] == [1.0, 1.0, 1.0]
    assert q1["entity_in_input"] == 1.0  # "impression sunrise" in the input
    # q2: no texts at all (and no gold title): every context measure 0.
    q2 = result["per_query"]["q2"]
    assert all(v == 0.0 for n, v in q2.items() if "_in_" in n)
    means = result["page"]["measures"]
    assert (means["answer_and_ent_in_context@3"], means["entity_in_context@1"]) == (
        0.5,
        0.5,
    )
    # The functions on their own, and a chunk run's texts in rank order.
    texts = ["Claude Monet was French.", "Impression, Sunrise by Claude Monet"]
    answers, titles = ["Claude Monet"], ["Impression, Sunrise"]
    assert answer_in_context(answers, texts, 1) == 1
    assert answer_and_entity_in_context(answers, titles, texts, 1) == 0
    assert answer_and_entity_in_context(answers, titles, texts, 2) == 1
    assert entity_in_context(titles, texts, 1) == 0
    assert entity_in_context(titles, [None, *texts], 3) == 1
    assert context_hits(answers, titles, texts) == {
        "answer": 0,
        "answer_and_ent": 1,
        "entity": 1,
    }


def test_chunk_ids_map_to_pages() -> None:
    assert page_of_chunk("doc-39_14::s-14::chunk-0") == "39"
    assert pages_of_chunk_ranking([CHUNK_C, CHUNK_B, CHUNK_A]) == ["1", "2"]
    with pytest.raises(EvaluationError, match="not a chunk id"):
        page_of_chunk("39")


def test_read_runs_in_trec_and_kilt_format(tmp_path: Path) -> None:
    trec = tmp_path / "run.trec"
    trec.write_text(
        f"q1 Q0 {CHUNK_A} 2 1.5 x\nq1 Q0 {CHUNK_B} 1 2.5 x\nq2 Q0 {CHUNK_C} 1 1 x\n"
    )
    run = read_run(trec)
    assert run.format == "trec" and run.is_chunk_run
    assert {q: p.ranking for q, p in run.predictions.items()} == {
        "q1": [CHUNK_B, CHUNK_A],
        "q2": [CHUNK_C],
    }
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d 1 1 x\nq1 Q0 d\n")
    with pytest.raises(EvaluationError, match=r"bad.trec, line 2: expected"):
        read_run(bad)
    bad.write_text('{"id": "q1", "output": {"provenance": 3}}\n')
    with pytest.raises(EvaluationError, match=r"line 1: not a KILT prediction"):
        read_run(bad)


def test_a_score_that_is_not_finite_is_refused(tmp_path: Path) -> None:
    """A NaN or infinite score cannot be ranked: refused with its line (it was
    sorted silently, NaN anywhere)."""
    run = tmp_path / "run.trec"
    for bad in ("nan", "NaN", "inf", "-Infinity"):
        run.write_text(f"q1 Q0 {CHUNK_A} 1 2.5 x\nq1 Q0 {CHUNK_B} 2 {bad} x\n")
        with pytest.raises(
            EvaluationError,
            match=rf"run.trec, line 2: score '{bad}' is not a finite number",
        ):
            read_run(run)


def test_an_empty_gold_is_refused(tmp_path: Path, capsys) -> None:
    """``eval --gold`` with an empty file exited 0 printing 0.0000 for every
    measure; now one line naming the file, exit 1. Likewise a qrels file
    without any relevant document."""
    from kilt_chunks.cli import main

    guess = tmp_path / "guess.jsonl"
    guess.write_text(json.dumps({"id": "q", "output": [prov("39")]}) + "\n")
    gold = tmp_path / "gold.jsonl"
    for text in ("", "\n  \n"):
        gold.write_text(text)
        with pytest.raises(EvaluationError, match="gold.jsonl: no gold query"):
            gold_from_kilt_file(gold)
    assert main(["eval", str(guess), "--gold", str(gold)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kilt-chunks: ") and "no gold query" in err
    assert err.count("\n") == 1
    qrels = tmp_path / "t.qrels"
    for text in ("", "q 0 39 0\n"):
        qrels.write_text(text)
        with pytest.raises(EvaluationError, match="t.qrels: no relevant document"):
            gold_from_qrels(qrels, read_run(guess))


def test_gold_from_a_qrels_file(tmp_path: Path) -> None:
    chunks = tmp_path / "t.graded.qrels"
    chunks.write_text(f"q1 0 {CHUNK_A} 2\nq1 0 {CHUNK_C} 1\nq1 0 {CHUNK_B} 0\n")
    assert read_qrels(chunks) == {"q1": {CHUNK_A: 2, CHUNK_C: 1}}
    run = _run([f"q9 Q0 {CHUNK_A} 1 1 x"])
    gold = gold_from_qrels(chunks, run)
    assert gold.query_ids == ["q1", "q9"]
    assert gold.queries[0].output_page_ids == [["1"]]
    assert not gold.is_kilt_evidence
    pages = tmp_path / "t.pages.qrels"
    pages.write_text("q1 0 39 1\nq1 0 696 1\n")
    assert gold_from_qrels(pages, run).queries[0].output_page_ids == [["39", "696"]]
    pages.write_text("q1 0 39 high\n")
    with pytest.raises(EvaluationError, match="relevance 'high' is not a whole"):
        read_qrels(pages)


def test_a_kilt_prediction_and_the_equivalent_chunk_run_score_the_same(
    tmp_path: Path,
) -> None:
    """A TREC chunk run (chunks of pages 2, 1, 2 again, 7) and the KILT
    prediction of its pages at their first chunk (2, 1, 7) give the same page
    values for every query and measure."""
    gold = [
        {"id": "947testa CRICKET", "output": [prov("1", "7"), prov("2")]},
        {"id": "q2", "output": [prov("7"), {"provenance": []}]},
    ]
    chunks = ["doc-2_0::s-0::chunk-0", "doc-1_3::s-3::chunk-1"]
    chunks += ["doc-2_1::s-1::chunk-0", "doc-7_0::s-0::chunk-0"]
    trec = tmp_path / "run.trec"
    trec.write_text(
        "".join(
            f"{q} Q0 {c} {r} {10 - r} x\n"
            for q in ("947testa%20CRICKET", "q2")
            for r, c in enumerate(chunks, start=1)
        )
    )
    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text("".join(json.dumps(g) + "\n" for g in gold))
    guess = tmp_path / "guess.jsonl"
    guess.write_text(
        "".join(
            json.dumps({"id": q, "output": [prov("2", "1", "7")]}) + "\n"
            for q in ("947testa CRICKET", "q2")
        )
    )
    by_chunks = evaluate(gold_from_kilt_file(gold_file), read_run(trec))
    by_pages = evaluate(gold_from_kilt_file(gold_file), read_run(guess))
    for query in ("947testa CRICKET", "q2"):
        pages = by_pages["per_query"][query]
        chunked = by_chunks["per_query"][query]
        # The *_in_context measures need texts: the chunk run was given none.
        assert {n: chunked[n] for n in pages if "_in_context" not in n} == {
            n: v for n, v in pages.items() if "_in_context" not in n
        }
    # By hand, query 1: sets [{1, 7}, {2}]; pages 2 1 7 -> [T, es0, ...] then
    # 7 completes set 0: [T, T]: recall@1 1/2, recall@5 1; Rprec: {2} R 1,
    # first page 2: 1.
    first = by_pages["per_query"]["947testa CRICKET"]
    assert (first["recall@1"], first["recall@5"], first["Rprec"]) == (0.5, 1.0, 1.0)


def test_eval_command_with_a_kilt_gold_file(tmp_path: Path, capsys) -> None:
    """`kilt-chunks eval PRED --gold GOLD --ks 5`: the repro of rule 1 (recall@5
    0 for the first gold, 1/2 for the second; mean 1/4) in the table and the
    JSON."""
    from kilt_chunks.cli import main

    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps({"id": "a", "output": [prov("39", "736"), prov("39")]})
        + "\n"
        + json.dumps({"id": "b", "output": [prov("39"), prov("12", "39")]})
        + "\n"
    )
    guess = tmp_path / "guess.jsonl"
    guess.write_text(
        "".join(
            json.dumps({"id": q, "output": [prov(*PREDICTION)]}) + "\n" for q in "ab"
        )
    )
    out = tmp_path / "scores.json"
    code = main(
        ["eval", str(guess), "--gold", str(gold), "--ks", "5", "--json", str(out)]
    )
    assert code == 0
    assert f"{'page recall@5':<36} {0.25:>8.4f}" in capsys.readouterr().out
    scores = json.loads(out.read_text())
    assert [scores["per_query"][q]["recall@5"] for q in "ab"] == [0.0, 0.5]
    assert scores["ks"] == [5]
