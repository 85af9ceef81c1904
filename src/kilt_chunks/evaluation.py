"""Evaluate a run on a KILT task: KILT's own page-level and downstream
measures, query for query, and chunk-level measures.

Page level equals KILT's retrieval scorer (facebookresearch/KILT,
``kilt/eval_retrieval.py``; Petroni et al., NAACL 2021, section 4.3) with its
default rank key ``wikipedia_id``, written here from its definitions (no code
copied); the rules, each with the KILT function it follows:

1. **Evidence sets** (``get_rank``): one per gold output that has a
   ``provenance`` key, in output order, the set of its entries' ids; equal
   sets count once (the first). The order matters: :func:`kilt_rank`.
2. **An output with** ``"provenance": []`` is an (empty) evidence set
   (``get_rank``): it is never complete, so it lowers recall@k.
   ``skip_empty_sets=True`` drops it instead (a reading of our own, named so
   in the table).
3. **The prediction's provenance** (``filter_answers``): the one output of a
   prediction that has ``provenance``. KILT refuses a file where a
   prediction has none or several; here such a query scores 0 (none) or uses
   the first (several), and the table counts them.
4. **Ids are stripped** (``_get_ids_list``, ``get_rank``, ``validate_input``):
   ``str(x).strip()`` for page ids and query ids; a JSON number or ``null``
   is its ``str()`` (``303``, ``None``).
5. **An entry without** ``wikipedia_id``: skipped in a prediction and in the
   gold lists of R-precision (``_get_ids_list``); in a gold evidence set of
   ``get_rank`` it is the id ``""`` (the set can then never be completed).
6. **Every gold query counts** (``compute``, ``validate_input``): the mean
   is over the gold queries. KILT refuses a file with a gold query missing
   from the predictions, or a duplicate id; here a missing query scores 0 and
   a duplicate prediction keeps its first line, both counted in the table.
7. (Build side) provenance entries without ``wikipedia_id`` are counted
   once, as rejected, in ``kilt_provenance_summary``.
8. **Page qrels** (``--qrels <task>.pages.qrels``) hold no evidence sets:
   their page scores are labelled "not KILT's"; ``<task>.queries.jsonl``
   (its ``output_page_ids``) or the task file give KILT's.

Measures per query (``kilt/eval_retrieval.py``): **R-precision**
(``rprecision``, ``_computeRprec``: per gold output, of the first R distinct
predicted pages, the share in that output's page list of R pages; the best
output counts; 0 without any), **precision@k** (``_precision_at_k``: complete
evidence sets in the first k ranks of :func:`kilt_rank`, over k),
**recall@k** (``_recall_at_k``: over the number of distinct evidence sets),
**success_rate@k** (``_success_rate_at_k``: 1 if any set is complete in the
first k ranks), all 0 when the query has no evidence set;
**answer_in_context@k** (``_answer_in_context_at_k``: 1 if a normalised gold
answer is inside the normalised ``text`` of one of the first k provenance
entries of the prediction, as given: entries without ``wikipedia_id``
included, an entry without ``text`` holding nothing; for a chunk run, the
text of the first k chunks), **answer_and_ent_in_context@k**
(``_answer_and_ent_in_context_at_k``: one of those texts holds both a gold
answer and a gold provenance title), **entity_in_context@k**
(``_ent_in_context_at_k``: one holds a gold title), all from the texts the
prediction carries, as KILT reads them (not the knowledge source's pages),
and **entity_in_input** (``_entity_in_input``: a normalised gold provenance
title inside the normalised input). KILT reports recall@k and
success_rate@k only for k > 1; they are computed here for every k.

Downstream (``kilt/eval_downstream.py``, ``_calculate_metrics``), when the
run carries answers: the answer is ``str(answer).strip()``; an empty answer
scores 0; **accuracy** (the answer is one of the stripped gold answers),
**em**, **f1** (SQuAD's token F1; the best gold answer counts), **rougel**
(ROUGE-L F of the ``rouge`` package, as KILT computes it), each the max over
the gold answers after KILT's ``normalize_answer`` (lower case, punctuation
and the articles a/an/the removed, white space collapsed; ROUGE-L reads the
answers as given); and **KILT-AC, KILT-EM, KILT-F1, KILT-RL**: the same
points, counted only where the query's R-precision is 1.

A chunk run (TREC, chunk ids) becomes a page ranking by each page's first
chunk. Chunk level (graded qrels of the build) uses `ir_measures
<https://ir-measur.es>`_ (MacAvaney et al., ECIR 2022): nDCG@10 and
recall@k from its ``pytrec_eval`` provider (trec_eval's C code), MRR@10
(``RR@10``) from its own implementation (pytrec_eval has no cut-off for the
reciprocal rank). Two means are given for each, named apart: over every gold
query (a query without a relevant chunk scores 0; the project's choice) and
over the queries with a relevant chunk (trec_eval's convention). Ties in
score keep the run's order (the rank column); trec_eval breaks them by
document id instead.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

__all__ = [
    "CHUNK_ID_PATTERN",
    "DEFAULT_KS",
    "EvaluationError",
    "Gold",
    "GoldQuery",
    "Prediction",
    "answer_and_entity_in_context",
    "answer_in_context",
    "context_hits",
    "dedupe",
    "downstream_scores",
    "entity_in_context",
    "entity_in_input",
    "evaluate",
    "evidence_sets",
    "format_table",
    "gold_from_database",
    "gold_from_kilt_file",
    "gold_from_qrels",
    "is_chunk_id",
    "kilt_r_precision",
    "kilt_rank",
    "kilt_recall_at_k",
    "normalize_answer",
    "page_of_chunk",
    "pages_of_chunk_ranking",
    "r_precision_lists",
    "read_qrels",
    "read_run",
    "tasks_in_database",
    "trec_id",
    "untrec_id",
]

if TYPE_CHECKING:
    import duckdb

#: ``chunk_id`` as ``kilt_chunks`` builds it; group 1 is the ``wikipedia_id``.
CHUNK_ID_PATTERN = re.compile(r"^doc-(?P<page>.+)_\d+::s-\d+::chunk-\d+$")

#: Default ks: KILT's own default (``--ks 1,5,10,20``) and 100, the depth of
#: the BM25 run.
DEFAULT_KS = (1, 5, 10, 20, 100)

#: Which downstream score each KILT task family is ranked by on KILT's
#: leaderboard (the other three are computed too).
HEADLINE_BY_FAMILY = {
    "fact_checking": "accuracy",
    "entity_linking": "accuracy",
    "slot_filling": "accuracy",
    "open_domain_qa": "em",
    "dialogue": "f1",
}


class EvaluationError(ValueError):
    """A run, gold or qrels file that cannot be evaluated (names file and line)."""


# ---------------------------------------------------------------- ids


def trec_id(identifier: str) -> str:
    """An id as a TREC run or qrels file can hold it (one field, no white
    space): each white-space character and ``%`` percent-encoded as UTF-8
    (``947testa CRICKET`` -> ``947testa%20CRICKET``); other ids unchanged.
    :func:`untrec_id` reverses it."""
    if "%" not in identifier and identifier.split() == [identifier]:
        return identifier
    return "".join(
        quote(c, safe="") if c == "%" or c.isspace() else c for c in identifier
    )


def untrec_id(field_text: str) -> str:
    """The id a TREC field stands for (:func:`trec_id` reversed)."""
    return unquote(field_text) if "%" in field_text else field_text


def kilt_str(value: Any) -> str:
    """An id as KILT compares it: ``str(value).strip()`` (rule 4)."""
    return str(value).strip()


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


def dedupe(ids: Iterable[Any]) -> list[Any]:
    """``ids`` in order, each kept at its first position."""
    return list(dict.fromkeys(ids))


def pages_of_chunk_ranking(chunk_ids: Sequence[str]) -> list[str]:
    """A page ranking from a chunk ranking: each page at its first chunk."""
    return dedupe(page_of_chunk(c) for c in chunk_ids)


# ---------------------------------------------------------------- gold


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


# ---------------------------------------------------------------- measures


def kilt_r_precision(
    ranking: Sequence[str], gold_lists: Sequence[Sequence[str]]
) -> float:
    """KILT's R-precision of one query (``rprecision``, ``_computeRprec``).

    Args:
        ranking: Predicted page ids, distinct, best first.
        gold_lists: :func:`r_precision_lists` (or any sets of pages).

    Returns:
        max over the gold lists of (pages of the list among the first R
        predicted) / R, R the list's size (0 for an empty list); 0.0 without
        any list.
    """
    best = 0.0
    for gold in gold_lists:
        pages = set(gold)
        r = len(pages)
        if r:
            best = max(best, sum(1 for p in ranking[:r] if p in pages) / r)
    return best


def kilt_rank(ranking: Sequence[str], sets: Sequence[set[str]]) -> list[bool | str]:
    """KILT's rank of evidence sets over a page ranking (``get_rank``, step 3).

    Going down the ranking, a page of no set adds ``False``; for each set
    (in the given order) holding the page, the page is taken out of the set,
    the set's earlier pending point (if any) is removed, and ``True`` (set now
    complete) or a new pending point ``"evidence_set:<i>"`` is added. A page
    in two sets thus adds two points, in set order: why the order of the
    evidence sets changes recall@k.

    Args:
        ranking: Predicted page ids, distinct, best first.
        sets: :func:`evidence_sets` (copied, not changed).
    """
    remaining = [set(s) for s in sets]
    rank: list[bool | str] = []
    for page in ranking:
        found = False
        for index, pages in enumerate(remaining):
            if page not in pages:
                continue
            found = True
            point = f"evidence_set:{index}"
            if point in rank:
                rank.remove(point)
            pages.discard(page)
            rank.append(True if not pages else point)
        if not found:
            rank.append(False)
    return rank


def kilt_recall_at_k(ranking: Sequence[str], sets: Sequence[set[str]], k: int) -> float:
    """KILT's recall@k of one query (``_recall_at_k``): complete evidence sets
    in the first k ranks of :func:`kilt_rank` over the number of sets; 0.0
    without any set.

    Raises:
        ValueError: If ``k`` < 1.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if not sets:
        return 0.0
    return kilt_rank(ranking, sets)[:k].count(True) / len(sets)


