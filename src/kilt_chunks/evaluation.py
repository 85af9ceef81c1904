"""Evaluate a retrieval run on a KILT task at page level and chunk level.

Page level follows KILT's own retrieval evaluation (facebookresearch/KILT,
``kilt/eval_retrieval.py``, functions ``rprecision`` and ``get_rank`` with
rank key ``wikipedia_id``; Petroni et al., NAACL 2021, section 4.3), written
here from its definition. An evidence set is the set of pages one output's
provenance names; the ranking is first reduced to each page's first position
(KILT removes repeated ids from the guess).

* **R-precision**, per evidence set: with R the set's size, the share of the
  first R ranked pages that are in the set; a query scores the best of its
  evidence sets (``max``), 0 without any.
* **recall@k**: each distinct evidence set of a query counts as one item;
  going down the ranking, a page of no set takes a rank, a page of a set not
  yet complete takes the rank of that set's pending point (moved down to
  it), and the page completing a set marks that rank found. recall@k is the
  share of sets found within the first k ranks, so a set of two pages found
  at ranks 1 and 7 counts at k >= 6 (the rank list shrinks by the one
  pending point removed). KILT warns when a run ranks fewer pages than a
  "robust" recall@k needs; here a short ranking simply finds fewer sets.
  Unlike KILT's code, an output with an empty provenance list is not an
  evidence set (KILT would count a set that can never be found).

A chunk run is turned into a page ranking by each page's first chunk (a
page's later chunks are dropped). A run in KILT's own format (JSON lines with
``id`` and ``output[0].provenance``, best first) is a page ranking already.

Chunk level (graded qrels, relevance 2 or 1) uses `ir_measures
<https://ir-measur.es>`_ (MacAvaney et al., ECIR 2022) over its
``pytrec_eval`` backend (the C code of ``trec_eval``; both install offline
as wheels, no JIT compile at start-up as ranx's numba needs): nDCG@10
(trec_eval's linear gain, rel), recall@{5,20,100} (relevance >= 1 counts) and
MRR@10 (``RR@10``). Ties in scores are broken by rank in the run (as given)
for both levels; trec_eval would break them by document id.

Every query of the task is evaluated: a query with no relevant page or chunk
(page-level provenance only, evidence on a header or a dropped section, a
page missing from the corpus), or missing from the run, scores 0 and stays in
the mean; the counts of such queries are reported beside the means.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

__all__ = [
    "CHUNK_ID_PATTERN",
    "CHUNK_RECALL_KS",
    "EvaluationError",
    "Gold",
    "PAGE_KS",
    "dedupe",
    "evaluate",
    "format_table",
    "gold_from_database",
    "gold_from_qrels",
    "is_chunk_id",
    "kilt_r_precision",
    "kilt_rank",
    "kilt_recall_at_k",
    "page_of_chunk",
    "pages_of_chunk_ranking",
    "read_qrels",
    "read_run",
    "tasks_in_database",
]

if TYPE_CHECKING:
    import duckdb

#: ``chunk_id`` as ``kilt_chunks`` builds it; group 1 is the ``wikipedia_id``.
CHUNK_ID_PATTERN = re.compile(r"^doc-(?P<page>.+)_\d+::s-\d+::chunk-\d+$")

#: Ks of KILT's page-level recall (KILT's leaderboard reports recall@5).
PAGE_KS = (5, 20, 100)
#: Ks of chunk-level recall.
CHUNK_RECALL_KS = (5, 20, 100)


class EvaluationError(ValueError):
    """A run or qrels file that cannot be evaluated (names file and line)."""


@dataclass
class Gold:
    """What a task counts as relevant.

    Attributes:
        query_ids: Every query evaluated, in task order.
        evidence_sets: Per query, its KILT evidence sets (sets of
            ``wikipedia_id``); a query without any has none.
        chunk_qrels: Per query, ``chunk_id -> relevance`` (2 or 1).
        labels: Task labels for the report (task, dataset, task_family).
    """

    query_ids: list[str]
    evidence_sets: dict[str, list[set[str]]] = field(default_factory=dict)
    chunk_qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    labels: dict[str, str | None] = field(default_factory=dict)


def page_of_chunk(chunk_id: str) -> str:
    """The ``wikipedia_id`` of a chunk id (``doc-39_1::s-1::chunk-0`` -> ``39``).

    Raises:
        EvaluationError: If ``chunk_id`` is not a kilt_chunks chunk id.
    """
    match = CHUNK_ID_PATTERN.match(chunk_id)
    if not match:
        raise EvaluationError(f"{chunk_id!r} is not a chunk id of kilt_chunks")
    return match.group("page")


def is_chunk_id(doc_id: str) -> bool:
    """True for a ``kilt_chunks`` chunk id, False for anything else (a page)."""
    return CHUNK_ID_PATTERN.match(doc_id) is not None


def dedupe(ids: Iterable[str]) -> list[str]:
    """``ids`` in order, each kept at its first position."""
    return list(dict.fromkeys(ids))


def pages_of_chunk_ranking(chunk_ids: Sequence[str]) -> list[str]:
    """A page ranking from a chunk ranking: each page at its first chunk."""
    return dedupe(page_of_chunk(c) for c in chunk_ids)


def kilt_r_precision(
    ranking: Sequence[str], evidence_sets: Sequence[set[str]]
) -> float:
    """KILT's page-level R-precision of one query.

    Args:
        ranking: Ranked ``wikipedia_id`` (repeats allowed: only a page's
            first position counts).
        evidence_sets: The query's evidence sets.

    Returns:
        max over the sets of (pages of the set among the first R distinct
        ranked pages) / R, R = the set's size; 0.0 without any non-empty set.
    """
    distinct = dedupe(ranking)
    best = 0.0
    for pages in evidence_sets:
        if not pages:
            continue
        r = len(pages)
        best = max(best, sum(1 for page in distinct[:r] if page in pages) / r)
    return best


def kilt_rank(
    ranking: Sequence[str], evidence_sets: Sequence[set[str]]
) -> list[bool | str]:
    """KILT's rank of evidence sets over a page ranking (``get_rank``).

    Each ranked page becomes one rank: ``True`` where it completes an
    evidence set, ``False`` where it is in no set, and a placeholder for a
    set still incomplete (removed again when a later page of that set comes).

    Args:
        ranking: Ranked ``wikipedia_id``, as given (repeats kept).
        evidence_sets: The query's evidence sets (duplicates are one set).

    Returns:
        The rank list; its length is the number of ranked pages minus the
        placeholders removed.
    """
    remaining: list[set[str]] = []
    for pages in evidence_sets:
        if pages and pages not in remaining:
            remaining.append(set(pages))
    rank: list[bool | str] = []
    for page in ranking:
        found = False
        for index, pages in enumerate(remaining):
            if page not in pages:
                continue
            found = True
            placeholder = f"evidence_set:{index}"
            if placeholder in rank:
                rank.remove(placeholder)
            pages.discard(page)
            rank.append(True if not pages else placeholder)
        if not found:
            rank.append(False)
    return rank


def kilt_recall_at_k(
    ranking: Sequence[str], evidence_sets: Sequence[set[str]], k: int
) -> float:
    """KILT's page-level recall@k of one query (see :func:`kilt_rank`).

    Returns:
        Complete evidence sets within the first k ranks / distinct non-empty
        evidence sets; 0.0 without any set.

    Raises:
        ValueError: If ``k`` < 1.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    distinct_sets: list[set[str]] = []
    for pages in evidence_sets:
        if pages and pages not in distinct_sets:
            distinct_sets.append(set(pages))
    if not distinct_sets:
        return 0.0
    rank = kilt_rank(dedupe(ranking), distinct_sets)
    return rank[:k].count(True) / len(distinct_sets)


