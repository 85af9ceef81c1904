"""Time stock LlamaIndex SentenceSplitter against FastSentenceSplitter on one core.

The corpus is the section texts of the bundled KILT sample (lead section and one
text per ``Section::::`` header; ``BULLET::::`` markers removed), repeated until
it holds about ``--mb`` megabytes of UTF-8 text. Both splitters run over the same
corpus in one process pinned to one CPU; each run is timed with
``time.process_time`` (CPU seconds of this process), the best of ``--repeat``
runs is kept, and throughput is reported in MB (10**6 bytes of UTF-8) per second.

Usage::

    python bench/splitter_speed.py [--mb 20] [--repeat 1] [--no-check]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "kilt_enwiki2016_sample.jsonl"


def section_texts(path: Path = SAMPLE) -> list[str]:
    """Section texts of every page in a KILT JSON-lines file, in order."""
    out: list[str] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            page = json.loads(line)
            cur: list[str] = []
            for para in page["text"][1:]:
                if para.startswith("Section::::"):
                    out.append("".join(cur))
                    cur = []
                    continue
                if para.startswith("BULLET::::"):
                    para = para[len("BULLET::::") :]
                cur.append(para)
            out.append("".join(cur))
    return out


def time_splitter(fn: Callable[[str], list[str]], corpus: list[str]) -> float:
    """CPU seconds to split every text of ``corpus`` with ``fn``."""
    start = time.process_time()
    for text in corpus:
        fn(text)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print MB/s for each splitter and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="corpus size in MB")
    parser.add_argument("--repeat", type=int, default=1, help="runs per splitter")
    parser.add_argument(
        "--no-check", action="store_true", help="skip the output equality check"
    )
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "src"))
    from kilt_chunks.fast_splitter import FastSentenceSplitter, split_text_stock

    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        print(f"pinned to CPU {cpu}")

    sections = [t for t in section_texts() if t.strip()]
    unit = sum(len(t.encode("utf-8")) for t in sections)
    copies = max(1, round(args.mb * 1e6 / unit))
    corpus = sections * copies
    nbytes = unit * copies
    print(
        f"corpus: {len(sections)} sections x {copies} = {len(corpus)} texts, "
        f"{nbytes / 1e6:.1f} MB"
    )

    fast = FastSentenceSplitter(256)
    stock = split_text_stock
    # Warm up (tokenizer / Punkt / regex compilation) outside the timing.
    for text in sections[:50]:
        stock(text)
        fast.split_text(text)
    if not args.no_check:
        bad = sum(fast.split_text(t) != stock(t) for t in sections)
        print(f"check: {len(sections) - bad}/{len(sections)} sections identical")
        if bad:
            return 1

    best = {"llama_index": float("inf"), "fast": float("inf")}
    for _ in range(args.repeat):
        best["llama_index"] = min(best["llama_index"], time_splitter(stock, corpus))
        best["fast"] = min(best["fast"], time_splitter(fast.split_text, corpus))
    for name, secs in best.items():
        print(f"{name:12s} {secs:8.2f} s  {nbytes / secs / 1e6:7.2f} MB/s")
    print(f"ratio fast/stock: {best['llama_index'] / best['fast']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