def normalize_answer(text: str) -> str:
    """KILT's answer normalisation (``eval_downstream.normalize_answer``, after
    SQuAD's): lower case, ASCII punctuation removed, the words a/an/the
    removed, white space collapsed to single spaces."""
    text = text.lower()
    text = "".join(c for c in text if c not in _PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


_PUNCTUATION = frozenset(string.punctuation)


def context_hits(
    answers: Iterable[str], titles: Iterable[str], contexts: Sequence[str | None]
) -> dict[str, int | None]:
    """Where the first context holding a gold answer, a gold answer and a
    gold title, or a gold title is: the first rank of KILT's
    ``_answer_in_context_at_k``, ``_answer_and_ent_in_context_at_k`` and
    ``_ent_in_context_at_k`` (``kilt/eval_retrieval.py``), each context
    normalised once.

    A context holds a string when the string normalised
    (:func:`normalize_answer`) is a substring of the context normalised; a
    None context (a provenance entry without ``text``) holds nothing. For
    answer_and_ent, the answer and the title must be in the same context.

    Args:
        answers: Gold answers (``get_gold_answers``: stripped, non-empty).
        titles: Gold provenance titles (``get_gold_titles``: stripped,
            non-empty).
        contexts: The prediction's provenance texts in its order (all
            entries, with or without ``wikipedia_id``), or a chunk run's chunk
            texts in rank order.

    Returns:
        ``answer``, ``answer_and_ent``, ``entity``: the 0-based position of
        the first such context, None when there is none.
    """
    answer_keys = [normalize_answer(a) for a in answers]
    title_keys = [normalize_answer(t) for t in titles]
    first: dict[str, int | None] = {
        "answer": None,
        "answer_and_ent": None,
        "entity": None,
    }
    for position, text in enumerate(contexts):
        if text is None:
            continue
        context = normalize_answer(text)
        has_answer = any(a in context for a in answer_keys)
        has_title = any(t in context for t in title_keys)
        if has_answer and first["answer"] is None:
            first["answer"] = position
        if has_answer and has_title and first["answer_and_ent"] is None:
            first["answer_and_ent"] = position
        if has_title and first["entity"] is None:
            first["entity"] = position
        if all(v is not None for v in first.values()):
            break
    return first


def _within(position: int | None, k: int) -> int:
    return int(position is not None and position < k)


def answer_in_context(
    answers: Iterable[str], contexts: Sequence[str | None], k: int
) -> int:
    """KILT's answer_in_context@k (``_answer_in_context_at_k``): 1 when a
    normalised answer is a substring of the normalised text of one of the
    first k contexts (None: an entry without text), else 0."""
    return _within(context_hits(answers, [], contexts[:k])["answer"], k)


def answer_and_entity_in_context(
    answers: Iterable[str],
    titles: Iterable[str],
    contexts: Sequence[str | None],
    k: int,
) -> int:
    """KILT's answer_and_ent_in_context@k (``_answer_and_ent_in_context_at_k``):
    1 when one of the first k contexts holds both a gold answer and a gold
    title (normalised substrings, as :func:`context_hits`), else 0."""
    return _within(context_hits(answers, titles, contexts[:k])["answer_and_ent"], k)


def entity_in_context(
    titles: Iterable[str], contexts: Sequence[str | None], k: int
) -> int:
    """KILT's entity_in_context@k (``_ent_in_context_at_k``): 1 when one of
    the first k contexts holds a gold title (normalised substring), else 0."""
    return _within(context_hits([], titles, contexts[:k])["entity"], k)


def entity_in_input(titles: Iterable[str], query: str) -> int:
    """KILT's entity_in_input (``_entity_in_input``): 1 when a normalised gold
    title is a substring of the normalised input."""
    text = normalize_answer(query)
    return int(any(normalize_answer(t) in text for t in titles))


def _f1(prediction: str, gold: str) -> float:
    """SQuAD's token F1 on normalised answers (``_f1_score``)."""
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def _rouge_l(prediction: str, gold: str) -> float:
    """ROUGE-L F of the ``rouge`` package (``_rougel_score``), not normalised;
    0.0 where the package refuses the pair (an empty hypothesis)."""
    from rouge import Rouge

    try:
        return float(Rouge().get_scores(prediction, gold, avg=True)["rouge-l"]["f"])
    except ValueError:
        return 0.0


def downstream_scores(
    answer: str | None, gold_answers: Sequence[str]
) -> dict[str, float]:
    """KILT's downstream points of one query (``_calculate_metrics``).

    Args:
        answer: The predicted answer (None: none given).
        gold_answers: Stripped, non-empty, distinct gold answers.

    Returns:
        ``accuracy``, ``em``, ``f1``, ``rougel``: 0 for a missing or empty
        answer, or a query without gold answers (KILT's code fails there).
    """
    scores = {"accuracy": 0.0, "em": 0.0, "f1": 0.0, "rougel": 0.0}
    guess = "" if answer is None else str(answer).strip()
    if not guess or not gold_answers:
        return scores
    scores["accuracy"] = float(guess in set(gold_answers))
    scores["em"] = max(
        float(normalize_answer(guess) == normalize_answer(g)) for g in gold_answers
    )
    scores["f1"] = max(_f1(guess, g) for g in gold_answers)
    scores["rougel"] = max(_rouge_l(guess, g) for g in gold_answers)
    return scores


# ---------------------------------------------------------------- runs


@dataclass
class Prediction:
    """One query of a run.

    Attributes:
        ranking: Page or chunk ids, best first, as given (stripped for a KILT
            prediction; entries without ``wikipedia_id`` skipped).
        contexts: KILT prediction: the ``text`` of each provenance entry in
            order (None without one); a chunk run: filled from the build.
        answer: The predicted answer, if the prediction has one.
    """

    ranking: list[str]
    contexts: list[str | None] = field(default_factory=list)
    answer: str | None = None


@dataclass
class Run:
    """A run read by :func:`read_run`."""

    predictions: dict[str, Prediction]
    format: str
    notes: dict[str, int] = field(default_factory=dict)

    @property
    def is_chunk_run(self) -> bool:
        """True when the run ranks chunk ids."""
        return any(
            is_chunk_id(d) for p in self.predictions.values() for d in p.ranking[:1]
        )

    @property
    def has_answers(self) -> bool:
        """True when any prediction carries an answer."""
        return any(p.answer is not None for p in self.predictions.values())


def read_run(path: str | Path) -> Run:
    """Read a run in TREC format or KILT's prediction format.

    TREC: ``query_id Q0 doc_id rank score [tag]`` per line, ids as
    :func:`trec_id` writes them; each query's documents ordered by score
    (highest first), ties by the rank column. KILT: JSON lines with ``id``
    and ``output``, read as KILT's ``filter_answers`` and ``_get_ids_list``
    do (rules 3-5); an entry with a ``chunk_id`` key ranks that chunk.

    Raises:
        EvaluationError: Naming the file and line of a malformed line.
        FileNotFoundError: If the file does not exist.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        lines = f.read().splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("{"):
        return _read_kilt_run(path, lines)
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
        scored.setdefault(untrec_id(fields[0]), []).append(
            (-score, rank, untrec_id(fields[2]))
        )
    return Run(
        {
            q: Prediction(dedupe(d for _, _, d in sorted(docs)))
            for q, docs in scored.items()
        },
        "trec",
    )


def _read_kilt_run(path: Path, lines: list[str]) -> Run:
    predictions: dict[str, Prediction] = {}
    notes = Counter[str]()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            query_id = kilt_str(item["id"])
            outputs = item.get("output") or []
            with_provenance = [o for o in outputs if "provenance" in o]
            with_answer = [o for o in outputs if "answer" in o]
            entries = with_provenance[0]["provenance"] or [] if with_provenance else []
            ranking = dedupe(
                kilt_str(e["chunk_id"] if "chunk_id" in e else e["wikipedia_id"])
                for e in entries
                if "chunk_id" in e or "wikipedia_id" in e
            )
            contexts = [e.get("text") for e in entries]
            answer = with_answer[0]["answer"] if with_answer else None
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise EvaluationError(
                f"{path}, line {number}: not a KILT prediction (a JSON object with"
                f" `id` and a list `output`): {exc!r}"
            ) from exc
        if query_id in predictions:
            notes["duplicate prediction ids (first kept; KILT refuses the file)"] += 1
            continue
        if len(with_provenance) == 0:
            notes[
                "predictions without an output with provenance (page scores 0;"
                " KILT's eval_retrieval refuses the file)"
            ] += 1
        elif len(with_provenance) > 1:
            notes[
                "predictions with several outputs with provenance (first used;"
                " KILT refuses the file)"
            ] += 1
        skipped = sum(
            1 for e in entries if "chunk_id" not in e and "wikipedia_id" not in e
        )
        if skipped:
            notes["provenance entries without wikipedia_id (skipped, as KILT)"] += (
                skipped
            )
        predictions[query_id] = Prediction(ranking, contexts, answer)
    return Run(predictions, "kilt", dict(notes))


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


# ---------------------------------------------------------------- gold readers


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
            KILT datapoint.
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
    name = path.name.removesuffix(".jsonl").removesuffix(".queries")
    return Gold(queries, labels={"task": name}, notes=dict(notes))


def gold_from_qrels(path: str | Path, run: Run) -> Gold:
    """The gold of a qrels file: chunk qrels when its ids are chunk ids, else
    page qrels. Either way each query gets one evidence set, all its pages
    (not KILT's evidence sets: the table says so). The queries evaluated are
    those of the qrels and of the run (a run query without qrels scores 0).
    """
    qrels = read_qrels(path)
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
    the build rejected and of gold pages outside the corpus.

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
    for query_id, chunk_id, relevance in chunk_rows:
        gold.chunk_qrels.setdefault(query_id, {})[chunk_id] = int(relevance)
    return gold


# ---------------------------------------------------------------- evaluate


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
                    values[f"{name}_in_context@{k}"] = float(_within(first[name], k))
        values["entity_in_input"] = float(entity_in_input(query.titles, query.input))
        if with_answers:
            points = downstream_scores(prediction.answer, query.answers)
            values.update(points)
            is_one = values["Rprec"] == 1
            for name, kilt_name in _KILT_DOWNSTREAM.items():
                values[kilt_name] = points[name] if is_one else 0.0
        per_query[query.query_id] = values
    queries = gold.query_ids
    page_names = [n for n in _first(per_query) if n not in _DOWNSTREAM_NAMES]
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
            "measures": {n: _mean(per_query, queries, n) for n in _DOWNSTREAM_NAMES},
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


_KILT_DOWNSTREAM = {
    "accuracy": "KILT-AC",
    "em": "KILT-EM",
    "f1": "KILT-F1",
    "rougel": "KILT-RL",
}
_DOWNSTREAM_NAMES = [*_KILT_DOWNSTREAM, *_KILT_DOWNSTREAM.values()]


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


# ---------------------------------------------------------------- report


#: Width of the measure-name column of :func:`format_table` (the longest
#: name, ``page answer_and_ent_in_context@100``, is 34 characters).
_NAME_WIDTH = 36


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
    page = result["page"]
    if page["is_kilt"]:
        heading = "page level: KILT's eval_retrieval.py, query for query"
        if page["skip_empty_sets"]:
            heading += " (except: empty evidence sets skipped, not KILT's reading)"
    else:
        heading = (
            "page level from a qrels file: one set of all pages per query, NOT"
            " KILT's evidence sets (use --gold <task>.queries.jsonl)"
        )
    lines.append(f"  {heading}")
    lines.append(f"  {'measure':<{_NAME_WIDTH}} {'value':>8}")
    for name, value in page["measures"].items():
        lines.append(f"  {'page ' + name:<{_NAME_WIDTH}} {value:>8.4f}")
    lines.append(
        f"  {'page queries':<{_NAME_WIDTH}} {page['num_queries']:>8,}"
        f"  ({page['num_queries_without_evidence']:,} without any evidence set:"
        " counted as 0, not dropped)"
    )
    if result.get("pages_outside_corpus") is not None:
        lines.append(
            f"  {'gold pages not in corpus':<{_NAME_WIDTH}}"
            f" {result['pages_outside_corpus']:>8,}"
            "  (query-page pairs a chunk run cannot find)"
        )
    down = result.get("downstream")
    if down:
        lines.append(
            "  downstream: KILT's eval_downstream.py"
            + (
                f" (headline for this family: {down['headline']})"
                if down["headline"]
                else ""
            )
        )
        for name, value in down["measures"].items():
            lines.append(f"  {name:<{_NAME_WIDTH}} {value:>8.4f}")
        if down["num_queries_without_gold_answer"]:
            lines.append(
                f"  {'queries without gold answer':<{_NAME_WIDTH}}"
                f" {down['num_queries_without_gold_answer']:>8,}  (scored 0)"
            )
    chunk = result["chunk"]
    if chunk is None:
        lines.append("  (chunk level: the run ranks pages, not chunks)")
    else:
        lines.append(
            "  chunk level (ir_measures): mean over every query | trec_eval's"
            " mean over queries with a relevant chunk"
        )
        for name, value in chunk["measures"].items():
            lines.append(
                f"  {name:<{_NAME_WIDTH}} {value:>8.4f}"
                f" | {chunk['measures_trec_eval'][name]:.4f}"
            )
        lines.append(
            f"  {'chunk queries':<{_NAME_WIDTH}} {chunk['num_queries']:>8,}"
            f" | {chunk['num_queries_with_relevant']:,}"
        )
    lines.append(
        f"  {'queries in run':<{_NAME_WIDTH}} {result['num_queries_in_run']:>8,}"
        f"  (missing ones count as 0; {result['num_run_queries_not_in_gold']:,}"
        " run queries not in the gold ignored)"
    )
    for note, count in result["notes"].items():
        lines.append(f"  {count:>8,}  {note}")
    return "\n".join(lines)


def tasks_in_database(con: duckdb.DuckDBPyConnection) -> str:
    """The tasks of ``kilt_queries``, sorted and comma-separated, or advice to
    build with ``kilt_tasks`` when there are none (for error messages)."""
    tasks = sorted(
        t for (t,) in con.sql("select distinct task from kilt_queries").fetchall()
    )
    return ", ".join(tasks) or "none; build with --vars kilt_tasks"


def chunk_texts_from_database(
    db_path: str | Path,
) -> Callable[[list[str]], dict[str, str]]:
    """A ``chunk_texts`` for :func:`evaluate`: the text of chunk ids from the
    build's ``kilt_chunks`` (one join per call)."""

    def lookup(chunk_ids: list[str]) -> dict[str, str]:
        import duckdb
        import pyarrow as pa

        wanted = pa.table({"chunk_id": pa.array(chunk_ids, pa.string())})
        with duckdb.connect(str(db_path), read_only=True) as con:
            con.register("wanted_chunks", wanted)
            rows = con.sql(
                "select c.chunk_id, c.text from kilt_chunks as c"
                " semi join wanted_chunks as w on c.chunk_id = w.chunk_id"
            ).fetchall()
        return dict(rows)

    return lookup
