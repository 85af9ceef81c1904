"""Cost of ``kilt-chunks utility`` (forward passes per second per core) and
of its cache, on the tiny random chat model of ``make demo-rag``.

Usage (after ``make demo-rag``)::

    python bench/rag_llm_bench.py --items rag_demo/utility.json \
        --model rag_demo/tiny-llm

The (question, chunk) pairs of ``--items`` (repeated to ``--pairs``) are
scored with ``utility.score_token_ids`` at each ``--batch-sizes``, in this
process on ``torch.get_num_threads()`` threads; per batch size one Markdown
row is printed: wall seconds, CPU seconds (user + system of the process:
``time.process_time``), pairs per CPU second (= forward passes per second
per core, the number that does not depend on what else the shared machine
runs), mean prompt tokens. Then the cache: bytes per pair of a cache written
for those pairs (``UtilityCache``), and the cl100k_base tokens of the
build's chunks (``--db``), from which docs/rag.md projects a real model.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    """Measure and print the Markdown rows."""
    import torch

    from kilt_chunks.rag import utility

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--pairs", type=int, default=256)
    parser.add_argument("--batch-sizes", default="1,8,32")
    parser.add_argument("--db", default="kilt_chunks.duckdb")
    args = parser.parse_args()
    items = json.loads(Path(args.items).read_text(encoding="utf-8"))
    pairs = [(it["question"], p["text"]) for it in items for p in it["passages"]]
    pairs = (pairs * (args.pairs // len(pairs) + 1))[: args.pairs]
    tokenizer, model = utility.load_model(args.model, "cpu", "float32")
    prompts = [utility.abstention_prompt(tokenizer, q, t) for q, t in pairs]
    sequences = tokenizer(prompts, truncation=True)["input_ids"]
    token_id = utility.no_response_token_id(tokenizer)
    threads = torch.get_num_threads()
    print(
        f"model {args.model}:"
        f" {sum(p.numel() for p in model.parameters()):,} parameters,"
        f" {threads} torch threads, load average {os.getloadavg()[0]:.1f}"
    )
    print(
        "| batch size | pairs | wall s | CPU s | pairs / CPU s | mean prompt tokens |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    mean_tokens = statistics.mean(len(s) for s in sequences)
    for size in (int(b) for b in args.batch_sizes.split(",")):
        wall, cpu = time.perf_counter(), time.process_time()
        utility.score_token_ids(
            model, sequences, token_id, tokenizer.pad_token_id, size
        )
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(
            f"| {size} | {len(sequences)} | {wall:.1f} | {cpu:.1f} |"
            f" {len(sequences) / cpu:.1f} | {mean_tokens:.0f} |"
        )
    with tempfile.TemporaryDirectory() as folder:
        cache = utility.UtilityCache(Path(folder))
        for i, (q, t) in enumerate(pairs):
            cache.add(
                {
                    "key": utility.pair_key(args.model, "float32", q, f"{t}{i}"),
                    "model": args.model,
                    "dtype": "float32",
                    "prompt_version": "x",
                    "question": q,
                    "passage_sha256": utility.pair_key("", "", "", t),
                    "no_res_prob": 0.5,
                }
            )
        cache.flush()
        print(
            f"cache: {cache.size_bytes() / len(pairs):.0f} bytes per pair"
            f" ({len(pairs)} pairs in one part file)"
        )
    if Path(args.db).exists():
        import duckdb

        from kilt_chunks.splitter.tokens import tiktoken_counter

        count = tiktoken_counter()  # LlamaIndex's bundled cl100k_base
        with duckdb.connect(args.db, read_only=True) as con:
            texts = [t for (t,) in con.sql("select text from kilt_chunks").fetchall()]
        tokens = [count(t) for t in texts]
        print(
            f"chunks of {args.db}: {len(tokens):,}, cl100k_base tokens mean"
            f" {statistics.mean(tokens):.0f}, median {statistics.median(tokens):.0f}"
        )


if __name__ == "__main__":
    main()
