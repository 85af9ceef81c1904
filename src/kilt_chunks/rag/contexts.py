"""``kilt-chunks contexts``: prompt-ready contexts for positional-bias
experiments (after Cuconasu et al., arXiv 2505.15561).

From items in the released UDCG format (the output of ``kilt-chunks
utility`` on a run, or a run read with ``--db --task --k`` directly), each
query gives:

- ``gold_at_<i>``: the gold chunk (the best-ranked passage labelled relevant)
  placed at position i = 0..n among n hard distractors, the distractors in
  their order. Hard distractors: the best-ranked passages that are neither
  labelled relevant nor hold a gold answer (``--distractors rank``), or those
  with the highest distracting effect ``1 - no_res_prob`` for ``--model-id``
  (``--distractors effect``).
- five orders of the query's passages: ``retrieved`` (rank order: the
  context whose accuracy UDCG predicts), ``inverse``, ``shuffled`` (seeded by
  ``--seed`` and the query id: the same on every run), ``relevant_first``
  (passages labelled relevant first, each group in rank order) and
  ``least_distracting_first`` (by ``1 - no_res_prob`` ascending; needs the
  scores of ``--model-id``).

A query without a labelled relevant passage gets no gold_at_<i> contexts
(counted); one with fewer than n distractors gets none either.
"""

from __future__ import annotations

__all__ = ["ORDERS", "add_parser", "contexts_of_item", "run"]

import argparse
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kilt_chunks.rag.udcg import LABEL_FIELDS, no_res_prob
from kilt_chunks.rag.utility import (
    UtilityError,
    is_json_input,
    items_from_run,
    read_items,
    write_json,
)

ORDERS = (
    "retrieved",
    "inverse",
    "shuffled",
    "relevant_first",
    "least_distracting_first",
)
#: Passage fields kept in a context.
_KEPT = ("doc_id", "rank", "text", "is_relevant", "has_answer", "models_info")


def _passage(p: dict) -> dict:
    return {key: p[key] for key in _KEPT if key in p}


def _effect(passage: dict, model_id: str | None) -> float:
    prob = no_res_prob(passage, model_id) if model_id else None
    if prob is None:
        raise UtilityError(
            f"passage {passage.get('doc_id')!r}: no no_res_prob for {model_id!r}"
            " (run `kilt-chunks utility` first, or leave out"
            " least_distracting_first / --distractors effect)"
        )
    return 1.0 - prob


def contexts_of_item(
    item: dict,
    *,
    num_distractors: int,
    label_field: str = "is_relevant",
    distractors: str = "rank",
    model_id: str | None = None,
    orders: Sequence[str] = ORDERS,
    seed: int = 0,
) -> tuple[list[dict], str | None]:
    """The contexts of one item (see the module docstring).

    Returns:
        The context rows (``context_id`` = ``<query_id>/<setting>``,
        ``query_id``, ``question``, ``answers``, ``setting``,
        ``gold_position`` (None for the orders), ``passages``) and why the
        gold_at_<i> contexts are missing, if they are (None when made).

    Raises:
        UtilityError: If a distracting effect is needed and a score missing,
            or an order is unknown.
    """
    query_id = str(item.get("example_id"))
    passages = sorted(
        item.get("passages", []),
        key=lambda p: (p.get("rank") is None, p.get("rank", 0)),
    )
    base = {
        "query_id": query_id,
        "question": item["question"],
        "answers": item.get("answers", []),
    }
    rows = []

    def add(setting: str, chosen: Sequence[dict], gold_position: int | None) -> None:
        rows.append(
            {
                "context_id": f"{query_id}/{setting}",
                **base,
                "setting": setting,
                "gold_position": gold_position,
                "passages": [_passage(p) for p in chosen],
            }
        )

    missing = None
    gold = next((p for p in passages if p.get(label_field)), None)
    pool = [p for p in passages if not p.get(label_field) and not p.get("has_answer")]
    if distractors == "effect":
        pool = sorted(pool, key=lambda p: -_effect(p, model_id))
    chosen = pool[:num_distractors]
    if gold is None:
        missing = f"no passage labelled `{label_field}`"
    elif len(chosen) < num_distractors:
        missing = f"{len(chosen)} hard distractors, fewer than {num_distractors}"
    else:
        for i in range(num_distractors + 1):
            add(f"gold_at_{i}", [*chosen[:i], gold, *chosen[i:]], i)
    for order in orders:
        if order == "retrieved":
            ordered = list(passages)
        elif order == "inverse":
            ordered = passages[::-1]
        elif order == "shuffled":
            ordered = list(passages)
            random.Random(f"{seed}:{query_id}").shuffle(ordered)
        elif order == "relevant_first":
            ordered = [p for p in passages if p.get(label_field)] + [
                p for p in passages if not p.get(label_field)
            ]
        elif order == "least_distracting_first":
            ordered = sorted(passages, key=lambda p: _effect(p, model_id))
        else:
            raise UtilityError(f"unknown order {order!r}: one of {', '.join(ORDERS)}")
        add(order, ordered, None)
    return rows, missing


