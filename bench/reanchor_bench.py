"""Measurements for ``kilt-chunks reanchor`` (bench/RESULTS_REANCHOR.md).

Usage::

    python bench/reanchor_bench.py --out /tmp/reanchor_bench [--kilt /tmp/kilt] \
        [--spans 400] [--copies 60]

1. **Fuzzy threshold.** Sentences of the bundled sample (at least
   ``FUZZY_MIN_CHARS`` characters, seeded random choice) are edited in a copy
   of their page: 1 to 4 word edits (a word replaced by another word of the
   page, deleted, or inserted), the sentence's paragraph deleted, or the
   sentence replaced by another sentence of the same page. For each, the best
   fuzzy score ``locate`` finds (threshold 0: every candidate window) is
   recorded: the threshold must lie above every deleted/replaced case and as
   far below the edited ones as possible.
2. **Speed.** Spans mapped per second, exact (the sample onto itself) and
   through the fuzzy path; page reading (MB of JSON per second) on a corpus
   of ``--copies`` copies of the sample with new ids, keeping 1% of the pages.
3. **KILT parity** (with ``--kilt``, a checkout of facebookresearch/KILT,
   imported unmodified by ``bench/kilt_parity.py``): the edited-snapshot
   fixture re-anchored, then a prediction scored by KILT's scorer and by
   ``kilt-chunks eval --gold`` on the re-anchored file, query for query.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
sys.path.insert(0, str(ROOT / "bench"))

import reanchor_snapshot as fixture  # noqa: E402

from kilt_chunks.reanchor import reanchor  # noqa: E402
from kilt_chunks.reanchor.evidence import PageText  # noqa: E402
from kilt_chunks.reanchor.locate import FUZZY_MIN_CHARS, locate  # noqa: E402
from kilt_chunks.reanchor.pages import load_snapshot  # noqa: E402

SAMPLE = ROOT / "data" / "kilt_enwiki2016_sample.jsonl"


def _sentences(paragraph: str) -> list[tuple[int, int]]:
    out, start = [], 0
    for i in range(len(paragraph) - 1):
        if paragraph[i] == "." and paragraph[i + 1] == " ":
            out.append((start, i + 1))
            start = i + 2
    return out


def _edit(sentence: str, edits: int, vocabulary: list[str], rng: random.Random) -> str:
    words = sentence.split(" ")
    for _ in range(edits):
        i = rng.randrange(len(words))
        op = rng.choice(("replace", "delete", "insert"))
        if op == "replace":
            words[i] = rng.choice(vocabulary)
        elif op == "delete" and len(words) > 3:
            del words[i]
        else:
            words.insert(i, rng.choice(vocabulary))
    return " ".join(words)


def threshold_study(n: int, seed: int = 32) -> dict:
    """Best fuzzy score per kind of edit (see the module docstring)."""
    rng = random.Random(seed)
    pages = [
        PageText(p["wikipedia_id"], p["wikipedia_title"], tuple(p["text"]))
        for p in fixture.read_sample().values()
    ]
    picks = []
    for page in pages:
        for p, par in enumerate(page.text):
            if par.startswith(("Section::::", "BULLET::::")):
                continue
            for s, e in _sentences(par):
                if e - s >= FUZZY_MIN_CHARS:
                    picks.append((page, p, s, e))
    rng.shuffle(picks)
    scores: dict[str, list[float]] = {}
    found: dict[str, list[bool]] = {}
    seconds: dict[str, float] = {}
    high: list[dict] = []
    for page, p, s, e in picks[:n]:
        par = page.text[p]
        sentence = par[s:e]
        vocabulary = [w for w in page.joined.split() if w.isalpha()]
        others = [
            page.text[q][a:b]
            for q in range(len(page.text))
            for a, b in _sentences(page.text[q])
            if (q, a) != (p, s)
        ]
        variants = {
            f"{k}_word_edits": _edit(sentence, k, vocabulary, rng) for k in (1, 2, 3, 4)
        }
        variants["paragraph_deleted"] = None
        if others:
            variants["sentence_replaced"] = rng.choice(others)
        for kind, new_sentence in variants.items():
            text = list(page.text)
            if new_sentence is None:
                del text[p]
            else:
                text[p] = par[:s] + new_sentence + par[e:]
            new = PageText(page.wikipedia_id, page.title, tuple(text))
            started = time.perf_counter()
            match = locate(
                sentence, new, expected=page.starts[p] / len(page.joined), threshold=0
            )
            seconds[kind] = seconds.get(kind, 0.0) + time.perf_counter() - started
            score = 0.0 if match is None else match.score
            scores.setdefault(kind, []).append(score)
            if (
                match is not None
                and kind in ("paragraph_deleted", "sentence_replaced")
                and score >= 80
            ):
                high.append(
                    {
                        "kind": kind,
                        "page": page.title,
                        "score": score,
                        "old": sentence,
                        "new": new.joined[match.start : match.end],
                    }
                )
            found.setdefault(kind, []).append(
                match is not None and match.kind != "fuzzy"
            )
    summary = {}
    for kind, values in scores.items():
        values.sort()
        summary[kind] = {
            "spans": len(values),
            "min": values[0],
            "p05": values[int(0.05 * (len(values) - 1))],
            "median": statistics.median(values),
            "p95": values[int(0.95 * (len(values) - 1))],
            "max": values[-1],
            "share_at_least": {
                str(t): round(sum(v >= t for v in values) / len(values), 4)
                for t in (75, 80, 85, 90, 95)
            },
            "ms_per_span": round(1000 * seconds[kind] / len(values), 2),
        }
    summary["lost_text_at_least_80"] = high
    return summary


def read_speed(out: Path, copies: int) -> dict:
    """MB/s of ``load_snapshot`` over ``copies`` copies of the sample (1% kept)."""
    corpus = out / "copies.jsonl"
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    keep = []
    with corpus.open("w", encoding="utf-8") as f:
        for c in range(copies):
            for line in lines:
                page = json.loads(line)
                page_id = str(int(page["wikipedia_id"]) + 10_000 * c)
                page["_id"] = page["wikipedia_id"] = page_id
                if len(keep) < copies * len(lines) // 100 and c % 10 == 0:
                    keep.append(page_id)
                f.write(json.dumps(page, ensure_ascii=False) + "\n")
    size = corpus.stat().st_size
    started = time.perf_counter()
    snapshot = load_snapshot(corpus, keep)
    seconds = time.perf_counter() - started
    return {
        "corpus_mb": round(size / 1e6, 1),
        "pages": copies * len(lines),
        "pages_kept": len(snapshot.pages),
        "seconds": round(seconds, 2),
        "mb_per_second": round(size / 1e6 / seconds, 1),
    }


def map_speed(out: Path) -> dict:
    """Seconds of the mapping step: the fixture's tasks, the sample onto itself
    (all exact) and onto the edited snapshot."""
    snapshot = fixture.write_snapshot(out / "snapshot")
    tasks = fixture.write_tasks(out / "tasks" / "reanchor-dev-kilt.jsonl")
    handmade = (
        ROOT
        / "tests"
        / "python"
        / "fixtures"
        / "kilt_tasks"
        / "handmade-dev-kilt.jsonl"
    )
    identity = reanchor([handmade, tasks], str(SAMPLE), str(SAMPLE), out / "identity")
    edited = reanchor([tasks], str(SAMPLE), str(snapshot), out / "edited")
    return {
        "identity": identity["seconds"],
        "edited": edited["seconds"],
        "edited_counts": edited["tasks"]["reanchor-dev-kilt"]["counts"],
    }


def parity(out: Path, kilt: Path) -> dict:
    """KILT's scorer against ``kilt-chunks eval --gold`` on the re-anchored fixture."""
    from kilt_parity import KS, kilt_scores

    mapped = out / "edited" / "reanchor-dev-kilt.jsonl"
    gold_lines = [x for x in mapped.read_text().splitlines() if x.endswith("}")]
    gold = out / "parity_gold.jsonl"
    gold.write_text("\n".join(gold_lines) + "\n")
    rng = random.Random(7)
    pool = ["39", "664", "696", "900330", "772", "673", "12"]
    guess = out / "parity_guess.jsonl"
    with guess.open("w") as f:
        for line in gold_lines:
            qid = json.loads(line)["id"]
            ranking = rng.sample(pool, k=rng.randint(1, len(pool)))
            f.write(
                json.dumps(
                    {
                        "id": qid,
                        "output": [
                            {
                                "answer": "a",
                                "provenance": [{"wikipedia_id": p} for p in ranking],
                            }
                        ],
                    }
                )
                + "\n"
            )
    reference, _ = kilt_scores(kilt, gold, guess)
    ours_file = out / "parity_ours.json"
    subprocess.run(
        [
            Path(sys.executable).parent / "kilt-chunks",
            "eval",
            str(guess),
            "--gold",
            str(gold),
            "--ks",
            ",".join(map(str, KS)),
            "--json",
            str(ours_file),
            "--db",
            str(out / "none.duckdb"),
        ],
        check=True,
        capture_output=True,
    )
    ours = json.loads(ours_file.read_text())["per_query"]
    compared, mismatches = 0, []
    for query, values in reference.items():
        for name, value in values.items():
            compared += 1
            if abs(float(ours[query][name]) - float(value)) > 1e-9:
                mismatches.append((query, name, value, ours[query][name]))
    return {
        "queries": len(reference),
        "values_compared": compared,
        "mismatches": len(mismatches),
        "first": mismatches[:5],
    }


