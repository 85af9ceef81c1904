"""Embedding throughput of ``kilt-chunks embed`` on this machine: chunks per
second per CPU core, tokens per chunk, and bytes of vectors per chunk.

Usage::

    python bench/rag_bench.py --db kilt_chunks.duckdb --model MODEL_DIR \\
        [--chunks 1000] [--threads 1] [--batch-size 32]

The first ``--chunks`` chunks of the build (``title + "\\n" + text``, as
``kilt-chunks embed`` embeds them) are encoded with
``SentenceTransformer.encode_document`` on the CPU with torch limited to
``--threads`` threads (one core by default, so the figure is per core), after
a warm-up batch; one JSON line is printed: chunks/s, chunks/s per thread,
the model's tokens per chunk (its own tokenizer, after truncation to its
``max_seq_length``, and without), dimension, bytes per chunk in float32
and float16, and
the machine's load average (the machine is shared: a busy machine gives a
lower rate). ``bench/RESULTS_RAG.md`` holds the figures and the projections.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import duckdb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    from kilt_chunks.rag.embed import embedding_dimension

    torch.set_num_threads(args.threads)
    with duckdb.connect(args.db, read_only=True) as con:
        texts = [
            text
            for (text,) in con.sql(
                "select title || chr(10) || text from kilt_chunks order by rowid"
                f" limit {int(args.chunks)}"
            ).fetchall()
        ]
    model = SentenceTransformer(args.model, device="cpu", local_files_only=True)
    model.encode_document(texts[: args.batch_size], batch_size=args.batch_size)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    model.encode_document(texts, batch_size=args.batch_size)
    seconds = time.perf_counter() - started
    tokens = model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)[
        "input_ids"
    ]
    whole = model.tokenizer(texts, truncation=False)["input_ids"]
    dim = embedding_dimension(model)
    print(
        json.dumps(
            {
                "model": os.path.basename(args.model.rstrip("/")),
                "chunks": len(texts),
                "threads": args.threads,
                "batch_size": args.batch_size,
                "seconds": round(seconds, 2),
                "chunks_per_second": round(len(texts) / seconds, 1),
                "chunks_per_second_per_thread": round(
                    len(texts) / seconds / args.threads, 1
                ),
                "tokens_per_chunk": round(sum(map(len, tokens)) / len(tokens), 1),
                "tokens_per_chunk_untruncated": round(
                    sum(map(len, whole)) / len(whole), 1
                ),
                "share_over_max_seq_length": round(
                    sum(len(t) > model.max_seq_length for t in whole) / len(whole), 4
                ),
                "max_seq_length": model.max_seq_length,
                "dimension": dim,
                "bytes_per_chunk_float32": 4 * dim,
                "bytes_per_chunk_float16": 2 * dim,
                "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            }
        )
    )


if __name__ == "__main__":
    main()
