"""What a task counts as relevant: KILT's evidence sets and R-precision
lists of a gold query (``kilt/eval_retrieval.py``: ``get_rank`` step 1,
``_get_ids_list``), and the gold readers (a KILT task file or a build's
``<task>.queries.jsonl``, a qrels file, a build's DuckDB file)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kilt_chunks.evaluation.ids import (
    EvaluationError,
    dedupe,
    is_chunk_id,
    kilt_str,
    page_of_chunk,
    untrec_id,
)
from kilt_chunks.evaluation.runs import Run

if TYPE_CHECKING:
    import duckdb


#: Per gold output: ``None`` when it has no ``provenance`` key, else the
#: ``wikipedia_id`` of each entry as KILT's ``str()`` gives it, unstripped,
#: ``None`` for an entry without one.
OutputPageIds = list[list[str | None] | None]


@dataclass
class GoldQuery:
    """One gold query, as KILT's scorer reads it.

    Attributes:
        query_id: The stripped id.
        output_page_ids: See :data:`OutputPageIds`.
        answers: Gold answers, stripped, non-empty, distinct
            (``get_gold_answers``).
        titles: Gold provenance titles, stripped, non-empty, distinct
            (``get_gold_titles``).
        input: The query text.
    """

    query_id: str
    output_page_ids: OutputPageIds
    answers: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    input: str = ""


@dataclass
class Gold:
    """What a task counts as relevant.

    Attributes:
        queries: Every query evaluated, in task order.
        chunk_qrels: Per query, ``chunk_id -> relevance`` (2 or 1).
        labels: Task labels for the report (task, dataset, task_family).
        is_kilt_evidence: False for page qrels (one set of all pages per
            query: not KILT's evidence sets).
        notes: Counts of what the gold reader did (lines the build
            rejected, duplicate ids, ...), for the table.
        pages_outside_corpus: Gold (query, page) pairs whose page is not in
            the corpus (a chunk run cannot find them); None when unknown.
    """

    queries: list[GoldQuery]
    chunk_qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    labels: dict[str, str | None] = field(default_factory=dict)
    is_kilt_evidence: bool = True
    notes: dict[str, int] = field(default_factory=dict)
    pages_outside_corpus: int | None = None

    @property
    def query_ids(self) -> list[str]:
        """The ids of :attr:`queries`, in order."""
        return [q.query_id for q in self.queries]


def evidence_sets(
    output_page_ids: OutputPageIds, *, skip_empty_sets: bool = False
) -> list[set[str]]:
    """KILT's evidence sets of a gold query (``get_rank``, step 1).

    One set per output with a provenance list, in output order: its entries'
    stripped ids, ``""`` for an entry without ``wikipedia_id`` (rule 5); an
    empty list gives an empty set (rule 2) unless ``skip_empty_sets``; a set
    equal to an earlier one is dropped.
    """
    sets: list[set[str]] = []
    for ids in output_page_ids:
        if ids is None:
            continue
        pages = {"" if i is None else kilt_str(i) for i in ids}
        if skip_empty_sets and not pages:
            continue
        if pages not in sets:
            sets.append(pages)
    return sets


def r_precision_lists(output_page_ids: OutputPageIds) -> list[list[str]]:
    """The gold page lists of KILT's R-precision (``_get_ids_list``): per
    output (one without provenance gives an empty list), its entries'
    stripped ids, entries without ``wikipedia_id`` skipped, duplicates
    dropped."""
    return [
        dedupe(kilt_str(i) for i in ids or [] if i is not None)
        for ids in output_page_ids
    ]


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file: ``query_id iteration doc_id relevance`` per line
    (ids as :func:`trec_id` writes them).

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
                qrels.setdefault(untrec_id(fields[0]), {})[untrec_id(fields[2])] = (
                    relevance
                )
    return qrels


def _stripped_distinct(values: Iterable[Any]) -> list[str]:
    return dedupe(v.strip() for v in values if isinstance(v, str) and v.strip())


def gold_query_from_kilt(item: dict) -> GoldQuery:
    """A :class:`GoldQuery` from one line of a KILT task file, read as KILT's
    scorer reads it (a ``wikipedia_id`` of ``null`` is ``"None"``, as
    ``str(None)``)."""
    outputs = item.get("output") or []
    page_ids: OutputPageIds = []
    for output in outputs:
        if "provenance" not in output:
            page_ids.append(None)
            continue
        page_ids.append(
            [
                str(e["wikipedia_id"]) if "wikipedia_id" in e else None
                for e in output["provenance"] or []
            ]
        )
    return GoldQuery(
        query_id=kilt_str(item["id"]),
        output_page_ids=page_ids,
        answers=_stripped_distinct(o.get("answer") for o in outputs),
        titles=_stripped_distinct(
            e.get("title") for o in outputs for e in o.get("provenance") or []
        ),
        input=str(item.get("input") or ""),
    )


def gold_from_kilt_file(path: str | Path) -> Gold:
    """The gold of a KILT task file (JSON lines with ``id``, ``input``,
    ``output``), or of a build's ``<task>.queries.jsonl`` (its
    ``output_page_ids``, ``answers``, ``provenance_titles``).

    A line with an id seen before is skipped and counted (KILT refuses the
    file).

    Raises:
        EvaluationError: Naming the file and line of a line that is not a
            KILT datapoint, or naming the file when it holds no query (every
            measure would be a meaningless 0).
    """
    path = Path(path)
    queries: list[GoldQuery] = []
    seen: set[str] = set()
    notes = Counter[str]()
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if "output_page_ids" in item:
                    query = GoldQuery(
                        query_id=kilt_str(item["query_id"]),
                        output_page_ids=item["output_page_ids"],
                        answers=_stripped_distinct(item.get("answers") or []),
                        titles=_stripped_distinct(item.get("provenance_titles") or []),
                        input=str(item.get("input") or ""),
                    )
                else:
                    query = gold_query_from_kilt(item)
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise EvaluationError(
                    f"{path}, line {number}: not a KILT datapoint (`id` and a list"
                    f" `output`): {exc!r}"
                ) from exc
            if query.query_id in seen:
                notes["duplicate gold ids (first kept; KILT refuses the file)"] += 1
                continue
            seen.add(query.query_id)
            queries.append(query)
    if not queries:
        raise EvaluationError(
            f"{path}: no gold query (the file is empty or holds only blank lines)"
        )
    name = path.name.removesuffix(".jsonl").removesuffix(".queries")
    return Gold(queries, labels={"task": name}, notes=dict(notes))


def gold_from_qrels(path: str | Path, run: Run) -> Gold:
    """The gold of a qrels file: chunk qrels when its ids are chunk ids, else
    page qrels. Either way each query gets one evidence set, all its pages
    (not KILT's evidence sets: the table says so). The queries evaluated are
    those of the qrels and of the run (a run query without qrels scores 0).

    Raises:
        EvaluationError: As :func:`read_qrels`, or naming the file when it
            holds no line of relevance above 0.
    """
    qrels = read_qrels(path)
    if not qrels:
        raise EvaluationError(
            f"{path}: no relevant document (the file is empty or every relevance is 0)"
        )
    gold = Gold(
        queries=[],
        labels={"task": Path(path).name},
        is_kilt_evidence=False,
    )
    for query_id in dedupe([*qrels, *run.predictions]):
        docs = qrels.get(query_id, {})
        chunk_docs = {d: r for d, r in docs.items() if is_chunk_id(d)}
        if chunk_docs:
            gold.chunk_qrels[query_id] = chunk_docs
            pages = dedupe(page_of_chunk(d) for d in chunk_docs)
        else:
            pages = list(docs)
        gold.queries.append(
            GoldQuery(query_id, [list[str | None](pages)] if pages else [])
        )
    return gold


def gold_from_database(db_path: str | Path, task: str) -> Gold:
    """The gold of a task from a build's ``kilt_queries`` (``output_page_ids``,
    answers, titles) and ``kilt_qrels_chunks``, with the count of task lines
    the build rejected, of gold pages outside the corpus, and the warning of
    ``kilt_provenance_pages_check`` when the task's offsets were applied to
    pages they were not made on (a note of the table).

    Raises:
        EvaluationError: If the task is not in ``kilt_queries`` (naming the
            tasks there), or the build predates ``output_page_ids``.
    """
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        try:
            rows = con.execute(
                "select query_id, output_page_ids, answers, provenance_titles, input,"
                " dataset, task_family from kilt_queries where task = ?"
                " order by line_number",
                [task],
            ).fetchall()
        except duckdb.BinderException as exc:
            raise EvaluationError(
                f"{db_path}: kilt_queries lacks output_page_ids (a build older"
                " than KILT-parity evaluation); rebuild the task models: dbt build"
                " --select int_task_lines_read+ --vars '{kilt_tasks: ...}'"
            ) from exc
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
        (rejected,) = con.execute(
            "select count(*) from kilt_provenance_rejected"
            " where task = ? and span_id is null",
            [task],
        ).fetchone()  # type: ignore[misc]
        (outside,) = con.execute(
            "select count(*) from kilt_qrels_pages"
            " where task = ? and not is_page_in_corpus",
            [task],
        ).fetchone()  # type: ignore[misc]
        try:
            other_pages = con.execute(
                "select warning, num_spans from kilt_provenance_pages_check"
                " where task = ? and warning is not null",
                [task],
            ).fetchall()
        except duckdb.CatalogException:  # a build older than the check
            other_pages = []
    gold = Gold(
        queries=[
            GoldQuery(
                query_id=q,
                output_page_ids=ids or [],
                answers=_stripped_distinct(answers or []),
                titles=_stripped_distinct(titles or []),
                input=text or "",
            )
            for q, ids, answers, titles, text, *_ in rows
        ],
        labels={"task": task, "dataset": rows[0][5], "task_family": rows[0][6]},
        pages_outside_corpus=int(outside),
    )
    if rejected:
        gold.notes[
            "task lines the build rejected (not evaluated: see"
            " kilt_provenance_rejected)"
        ] = int(rejected)
    for warning, num_spans in other_pages:
        gold.notes[f"spans checked; WARNING {warning}"] = int(num_spans)
    for query_id, chunk_id, relevance in chunk_rows:
        gold.chunk_qrels.setdefault(query_id, {})[chunk_id] = int(relevance)
    return gold


def tasks_in_database(con: duckdb.DuckDBPyConnection) -> str:
    """The tasks of ``kilt_queries``, sorted and comma-separated, or advice to
    build with ``kilt_tasks`` when there are none (for error messages)."""
    tasks = sorted(
        t for (t,) in con.sql("select distinct task from kilt_queries").fetchall()
    )
    return ", ".join(tasks) or "none; build with --vars kilt_tasks"
