"""Time stock LlamaIndex SentenceSplitter against FastSentenceSplitter on one core.

The corpus is the section texts of the bundled KILT sample (lead section and one
text per ``Section::::`` header; ``BULLET::::`` markers removed; blank sections
skipped), repeated until it holds about ``--mb`` megabytes of UTF-8 text. Both
splitters run over the same corpus in one process pinned to one CPU, timed with
``time.process_time`` (CPU seconds of this process). To keep other load on the
machine from favouring either side, the corpus is cut into one copy of the
sample per block and the two splitters alternate block by block. Reported, in
MB (10**6 bytes of UTF-8) per second: the total over the corpus (first pass),
and the fastest single copy over all ``--repeat`` passes (the one least
disturbed by other load), scaled to the corpus.

Usage::

    python bench/splitter_speed.py [--mb 20] [--repeat 1] [--no-check]
        [--chunk-size 256] [--chunk-overlap 0] [--tokenizer cl100k_base]

``--tokenizer wordpiece`` trains a BERT-style WordPiece tokenizer on the
sample (the ``tokenizers`` library, offline, a few seconds) and times both
splitters with it: the fast splitter's generic counting path.
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
    """Kept section texts of every page in a KILT JSON-lines file, in order
    (:func:`kilt_chunks.build.sections.page_sections`, SPEC rules 1-5)."""
    from kilt_chunks.build.sections import page_sections

    with path.open(encoding="utf-8") as fh:
        pages = [json.loads(line) for line in fh if line.strip()]
    return [
        section.text
        for page in pages
        for section in page_sections(page["wikipedia_title"], page["text"])
    ]


def train_wordpiece(texts: list[str]) -> str:
    """A BERT-style WordPiece tokenizer trained on ``texts``, saved in a
    temporary folder; returns its tokenizer.json path."""
    import tempfile

    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=8000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    path = os.path.join(tempfile.mkdtemp(prefix="kilt-bench-"), "tokenizer.json")
    tokenizer.save(path)
    return path


def time_splitter(fn: Callable[[str], list[str]], texts: list[str]) -> float:
    """CPU seconds to split every text of ``texts`` with ``fn``."""
    start = time.process_time()
    for text in texts:
        fn(text)
    return time.process_time() - start


def time_interleaved(
    splitters: dict[str, Callable[[str], list[str]]],
    block: list[str],
    copies: int,
) -> dict[str, list[float]]:
    """CPU seconds per splitter for each of ``copies`` runs over ``block``,
    alternating the splitters copy by copy."""
    times: dict[str, list[float]] = {name: [] for name in splitters}
    for _ in range(copies):
        for name, fn in splitters.items():
            times[name].append(time_splitter(fn, block))
    return times


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print MB/s for each splitter and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="corpus size in MB")
    parser.add_argument("--repeat", type=int, default=1, help="runs per splitter")
    parser.add_argument(
        "--no-check", action="store_true", help="skip the output equality check"
    )
    parser.add_argument("--chunk-size", type=int, default=None)
    parser.add_argument("--chunk-overlap", type=int, default=None)
    parser.add_argument(
        "--tokenizer",
        default=None,
        help="tiktoken encoding, tokenizer.json path, or 'wordpiece' (trained here)",
    )
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "src"))
    from kilt_chunks.splitter import get_splitter

    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        print(f"pinned to CPU {cpu}")

    sections = section_texts()
    unit = sum(len(t.encode("utf-8")) for t in sections)
    copies = max(1, round(args.mb * 1e6 / unit))
    nbytes = unit * copies
    print(
        f"corpus: {len(sections)} sections x {copies} = {len(sections) * copies} "
        f"texts, {nbytes / 1e6:.1f} MB"
    )

    options = {}
    if args.chunk_size is not None:
        options["chunk_size"] = args.chunk_size
    if args.chunk_overlap is not None:
        options["chunk_overlap"] = args.chunk_overlap
    if args.tokenizer == "wordpiece":
        options["tokenizer"] = train_wordpiece(sections)
    elif args.tokenizer is not None:
        options["tokenizer"] = args.tokenizer
    print(f"settings: {options or 'defaults'}")
    stock = get_splitter("llama_index", **options).split_text
    fast = get_splitter("fast", **options).split_text
    splitters = {"llama_index": stock, "fast": fast}
    # Warm up (tokenizer / Punkt / regex compilation) outside the timing.
    for text in sections[:50]:
        for fn in splitters.values():
            fn(text)
    if not args.no_check:
        bad = sum(fast(t) != stock(t) for t in sections)
        print(f"check: {len(sections) - bad}/{len(sections)} sections identical")
        if bad:
            return 1

    times: dict[str, list[float]] = {name: [] for name in splitters}
    for _ in range(args.repeat):
        run = time_interleaved(splitters, sections, copies)
        for name in splitters:
            times[name].extend(run[name])
    # Total over the corpus (first pass), and the fastest copy of the sample
    # (the least disturbed by other load) scaled to the corpus.
    total = {name: sum(t[:copies]) for name, t in times.items()}
    fastest = {name: min(t) * copies for name, t in times.items()}
    for name in splitters:
        print(
            f"{name:12s} total {total[name]:6.2f} s {nbytes / total[name] / 1e6:6.2f}"
            f" MB/s | best copy {nbytes / fastest[name] / 1e6:6.2f} MB/s"
        )
    print(
        f"ratio fast/stock: {total['llama_index'] / total['fast']:.2f}x (total), "
        f"{fastest['llama_index'] / fastest['fast']:.2f}x (best copy)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
