"""Benchmark of the BM25 baseline: index time and peak memory on a built corpus.

Usage: ``python bench/bm25_bench.py --db bench/work/bm25/bench.duckdb
--index bench/work/bm25/index [--shard-chunks N]``. Each run indexes in a
fresh child process (so its peak RSS is the index's alone, read with
``getrusage(RUSAGE_CHILDREN)``), then times 100 queries (sentences of the
corpus) and prints one JSON line; ``--report`` appends a Markdown row to
``bench/RESULTS_BM25.md``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]


def _child(db: str, index: str, shard_chunks: int) -> None:
    from kilt_chunks.bm25 import build_index

    meta = build_index(db, index, shard_chunks=shard_chunks)
    print(json.dumps(meta))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--index", required=True)
    parser.add_argument("--shard-chunks", type=int, default=0)
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.db, args.index, args.shard_chunks)
        return
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            "--db",
            args.db,
            "--index",
            args.index,
            "--shard-chunks",
            str(args.shard_chunks),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    meta = json.loads(proc.stdout.strip().splitlines()[-1])
    with duckdb.connect(args.db, read_only=True) as con:
        text_bytes = con.sql(
            "select sum(strlen(title) + 1 + strlen(text)) from kilt_chunks"
        ).fetchall()[0][0]
        queries = [
            t.split(". ")[0][:200]
            for (t,) in con.sql(
                "select text from kilt_chunks using sample 100 rows (reservoir, 7)"
            ).fetchall()
        ]
    from kilt_chunks.bm25 import search

    t = time.perf_counter()
    search(args.index, queries, k=100)
    search_seconds = time.perf_counter() - t
    index_bytes = sum(
        f.stat().st_size for f in Path(args.index).rglob("*") if f.is_file()
    )
    row = {
        "num_chunks": meta["num_chunks"],
        "indexed_text_mb": round(text_bytes / 1e6, 1),
        "num_tokens": meta["num_tokens"],
        "vocabulary": meta["vocabulary"],
        "shards": meta["shards"],
        "index_seconds": meta["index_seconds"],
        "wall_seconds": round(wall, 1),
        "peak_rss_gib": round(peak / 2**30, 3),
        "index_files_mb": round(index_bytes / 1e6, 1),
        "search_100_queries_seconds": round(search_seconds, 2),
    }
    print(json.dumps(row))
    if args.report:
        out = ROOT / "bench" / "RESULTS_BM25.md"
        if not out.exists():
            out.write_text(
                "# BM25 baseline (bm25s): index time and memory\n\n"
                "| chunks | indexed text MB | tokens | vocabulary | shards |"
                " index s | peak RSS GiB | index files MB | 100 queries s |\n"
                "|---|---|---|---|---|---|---|---|---|\n"
            )
        with out.open("a") as f:
            f.write(
                f"| {row['num_chunks']:,} | {row['indexed_text_mb']:,} |"
                f" {row['num_tokens']:,} | {row['vocabulary']:,} | {row['shards']} |"
                f" {row['index_seconds']:,} | {row['peak_rss_gib']} |"
                f" {row['index_files_mb']:,} | {row['search_100_queries_seconds']} |\n"
            )


if __name__ == "__main__":
    main()
