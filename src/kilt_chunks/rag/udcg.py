"""``kilt-chunks udcg``: UDCG from passage utilities and relevance labels, as
the released code computes it, and the fitted, position-weighted form with
its correlation to answer accuracy.

UDCG: Trappolini, Cuconasu, Filice, Maarek, Silvestri, "Redefining Retrieval
Evaluation in the Era of LLMs", arXiv 2510.21440 (EACL 2026). The released
form is reimplemented (not copied) from GiovanniTRA/UDCG
``src/compute_udcg_scores.py`` (MIT licence, (c) 2025 its authors)::

    udcg = sigmoid(sum(u(p) * (w_rel if relevant else w_irr)) / len(passages))

with ``u(p) = 1 - no_res_prob``, ``w_rel = 1`` and ``w_irr = -1/3`` by
default. As there: a passage without a score for the model, or without the
label field, adds nothing to the sum but still counts in the divisor (the
item's UDCG is pulled toward sigmoid(0) = 0.5); an item without passages
gets 0.0, not sigmoid(0). The released sample output
(``data/dataset_with_udcg.json``) was made with ``--irrelevant_weight
-0.333`` (its ``example_pipeline.sh``), not the default -1/3.

The fitted form (our reading of the paper's "LLM-oriented positional
discount"): per query, ``x[2i] = u(p_i)`` when the passage at rank i is
relevant (else 0), ``x[2i+1] = u(p_i)`` when it is not (else 0); the 2k
weights and an intercept are fitted by ordinary least squares to the
query's answer accuracy (numpy ``lstsq``). The correlation (Pearson,
Spearman, Kendall: scipy.stats) with accuracy is reported for UDCG, the
fitted form (in sample: optimistic), nDCG@k, recall@k and precision@k.
"""

from __future__ import annotations

__all__ = [
    "IRRELEVANT_WEIGHT",
    "LABEL_FIELDS",
    "RELEVANT_WEIGHT",
    "add_parser",
    "add_udcg",
    "correlations",
    "fit_report",
    "fit_weights",
    "no_res_prob",
    "position_features",
    "read_accuracy",
    "run",
    "udcg_score",
]

import argparse
import copy
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kilt_chunks.rag.utility import UtilityError, read_items, write_json

#: The released defaults of ``--relevant_weight`` / ``--irrelevant_weight``.
RELEVANT_WEIGHT = 1.0
IRRELEVANT_WEIGHT = -1 / 3
#: Passage fields that can serve as the relevance label (``--label-field``):
#: ``is_relevant`` (given in the input; for a run, the build's chunk qrels:
#: KILT provenance) or ``has_answer`` (a gold answer in the chunk, KILT's
#: normalisation: answer_in_context).
LABEL_FIELDS = ("is_relevant", "has_answer")


def no_res_prob(passage: dict, model_id: str) -> float | None:
    """The passage's ``models_info[model_id].no_res_prob``, None if absent."""
    return passage.get("models_info", {}).get(model_id, {}).get("no_res_prob")


def udcg_score(
    passages: Sequence[dict],
    model_id: str,
    relevant_weight: float = RELEVANT_WEIGHT,
    irrelevant_weight: float = IRRELEVANT_WEIGHT,
    label_field: str = "is_relevant",
) -> float:
    """The released UDCG of one item's passages (see the module docstring:
    missing scores or labels add 0 but count in the divisor; no passages:
    0.0)."""
    if not passages:
        return 0.0
    total = 0.0
    for passage in passages:
        prob = no_res_prob(passage, model_id)
        if prob is None or label_field not in passage:
            continue
        weight = relevant_weight if passage[label_field] else irrelevant_weight
        total += (1.0 - prob) * weight
    return 1 / (1 + math.exp(-total / len(passages)))


def add_udcg(
    items: Sequence[dict],
    model_id: str,
    relevant_weight: float = RELEVANT_WEIGHT,
    irrelevant_weight: float = IRRELEVANT_WEIGHT,
    label_field: str = "is_relevant",
) -> list[dict]:
    """A deep copy of the items, each with ``item["udcg"][model_id]`` set (as
    the released script writes it)."""
    out = []
    for item in items:
        copied = copy.deepcopy(item)
        copied.setdefault("udcg", {})[model_id] = udcg_score(
            item.get("passages", []),
            model_id,
            relevant_weight,
            irrelevant_weight,
            label_field,
        )
        out.append(copied)
    return out


# ------------------------------------------------------------------ fitted form


