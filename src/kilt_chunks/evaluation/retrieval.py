"""KILT's retrieval measures of one query (``kilt/eval_retrieval.py``):
R-precision, the rank of evidence sets with precision, recall and success
rate at k, and the *_in_context and entity_in_input measures. As in KILT,
the answer normalisation comes from the downstream module."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kilt_chunks.evaluation.downstream import normalize_answer


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


def within_k(position: int | None, k: int) -> int:
    """1 when a 0-based ``position`` (None: nowhere) is among the first k."""
    return int(position is not None and position < k)


def answer_in_context(
    answers: Iterable[str], contexts: Sequence[str | None], k: int
) -> int:
    """KILT's answer_in_context@k (``_answer_in_context_at_k``): 1 when a
    normalised answer is a substring of the normalised text of one of the
    first k contexts (None: an entry without text), else 0."""
    return within_k(context_hits(answers, [], contexts[:k])["answer"], k)


def answer_and_entity_in_context(
    answers: Iterable[str],
    titles: Iterable[str],
    contexts: Sequence[str | None],
    k: int,
) -> int:
    """KILT's answer_and_ent_in_context@k (``_answer_and_ent_in_context_at_k``):
    1 when one of the first k contexts holds both a gold answer and a gold
    title (normalised substrings, as :func:`context_hits`), else 0."""
    return within_k(context_hits(answers, titles, contexts[:k])["answer_and_ent"], k)


def entity_in_context(
    titles: Iterable[str], contexts: Sequence[str | None], k: int
) -> int:
    """KILT's entity_in_context@k (``_ent_in_context_at_k``): 1 when one of
    the first k contexts holds a gold title (normalised substring), else 0."""
    return within_k(context_hits([], titles, contexts[:k])["entity"], k)


def entity_in_input(titles: Iterable[str], query: str) -> int:
    """KILT's entity_in_input (``_entity_in_input``): 1 when a normalised gold
    title is a substring of the normalised input."""
    text = normalize_answer(query)
    return int(any(normalize_answer(t) in text for t in titles))
