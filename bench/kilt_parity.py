"""Query-for-query comparison of ``kilt-chunks eval`` with KILT's own scorer.

Usage::

    python bench/kilt_parity.py --kilt /tmp/kilt --out /tmp/kilt_parity [--queries 3000]

``--kilt`` is a checkout of facebookresearch/KILT (its ``kilt/`` package is
imported from there at run time, unmodified; nothing of it is copied here).
The script writes a held-back set of KILT gold files and predictions (random
queries drawn over a small page pool so that evidence sets overlap, plus the
repro cases of the evaluation issue): several outputs per query, answer-only
outputs, empty provenance lists, entries without ``wikipedia_id`` or with a
``null`` one, ids padded with white space or given as numbers, query ids
holding spaces (AIDA style), duplicate and entry-less predictions, provenance
texts and answers. KILT scores each query with ``eval_retrieval``'s
``get_ranking_metrics`` (after its own ``validate_input`` and
``filter_answers``) and ``eval_downstream``'s ``_calculate_metrics``;
``kilt-chunks eval --gold`` scores the same files; every value of every query
is compared, and the means of KILT's ``evaluate`` functions too. Prints one
JSON line: queries, values compared, mismatches (the first few shown).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import subprocess
import sys
from pathlib import Path

KS = [1, 5, 10, 20, 100]
WORDS = "paris rome the cat an eiffel tower mat blue river saxony moon".split()


def _page(rng: random.Random, pool: int) -> object:
    page = str(rng.randint(1, pool))
    roll = rng.random()
    if roll < 0.15:
        return f" {page} "
    if roll < 0.3:
        return int(page)
    return page


def _entry(rng: random.Random, pool: int, gold: bool) -> dict:
    roll = rng.random()
    if roll < 0.08:
        return {"title": "no id"}
    if gold and roll < 0.1:
        return {"wikipedia_id": None, "title": "null id"}
    entry: dict = {"wikipedia_id": _page(rng, pool)}
    if gold:
        entry["title"] = rng.choice(["Paris", "The Cat", " ", "Blue River"])
    else:
        entry["text"] = " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))
    return entry


def _answer(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(1, 4)))


def held_back_set(n: int, seed: int = 22) -> tuple[list[dict], list[dict]]:
    """KILT gold lines and predictions (see the module docstring)."""
    rng = random.Random(seed)
    gold: list[dict] = []
    guess: list[dict] = []
    repro = [
        ([["39", "736"], ["39"]], ["25", "303", "305", "307", "39"]),
        ([["39"], ["12", "39"]], ["25", "303", "305", "307", "39"]),
        ([["39"], []], ["39"]),
        ([["303 "]], [" 303"]),
    ]
    for i, (sets, ranking) in enumerate(repro):
        gold.append(
            {
                "id": f"repro {i}",
                "input": "repro",
                "output": [{"answer": "x"}]
                + [{"provenance": [{"wikipedia_id": p} for p in s]} for s in sets],
            }
        )
        guess.append(
            {
                "id": f" repro {i}",
                "output": [
                    {
                        "answer": "x",
                        "provenance": [{"wikipedia_id": p} for p in ranking],
                    }
                ],
            }
        )
    for i in range(n):
        pool = rng.choice([5, 12, 40])
        query_id: object = rng.choice([f"q{i}", f"947testa CRICKET {i}", i + 10_000])
        outputs = []
        for _ in range(rng.randint(1, 4)):
            roll = rng.random()
            output: dict = {}
            if roll < 0.5:
                output["answer"] = _answer(rng)
            if roll > 0.3:
                output["provenance"] = (
                    []
                    if rng.random() < 0.1
                    else [_entry(rng, pool, True) for _ in range(rng.randint(1, 3))]
                )
            outputs.append(output)
        outputs.append({"answer": _answer(rng)})  # KILT needs a gold answer
        gold.append(
            {"id": query_id, "input": _answer(rng) + " paris", "output": outputs}
        )
        prediction: dict = {
            "answer": rng.choice(
                [_answer(rng), outputs[-1]["answer"].upper() + "!", ""]
            )
        }
        prediction["provenance"] = [
            _entry(rng, pool, False) for _ in range(rng.randint(0, 30))
        ]
        pred_id = f" {query_id} " if rng.random() < 0.2 else query_id
        guess.append({"id": pred_id, "output": [prediction]})
    rng.shuffle(guess)
    return gold, guess


def kilt_scores(kilt: Path, gold_file: Path, guess_file: Path) -> tuple[dict, dict]:
    """Per query and mean values of KILT's unmodified scorer."""
    sys.path.insert(0, str(kilt))
    from kilt import (  # type: ignore[import-not-found]  # the KILT checkout
        eval_downstream,
        eval_retrieval,
        kilt_utils,
    )

    gold = kilt_utils.load_data(gold_file)
    guess = kilt_utils.load_data(guess_file)
    gold, guess = eval_downstream.validate_input(gold, guess)
    down_guess = json.loads(json.dumps(guess))
    guess = eval_retrieval.filter_answers(guess)
    per_query = {}
    for guess_item, gold_item in zip(guess, gold, strict=True):
        values = eval_retrieval.get_ranking_metrics(
            guess_item, gold_item, KS, ["wikipedia_id"]
        )
        per_query[str(gold_item["id"]).strip()] = dict(values)
    for guess_item, gold_item in zip(down_guess, gold, strict=True):
        down = eval_downstream._calculate_metrics([gold_item], [guess_item])
        query = per_query[str(gold_item["id"]).strip()]
        query.update(down["downstream"])
        query.update(
            {
                "KILT-AC": down["kilt"]["KILT-accuracy"],
                "KILT-EM": down["kilt"]["KILT-em"],
                "KILT-F1": down["kilt"]["KILT-f1"],
                "KILT-RL": down["kilt"]["KILT-rougel"],
            }
        )
    with contextlib.redirect_stdout(io.StringIO()):
        means = dict(
            eval_retrieval.evaluate(gold_file, guess_file, KS, ["wikipedia_id"])
        )
        down_means = eval_downstream.evaluate(gold_file, guess_file)
    means.update(down_means["downstream"])
    return per_query, means