def read_run(path: str | Path) -> tuple[dict[str, list[str]], str]:
    """Read a run in TREC format or KILT's prediction format.

    TREC: ``query_id Q0 doc_id rank score [tag]`` per line; each query's
    documents are ordered by score (highest first), ties by the rank column.
    KILT: JSON lines ``{"id": ..., "output": [{"provenance": [{"wikipedia_id":
    ...}, ...]}]}``, the first output's provenance best first; an entry with
    a ``chunk_id`` key ranks that chunk instead of a page.

    Args:
        path: The run file (chosen by its first non-blank character: ``{`` is
            KILT JSON lines).

    Returns:
        ``(ranking per query id, format)``; format is ``"trec"`` or ``"kilt"``.

    Raises:
        EvaluationError: Naming the file and line of a malformed line.
        FileNotFoundError: If the file does not exist.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        lines = f.read().splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("{"):
        return _read_kilt_run(path, lines), "kilt"
    scored: dict[str, list[tuple[float, int, str]]] = {}
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) not in (5, 6):
            raise EvaluationError(
                f"{path}, line {number}: expected `query_id Q0 doc_id rank score"
                f" [tag]`, got {len(fields)} fields"
            )
        try:
            rank, score = int(fields[3]), float(fields[4])
        except ValueError as exc:
            raise EvaluationError(
                f"{path}, line {number}: rank {fields[3]!r} or score {fields[4]!r}"
                " is not a number"
            ) from exc
        scored.setdefault(fields[0], []).append((-score, rank, fields[2]))
    return {q: [d for _, _, d in sorted(docs)] for q, docs in scored.items()}, "trec"


def _read_kilt_run(path: Path, lines: list[str]) -> dict[str, list[str]]:
    run: dict[str, list[str]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            query_id = str(item["id"])
            outputs = item.get("output") or [{}]
            entries = outputs[0].get("provenance") or []
            ranking = [
                str(e["chunk_id"]) if "chunk_id" in e else str(e["wikipedia_id"])
                for e in entries
            ]
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise EvaluationError(
                f"{path}, line {number}: not a KILT prediction (JSON with `id` and"
                f" `output[0].provenance[*].wikipedia_id`): {exc!r}"
            ) from exc
        run[query_id] = ranking
    return run


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file: ``query_id iteration doc_id relevance`` per line.

    Returns:
        ``query_id -> doc_id -> relevance``; relevance 0 lines are dropped.

    Raises:
        EvaluationError: Naming the file and line of a malformed line.
    """
    path = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 4:
                raise EvaluationError(
                    f"{path}, line {number}: expected `query_id 0 doc_id relevance`,"
                    f" got {len(fields)} fields"
                )
            try:
                relevance = int(fields[3])
            except ValueError as exc:
                raise EvaluationError(
                    f"{path}, line {number}: relevance {fields[3]!r} is not a whole"
                    " number"
                ) from exc
            if relevance > 0:
                qrels.setdefault(fields[0], {})[fields[2]] = relevance
    return qrels


