"""One run scored against one gold: the page-level (KILT retrieval),
downstream (KILT) and chunk-level (ir_measures) measures of every query and
their means (:func:`evaluate`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kilt_chunks.evaluation.downstream import (
    DOWNSTREAM_NAMES,
    HEADLINE_BY_FAMILY,
    KILT_DOWNSTREAM,
    downstream_scores,
)
from kilt_chunks.evaluation.gold import Gold, evidence_sets, r_precision_lists
from kilt_chunks.evaluation.ids import dedupe, pages_of_chunk_ranking
from kilt_chunks.evaluation.retrieval import (
    context_hits,
    entity_in_input,
    kilt_r_precision,
    kilt_rank,
    within_k,
)
from kilt_chunks.evaluation.runs import Prediction, Run

#: Default ks: KILT's own default (``--ks 1,5,10,20``) and 100, the depth of
#: the BM25 run.
DEFAULT_KS = (1, 5, 10, 20, 100)


def evaluate(
    gold: Gold,
    run: Run,
    *,
    ks: Sequence[int] = DEFAULT_KS,
    skip_empty_sets: bool = False,
    chunk_texts: Callable[[list[str]], dict[str, str]] | None = None,
) -> dict:
    """Page-level (KILT), downstream (KILT) and chunk-level measures of a run.

    Args:
        gold: What is relevant (:func:`gold_from_database`,
            :func:`gold_from_kilt_file`, :func:`gold_from_qrels`).
        run: :func:`read_run`.
        ks: Cut-offs of precision, recall, success_rate and the three
            *_in_context measures.
        skip_empty_sets: Drop empty evidence sets (rule 2, not KILT's reading).
        chunk_texts: For a chunk run, ``chunk ids -> text`` (the build's
            chunks), for the *_in_context@k measures; None leaves them out.

    Returns:
        A JSON-ready dict: ``labels``, ``ks``, ``num_queries`` (every gold
        query), ``num_queries_in_run``, ``num_run_queries_not_in_gold``
        (ignored), ``notes`` (what the readers did, name -> count),
        ``pages_outside_corpus``; ``page`` (``measures``: name -> mean over
        every gold query, ``num_queries_without_evidence``, ``is_kilt``),
        ``downstream`` (None without answers), ``chunk`` (None for a page
        run; ``measures`` over every query and ``measures_trec_eval`` over
        the queries with a relevant chunk); ``per_query``.

    Raises:
        ValueError: If a k is below 1.
    """
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError(f"ks must be whole numbers >= 1, not {ks}")
    is_chunk_run = run.is_chunk_run
    per_query: dict[str, dict[str, float]] = {}
    texts: dict[str, str] = {}
    if is_chunk_run and chunk_texts is not None:
        wanted = dedupe(
            c
            for q in gold.queries
            for c in run.predictions.get(q.query_id, Prediction([])).ranking[: ks[-1]]
        )
        texts = chunk_texts(wanted)
    with_answers = run.has_answers
    without_evidence = 0
    for query in gold.queries:
        prediction = run.predictions.get(query.query_id, Prediction([]))
        ranking = (
            pages_of_chunk_ranking(prediction.ranking)
            if is_chunk_run
            else prediction.ranking
        )
        sets = evidence_sets(query.output_page_ids, skip_empty_sets=skip_empty_sets)
        without_evidence += not sets
        values: dict[str, float] = {}
        values["Rprec"] = kilt_r_precision(
            ranking, r_precision_lists(query.output_page_ids)
        )
        rank = kilt_rank(ranking, sets)
        for k in ks:
            found = rank[:k].count(True)
            values[f"precision@{k}"] = found / k if sets else 0.0
            values[f"recall@{k}"] = found / len(sets) if sets else 0.0
            values[f"success_rate@{k}"] = float(found > 0)
        contexts: list[str | None] = (
            [texts.get(c) for c in prediction.ranking]
            if is_chunk_run
            else prediction.contexts
        )
        if not is_chunk_run or chunk_texts is not None:
            first = context_hits(query.answers, query.titles, contexts[: ks[-1]])
            for name in ("answer", "answer_and_ent", "entity"):
                for k in ks:
                    values[f"{name}_in_context@{k}"] = float(within_k(first[name], k))
        values["entity_in_input"] = float(entity_in_input(query.titles, query.input))
        if with_answers:
            points = downstream_scores(prediction.answer, query.answers)
            values.update(points)
            is_one = values["Rprec"] == 1
            for name, kilt_name in KILT_DOWNSTREAM.items():
                values[kilt_name] = points[name] if is_one else 0.0
        per_query[query.query_id] = values
    queries = gold.query_ids
    page_names = [n for n in _first(per_query) if n not in DOWNSTREAM_NAMES]
    page = {
        "is_kilt": gold.is_kilt_evidence,
        "skip_empty_sets": skip_empty_sets,
        "num_queries": len(queries),
        "num_queries_without_evidence": without_evidence,
        "measures": {n: _mean(per_query, queries, n) for n in page_names},
    }
    downstream = None
    if with_answers:
        family = gold.labels.get("task_family")
        downstream = {
            "headline": HEADLINE_BY_FAMILY.get(family or "", None),
            "num_queries_without_gold_answer": sum(
                1 for q in gold.queries if not q.answers
            ),
            "measures": {n: _mean(per_query, queries, n) for n in DOWNSTREAM_NAMES},
        }
    chunk = None
    if is_chunk_run:
        names = _chunk_measures(gold, run, queries, per_query, ks)
        judged = [q for q in queries if gold.chunk_qrels.get(q)]
        chunk = {
            "num_queries": len(queries),
            "num_queries_with_relevant": len(judged),
            "measures": {n: _mean(per_query, queries, n) for n in names},
            "measures_trec_eval": {n: _mean(per_query, judged, n) for n in names},
        }
    return {
        "labels": gold.labels,
        "ks": ks,
        "num_queries": len(queries),
        "num_queries_in_run": sum(1 for q in queries if q in run.predictions),
        "num_run_queries_not_in_gold": sum(
            1 for q in run.predictions if q not in per_query
        ),
        "notes": {**gold.notes, **run.notes},
        "pages_outside_corpus": gold.pages_outside_corpus,
        "page": page,
        "downstream": downstream,
        "chunk": chunk,
        "per_query": per_query,
    }


def _first(per_query: dict[str, dict[str, float]]) -> list[str]:
    return list(next(iter(per_query.values()), {}))


def _mean(
    per_query: dict[str, dict[str, float]], queries: list[str], name: str
) -> float:
    return (
        sum(per_query[q].get(name, 0.0) for q in queries) / len(queries)
        if queries
        else 0.0
    )


def _chunk_measures(
    gold: Gold,
    run: Run,
    queries: list[str],
    per_query: dict[str, dict[str, float]],
    ks: Sequence[int],
) -> list[str]:
    """Chunk-level measures by ir_measures; a query it skips (no qrels, or not
    in the run) gets 0. Returns the measure names, in report order."""
    import ir_measures
    from ir_measures import RR, R, nDCG

    measures = {"chunk nDCG@10": nDCG @ 10}
    measures |= {f"chunk recall@{k}": R @ k for k in ks}
    measures["chunk MRR@10"] = RR @ 10
    by_measure = {str(m): name for name, m in measures.items()}
    wanted = set(queries)
    qrels = [
        ir_measures.Qrel(q, d, r)
        for q in queries
        for d, r in gold.chunk_qrels.get(q, {}).items()
    ]
    # Scores descending in run order: ir_measures (trec_eval) ranks by score.
    scored = [
        ir_measures.ScoredDoc(q, d, float(len(p.ranking) - i))
        for q, p in run.predictions.items()
        if q in wanted
        for i, d in enumerate(p.ranking)
    ]
    for name in measures:
        for q in queries:
            per_query[q][name] = 0.0
    if qrels and scored:
        for metric in ir_measures.iter_calc(list(measures.values()), qrels, scored):
            per_query[metric.query_id][by_measure[str(metric.measure)]] = float(
                metric.value
            )
    return list(measures)