#: KILT's names of the downstream means -> ours.
_NAMES = {"accuracy": "accuracy", "em": "em", "f1": "f1", "rougel": "rougel"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kilt", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--queries", type=int, default=3000)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    gold, guess = held_back_set(args.queries)
    gold_file, guess_file = args.out / "gold.jsonl", args.out / "guess.jsonl"
    gold_file.write_text("".join(json.dumps(g) + "\n" for g in gold))
    guess_file.write_text("".join(json.dumps(g) + "\n" for g in guess))
    reference, means = kilt_scores(args.kilt, gold_file, guess_file)
    ours_file = args.out / "ours.json"
    subprocess.run(
        [
            Path(sys.executable).parent / "kilt-chunks",
            "eval",
            str(guess_file),
            "--gold",
            str(gold_file),
            "--ks",
            ",".join(map(str, KS)),
            "--json",
            str(ours_file),
            "--db",
            str(args.out / "none.duckdb"),
        ],
        check=True,
        capture_output=True,
    )
    ours = json.loads(ours_file.read_text())
    compared = 0
    mismatches = []
    for query, values in reference.items():
        for name, value in values.items():
            mine = ours["per_query"][query][name]
            compared += 1
            if abs(float(mine) - float(value)) > 1e-9:
                mismatches.append((query, name, value, mine))
    mean_mismatches = []
    our_means = {**ours["page"]["measures"], **ours["downstream"]["measures"]}
    for name, value in means.items():
        if abs(our_means[_NAMES.get(name, name)] - value) > 1e-9:
            mean_mismatches.append((name, value, our_means[name]))
    print(
        json.dumps(
            {
                "queries": len(reference),
                "values_compared": compared,
                "mismatches": len(mismatches),
                "first_mismatches": mismatches[:5],
                "means_compared": len(means),
                "mean_mismatches": mean_mismatches,
            }
        )
    )


if __name__ == "__main__":
    main()