def gold_from_qrels(path: str | Path, run: dict[str, list[str]]) -> Gold:
    """The gold of a qrels file: chunk qrels when its ids are chunk ids, else
    page qrels (then each query has one evidence set, all its pages, and
    KILT's R-precision is the usual R-precision).

    The queries evaluated are those of the qrels and of the run (a run query
    without qrels scores 0).
    """
    qrels = read_qrels(path)
    gold = Gold(query_ids=dedupe([*qrels, *run]), labels={"task": Path(path).name})
    for query_id, docs in qrels.items():
        chunk_docs = {d: r for d, r in docs.items() if is_chunk_id(d)}
        if chunk_docs:
            gold.chunk_qrels[query_id] = chunk_docs
            pages = {page_of_chunk(d) for d in chunk_docs}
        else:
            pages = set(docs)
        gold.evidence_sets[query_id] = [pages]
    return gold


def gold_from_database(db_path: str | Path, task: str) -> Gold:
    """The gold of a task from a build's ``kilt_queries`` and ``kilt_qrels_chunks``.

    Raises:
        EvaluationError: If the task is not in ``kilt_queries`` (naming the
            tasks there).
    """
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute(
            "select query_id, evidence_sets, dataset, task_family from kilt_queries"
            " where task = ? order by line_number",
            [task],
        ).fetchall()
        if not rows:
            raise EvaluationError(
                f"task {task!r}: not in kilt_queries of {db_path} (tasks there: "
                f"{tasks_in_database(con)})"
            )
        chunk_rows = con.execute(
            "select query_id, chunk_id, relevance from kilt_qrels_chunks"
            " where task = ?",
            [task],
        ).fetchall()
    gold = Gold(
        query_ids=[q for q, *_ in rows],
        labels={"task": task, "dataset": rows[0][2], "task_family": rows[0][3]},
    )
    for query_id, sets, *_ in rows:
        gold.evidence_sets[query_id] = [set(s) for s in sets or []]
    for query_id, chunk_id, relevance in chunk_rows:
        gold.chunk_qrels.setdefault(query_id, {})[chunk_id] = int(relevance)
    return gold


