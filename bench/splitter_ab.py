"""Same-process A/B of the fast splitter's default path (chunk_overlap 0,
cl100k_base): the FastSentenceSplitter of another checkout (``--before``, e.g.
the main branch's ``src/kilt_chunks/splitter/sentence.py``) against this
one's, over the sample's sections, interleaved copy by copy on one pinned CPU
(``time.process_time``). Both call ``split_text_with_token_counts``, what the
chunking step calls. Checks first that both give the same chunks and counts.

Usage::

    python bench/splitter_ab.py --copies 10 \
        --before /work/main/src/kilt_chunks/splitter/sentence.py
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from splitter_speed import section_texts  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Print the MB/s of both versions (total and best copy) and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the other sentence.py")
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args(argv)
    spec = importlib.util.spec_from_file_location("before_sentence", args.before)
    assert spec is not None and spec.loader is not None
    before_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(before_module)
    from kilt_chunks.splitter.sentence import FastSentenceSplitter

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    texts = [t for t in section_texts() if t]
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    splitters = {
        "before": before_module.FastSentenceSplitter(256).split_text_with_token_counts,
        "after": FastSentenceSplitter(256).split_text_with_token_counts,
    }
    bad = sum(splitters["before"](t) != splitters["after"](t) for t in texts)
    print(f"check: {len(texts) - bad}/{len(texts)} sections identical")
    times: dict[str, list[float]] = {name: [] for name in splitters}
    for _ in range(args.copies):
        for name, split in splitters.items():
            start = time.process_time()
            for text in texts:
                split(text)
            times[name].append(time.process_time() - start)
    for name, spent in times.items():
        print(
            f"{name:6s} total {nbytes * len(spent) / sum(spent) / 1e6:6.2f} MB/s"
            f" | best copy {nbytes / min(spent) / 1e6:6.2f} MB/s"
        )
    print(
        f"after/before: {sum(times['before']) / sum(times['after']):.3f}x (total), "
        f"{min(times['before']) / min(times['after']):.3f}x (best copy)"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