def position_features(
    passages: Sequence[dict], model_id: str, k: int, label_field: str = "is_relevant"
) -> list[float]:
    """The 2k features of the fitted form: for rank i < k, ``u`` in slot 2i
    when the passage is relevant, in slot 2i+1 when it is not; 0 for a
    missing passage, score or label."""
    features = [0.0] * (2 * k)
    for i, passage in enumerate(passages[:k]):
        prob = no_res_prob(passage, model_id)
        if prob is None or label_field not in passage:
            continue
        features[2 * i + (0 if passage[label_field] else 1)] = 1.0 - prob
    return features


def fit_weights(
    features: Sequence[Sequence[float]], accuracy: Sequence[float]
) -> tuple[list[float], float]:
    """Least-squares weights (one per feature) and intercept with
    ``accuracy ~ intercept + features @ weights`` (numpy ``lstsq``: the
    minimum-norm solution when the features are collinear, e.g. a rank never
    relevant)."""
    import numpy as np

    x = np.asarray(features, dtype=float)
    design = np.hstack([np.ones((len(x), 1)), x])
    solution, *_ = np.linalg.lstsq(
        design, np.asarray(accuracy, dtype=float), rcond=None
    )
    return [float(w) for w in solution[1:]], float(solution[0])


def correlations(
    scores: Sequence[float], accuracy: Sequence[float]
) -> dict[str, float | None]:
    """Pearson, Spearman and Kendall (tau-b) correlation of scores with
    accuracy (scipy.stats); None where undefined (a constant series or
    fewer than 2 queries)."""
    from scipy import stats

    result: dict[str, float | None] = {}
    constant = len(set(scores)) < 2 or len(set(accuracy)) < 2
    for name, function in (
        ("pearson", stats.pearsonr),
        ("spearman", stats.spearmanr),
        ("kendall", stats.kendalltau),
    ):
        if constant or len(scores) < 2:
            result[name] = None
        else:
            value = float(function(scores, accuracy)[0])
            result[name] = None if math.isnan(value) else value
    return result


def read_accuracy(
    path: str | Path, measure: str, setting: str | None = "retrieved"
) -> dict[str, float]:
    """``query_id -> measure`` from per-context rows (JSON lines with
    ``query_id``, as ``kilt-chunks answer`` writes them), the rows of one
    ``setting`` (rows without a setting field are always read; None: all).

    Raises:
        UtilityError: Naming the file and line of a row without the fields.
    """
    values: dict[str, float] = {}
    with Path(path).open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if setting is not None and row.get("setting", setting) != setting:
                    continue
                values[str(row["query_id"])] = float(row[measure])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise UtilityError(
                    f"{path}, line {number}: expected `query_id` and `{measure}`"
                    f" ({exc!r})"
                ) from exc
    return values


def fit_report(
    items: Sequence[dict],
    model_id: str,
    accuracy: dict[str, float],
    retrieval: dict[str, dict[str, float]],
    k: int,
    label_field: str = "is_relevant",
) -> dict[str, Any]:
    """The fitted form and the correlations on the items whose
    ``example_id`` has an accuracy.

    Args:
        items: Items with ``udcg[model_id]`` (:func:`add_udcg`).
        accuracy: ``query_id -> accuracy`` (:func:`read_accuracy`).
        retrieval: ``kilt-chunks eval``'s ``per_query`` of the run: its
            ``chunk nDCG@{k}`` (eval gives it at 10 only), ``chunk
            recall@{k}`` and the page-level ``recall@{k}`` and
            ``precision@{k}`` (KILT's) are correlated when present.
        k: Ranks of the fitted form.

    Returns:
        ``num_queries``, ``k``, ``method``, ``weights_relevant`` and
        ``weights_irrelevant`` (per rank), ``intercept``, ``correlations``
        (measure -> pearson/spearman/kendall).

    Raises:
        UtilityError: If no item has an accuracy.
    """
    used = [it for it in items if str(it.get("example_id")) in accuracy]
    if not used:
        raise UtilityError("no item's example_id has an accuracy row")
    acc = [accuracy[str(it["example_id"])] for it in used]
    features = [
        position_features(it.get("passages", []), model_id, k, label_field)
        for it in used
    ]
    weights, intercept = fit_weights(features, acc)
    fitted = [
        intercept + sum(w * x for w, x in zip(weights, f, strict=True))
        for f in features
    ]
    series: dict[str, list[float]] = {
        "udcg": [it["udcg"][model_id] for it in used],
        "udcg_fitted_in_sample": fitted,
    }
    for name in (
        f"chunk nDCG@{k}",
        f"chunk recall@{k}",
        f"recall@{k}",
        f"precision@{k}",
    ):
        rows = [retrieval.get(str(it["example_id"]), {}) for it in used]
        if rows and all(name in r for r in rows):
            series[name] = [float(r[name]) for r in rows]
    return {
        "num_queries": len(used),
        "k": k,
        "label_field": label_field,
        "method": "ordinary least squares with intercept (numpy lstsq)",
        "weights_relevant": weights[0::2],
        "weights_irrelevant": weights[1::2],
        "intercept": intercept,
        "correlations": {
            name: correlations(values, acc) for name, values in series.items()
        },
    }