def evaluate(
    gold: Gold,
    run: dict[str, list[str]],
    *,
    page_ks: Sequence[int] = PAGE_KS,
    chunk_recall_ks: Sequence[int] = CHUNK_RECALL_KS,
) -> dict:
    """Page- and chunk-level measures of a run, means over every gold query.

    Args:
        gold: What is relevant (:func:`gold_from_database`,
            :func:`gold_from_qrels`).
        run: Ranked document ids per query (:func:`read_run`): chunk ids, or
            page ids (then the chunk level is not computed).

    Returns:
        A JSON-ready dict: ``labels``; ``num_queries`` (evaluated: every gold
        query), ``num_queries_in_run``, ``num_run_queries_not_in_gold``
        (ignored); per level (``page``, ``chunk``): ``num_queries``,
        ``num_queries_without_relevant`` (scored 0, kept in the means),
        ``measures`` (name -> mean); ``per_query`` (query -> name -> value).
        ``chunk`` is None for a page run.
    """
    queries = gold.query_ids
    is_chunk_run = any(is_chunk_id(d) for docs in run.values() for d in docs[:1])
    per_query: dict[str, dict[str, float]] = {q: {} for q in queries}
    for query_id in queries:
        docs = run.get(query_id, [])
        ranking = pages_of_chunk_ranking(docs) if is_chunk_run else list(docs)
        sets = gold.evidence_sets.get(query_id, [])
        values = per_query[query_id]
        values["page R-precision"] = kilt_r_precision(ranking, sets)
        for k in page_ks:
            values[f"page recall@{k}"] = kilt_recall_at_k(ranking, sets, k)
    page = {
        "num_queries": len(queries),
        "num_queries_without_relevant": sum(
            1 for q in queries if not any(gold.evidence_sets.get(q, []))
        ),
        "measures": _means(per_query, queries, "page "),
    }
    chunk = None
    if is_chunk_run:
        names = _chunk_measures(gold, run, queries, per_query, chunk_recall_ks)
        chunk = {
            "num_queries": len(queries),
            "num_queries_without_relevant": sum(
                1 for q in queries if not gold.chunk_qrels.get(q)
            ),
            "measures": {n: _mean(per_query, queries, n) for n in names},
        }
    return {
        "labels": gold.labels,
        "num_queries": len(queries),
        "num_queries_in_run": sum(1 for q in queries if q in run),
        "num_run_queries_not_in_gold": sum(1 for q in run if q not in per_query),
        "page": page,
        "chunk": chunk,
        "per_query": per_query,
    }


def _mean(
    per_query: dict[str, dict[str, float]], queries: list[str], name: str
) -> float:
    return (
        sum(per_query[q].get(name, 0.0) for q in queries) / len(queries)
        if queries
        else 0.0
    )


def _means(per_query, queries, prefix: str) -> dict[str, float]:
    names = dedupe(n for q in queries for n in per_query[q] if n.startswith(prefix))
    return {n: _mean(per_query, queries, n) for n in names}


def _chunk_measures(
    gold: Gold,
    run: dict[str, list[str]],
    queries: list[str],
    per_query: dict[str, dict[str, float]],
    recall_ks: Sequence[int],
) -> list[str]:
    """Chunk-level measures by ir_measures; a query it skips (no qrels, or not
    in the run) gets 0. Returns the measure names, in report order."""
    import ir_measures
    from ir_measures import RR, R, nDCG

    measures = {"chunk nDCG@10": nDCG @ 10}
    measures |= {f"chunk recall@{k}": R @ k for k in recall_ks}
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
        ir_measures.ScoredDoc(q, d, float(len(docs) - i))
        for q, docs in run.items()
        if q in wanted
        for i, d in enumerate(dedupe(docs))
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


def format_table(result: dict) -> str:
    """The measures of :func:`evaluate` as an aligned text table."""
    labels = result["labels"]
    title = " ".join(
        f"{k} {v}"
        for k, v in labels.items()
        if v is not None and v != labels.get("task")
    )
    lines = [
        f"kilt-chunks eval: {labels.get('task', '')}" + (f" ({title})" if title else "")
    ]
    lines.append(f"  {'measure':<22} {'value':>8}")
    for level in ("page", "chunk"):
        block = result[level]
        if block is None:
            lines.append("  (chunk level: the run ranks pages, not chunks)")
            continue
        for name, value in block["measures"].items():
            lines.append(f"  {name:<22} {value:>8.4f}")
        lines.append(
            f"  {level + ' queries':<22} {block['num_queries']:>8,}"
            f"  ({block['num_queries_without_relevant']:,} without any relevant"
            f" {level}: counted as 0, not dropped)"
        )
    lines.append(
        f"  {'queries in run':<22} {result['num_queries_in_run']:>8,}"
        f"  (missing ones count as 0; {result['num_run_queries_not_in_gold']:,}"
        " run queries not in the task ignored)"
    )
    return "\n".join(lines)


def tasks_in_database(con: duckdb.DuckDBPyConnection) -> str:
    """The tasks of ``kilt_queries``, sorted and comma-separated, or advice to
    build with ``kilt_tasks`` when there are none (for error messages)."""
    tasks = sorted(
        t for (t,) in con.sql("select distinct task from kilt_queries").fetchall()
    )
    return ", ".join(tasks) or "none; build with --vars kilt_tasks"