DUMP = (
    ROOT
    / "tests"
    / "python"
    / "fixtures"
    / "dumps"
    / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)


def extraction_study(out: Path, n: int = 3000, seed: int = 5) -> dict:
    """The sample's spans carried onto ``from-dump``'s pages of the same
    revisions (the dump the sample was extracted from, by another extractor):
    ``n`` random spans, sentences of prose paragraphs, whole paragraphs and
    whole list items."""
    pages_dir = out / "from-dump"
    if not (pages_dir / "_SUCCESS").exists():
        subprocess.run(
            [
                Path(sys.executable).parent / "kilt-chunks",
                "from-dump",
                str(DUMP),
                "--out",
                str(pages_dir),
                "--workers",
                "1",
            ],
            check=True,
            capture_output=True,
        )
    pages = fixture.read_sample()
    spans = []
    for page_id, page in pages.items():
        for q, par in enumerate(page["text"]):
            if q == 0 or par.startswith("Section::::"):
                continue
            if par.startswith("BULLET::::"):
                spans.append((page_id, q, 0, len(par), "item"))
                continue
            spans.extend((page_id, q, s, e, "sentence") for s, e in _sentences(par))
            spans.append((page_id, q, 0, len(par), "paragraph"))
    random.Random(seed).shuffle(spans)
    tasks = out / "extraction" / "extraction-dev-kilt.jsonl"
    tasks.parent.mkdir(parents=True, exist_ok=True)
    with tasks.open("w", encoding="utf-8") as f:
        for i, (page_id, q, s, e, kind) in enumerate(spans[:n]):
            entry = {
                "wikipedia_id": page_id,
                "title": pages[page_id]["wikipedia_title"],
                "start_paragraph_id": q,
                "start_character": s,
                "end_paragraph_id": q,
                "end_character": e,
            }
            line = {
                "id": f"{kind}-{i}",
                "input": "q",
                "output": [{"answer": "a", "provenance": [entry]}],
            }
            f.write(json.dumps(line) + "\n")
    report = reanchor([tasks], str(SAMPLE), str(pages_dir), out / "extraction" / "out")
    task = report["tasks"]["extraction-dev-kilt"]
    return {
        "counts": task["counts"],
        "rates": task["rates"],
        "seconds": report["seconds"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--kilt", type=Path)
    parser.add_argument("--spans", type=int, default=400)
    parser.add_argument("--copies", type=int, default=60)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    result = {"threshold_study": threshold_study(args.spans)}
    result["mapping"] = map_speed(args.out)
    result["extraction_study"] = extraction_study(args.out)
    result["reading"] = read_speed(args.out, args.copies)
    if args.kilt:
        result["kilt_parity"] = parity(args.out, args.kilt)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