# ------------------------------------------------------------------ CLI


def add_parser(commands: Any) -> None:
    """Register ``kilt-chunks udcg`` on the CLI's subparsers."""
    parser = commands.add_parser(
        "udcg",
        help="UDCG of each item (the released compute_udcg_scores.py) and its"
        " fitted form",
        description="The released UDCG of each item of a utility output, written"
        " as item['udcg'][MODEL_ID]; with --accuracy, the fitted per-rank"
        " weights and the correlation of UDCG, nDCG@k, recall@k and precision@k"
        " with answer accuracy.",
    )
    parser.add_argument("input", help="JSON in the released format with no_res_prob")
    parser.add_argument(
        "--model-id", required=True, help="the model key of models_info"
    )
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--relevant-weight", type=float, default=RELEVANT_WEIGHT)
    parser.add_argument("--irrelevant-weight", type=float, default=IRRELEVANT_WEIGHT)
    parser.add_argument(
        "--label-field",
        choices=LABEL_FIELDS,
        default="is_relevant",
        help="passage field read as the relevance label (default: is_relevant)",
    )
    parser.add_argument(
        "--accuracy", help="per-query rows of `kilt-chunks answer` (JSON lines)"
    )
    parser.add_argument(
        "--accuracy-measure",
        default="contained",
        help="field of those rows (default: contained)",
    )
    parser.add_argument(
        "--accuracy-setting",
        default="retrieved",
        help="context setting of those rows whose accuracy UDCG predicts"
        " (default: retrieved, the passages in rank order)",
    )
    parser.add_argument(
        "--retrieval-eval", help="`kilt-chunks eval` JSON of the run (its per_query)"
    )
    parser.add_argument("--k", type=int, default=10, help="ranks of the fitted form")
    parser.add_argument("--fit-out", help="fit JSON (default: <out>.fit.json)")


def run(args: argparse.Namespace) -> str:
    """``kilt-chunks udcg``: write the items with UDCG (and the fit), return
    the lines to print.

    Raises:
        UtilityError: Bad input (one line naming the file).
    """
    import statistics

    items = read_items(args.input)
    scored = add_udcg(
        items,
        args.model_id,
        args.relevant_weight,
        args.irrelevant_weight,
        args.label_field,
    )
    write_json(scored, args.out)
    values = [it["udcg"][args.model_id] for it in scored]
    passages = [p for it in items for p in it.get("passages", [])]
    unscored = sum(1 for p in passages if no_res_prob(p, args.model_id) is None)
    unlabelled = sum(1 for p in passages if args.label_field not in p)
    lines = [
        f"udcg {args.out}: {len(scored):,} items, labels from `{args.label_field}`,"
        f" weights {args.relevant_weight:g} / {args.irrelevant_weight:g}"
        + (f", mean {statistics.mean(values):.4f}" if values else ""),
    ]
    if unscored or unlabelled:
        lines.append(
            f"  {unscored:,} passages without a score for {args.model_id},"
            f" {unlabelled:,} without `{args.label_field}`: they add 0 but count"
            " in the divisor (as the released code)"
        )
    if args.accuracy:
        retrieval = {}
        if args.retrieval_eval:
            result = json.loads(Path(args.retrieval_eval).read_text(encoding="utf-8"))
            retrieval = result.get("per_query", {})
        fit = fit_report(
            scored,
            args.model_id,
            read_accuracy(args.accuracy, args.accuracy_measure, args.accuracy_setting),
            retrieval,
            args.k,
            args.label_field,
        )
        fit_out = Path(args.fit_out or f"{args.out}.fit.json")
        fit_out.write_text(json.dumps(fit, indent=2) + "\n", encoding="utf-8")
        lines.append(f"  fit {fit_out}: {fit['num_queries']} queries, k = {args.k}")
        for name, corr in fit["correlations"].items():
            shown = ", ".join(
                f"{m} {'n/a' if v is None else f'{v:+.3f}'}" for m, v in corr.items()
            )
            lines.append(f"    {name:<24} {shown}")
    return "\n".join(lines)