def add_parser(commands: Any, default_db: str) -> None:
    """Register ``kilt-chunks contexts`` on the CLI's subparsers."""
    parser = commands.add_parser(
        "contexts",
        help="positional-bias contexts: gold at each position, five orders",
        description="Prompt-ready contexts from a utility output (or a run with"
        " --task --k --db): the gold chunk at each position among n hard"
        " distractors, and the passages as retrieved, inverse, shuffled"
        " (seeded), relevant first and least distracting first.",
    )
    parser.add_argument("input", help="utility output JSON (released format) or a run")
    parser.add_argument("--out", required=True, help="file to write")
    parser.add_argument(
        "--format",
        choices=("jsonl", "udcg"),
        default="jsonl",
        help="JSON lines (default) or the released UDCG input format",
    )
    parser.add_argument(
        "--num-distractors", type=int, default=4, help="n (positions 0..n)"
    )
    parser.add_argument("--distractors", choices=("rank", "effect"), default="rank")
    parser.add_argument("--model-id", help="model key of no_res_prob (effect orders)")
    parser.add_argument("--label-field", choices=LABEL_FIELDS, default="is_relevant")
    parser.add_argument(
        "--orders", default=",".join(ORDERS), help="comma-separated (default: all five)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the shuffled order"
    )
    parser.add_argument("--task", help="task (run input)")
    parser.add_argument("--k", type=int, default=10, help="top chunks (run input)")
    parser.add_argument("--db", default=default_db, help="DuckDB file (run input)")


def run(args: argparse.Namespace) -> str:
    """``kilt-chunks contexts``: write the contexts, return the lines to print.

    Raises:
        UtilityError: Bad input (one line).
    """
    if args.num_distractors < 0:
        raise UtilityError(
            f"--num-distractors must be >= 0, not {args.num_distractors}"
        )
    if is_json_input(args.input):
        items = read_items(args.input)
    else:
        if not args.task:
            raise UtilityError(f"{args.input}: a run needs --task (and --k, --db)")
        items = items_from_run(args.input, args.db, args.task, args.k)
    orders = [o.strip() for o in args.orders.split(",") if o.strip()]
    rows: list[dict] = []
    without: dict[str, int] = {}
    for item in items:
        made, missing = contexts_of_item(
            item,
            num_distractors=args.num_distractors,
            label_field=args.label_field,
            distractors=args.distractors,
            model_id=args.model_id,
            orders=orders,
            seed=args.seed,
        )
        rows.extend(made)
        if missing:
            without[missing] = without.get(missing, 0) + 1
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.format == "udcg":
        write_json(
            [
                {
                    "example_id": r["context_id"],
                    "question": r["question"],
                    "answers": r["answers"],
                    "passages": r["passages"],
                }
                for r in rows
            ],
            out,
        )
    else:
        with out.open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    lines = [f"contexts {out}: {len(rows):,} contexts of {len(items):,} queries"]
    for reason, count in without.items():
        lines.append(f"  {count:,} queries without gold_at_<i> contexts: {reason}")
    return "\n".join(lines)
