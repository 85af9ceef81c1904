"""KILT's downstream measures of one query (``kilt/eval_downstream.py``):
answer normalisation, accuracy, exact match, token F1 and ROUGE-L, and
the KILT-AC/EM/F1/RL names."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

#: Which downstream score each KILT task family is ranked by on KILT's
#: leaderboard (the other three are computed too).
HEADLINE_BY_FAMILY = {
    "fact_checking": "accuracy",
    "entity_linking": "accuracy",
    "slot_filling": "accuracy",
    "open_domain_qa": "em",
    "dialogue": "f1",
}

#: Each downstream score and its KILT- name: the same points, counted only
#: where the query's R-precision is 1.
KILT_DOWNSTREAM = {
    "accuracy": "KILT-AC",
    "em": "KILT-EM",
    "f1": "KILT-F1",
    "rougel": "KILT-RL",
}
#: The downstream measures in report order.
DOWNSTREAM_NAMES = [*KILT_DOWNSTREAM, *KILT_DOWNSTREAM.values()]


def normalize_answer(text: str) -> str:
    """KILT's answer normalisation (``eval_downstream.normalize_answer``, after
    SQuAD's): lower case, ASCII punctuation removed, the words a/an/the
    removed, white space collapsed to single spaces."""
    text = text.lower()
    text = "".join(c for c in text if c not in _PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


_PUNCTUATION = frozenset(string.punctuation)


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
