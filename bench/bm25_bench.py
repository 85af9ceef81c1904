"""Benchmark of the BM25 baseline (tantivy): index time, peak memory, index
size and queries per second, up to the full dump's 23.7 M chunks.

Usage::

    python bench/bm25_bench.py --db bench/work/bm25full/bench.duckdb \\
        --index bench/work/bm25full/index [--chunks 23749800] [--report]

``--db`` is a finished build of a KILT-shaped bench corpus (``make bench``'s
generator, ``run_bench.make_corpus``). Without ``--chunks`` its chunks are
indexed as they are. With ``--chunks N`` the build's chunks are indexed again
and again, in storage order, until N chunks are indexed: repetition r (0, 1,
...) renumbers every page (``wikipedia_id`` + r x the build's page count, in
the chunk id, the title path and the page's title line), so every chunk id
and every page title is distinct, as in a build of an N-chunk corpus. The
generator draws every page of any corpus size from the same pool of real
paragraphs of the bundled sample with the same length distribution, so the
repeated chunks have the text size, the token and vocabulary distribution
(apart from page numbers, renumbered) of a full-size build's chunks; only the
random draw differs. This replaces the full-size ``dbt build`` (30 minutes of
both cores and ~50 GB of disk) by the 1000 MB build.

The index is built in a fresh child process (its own peak RSS, from
``getrusage(RUSAGE_SELF)``: reading DuckDB, analysing, indexing, merging),
then 2,000 queries (the first 10 words of sentences of the corpus: the
length of a Natural Questions question) are searched for the top 100 in a
second child with ``--threads`` threads, and one JSON line is printed;
``--report`` appends a Markdown row to ``bench/RESULTS_BM25.md``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS_BM25.md"
#: First ``wikipedia_id`` of the bench generator (``run_bench.make_corpus``).
FIRST_PAGE = 10_000_000


def repeated_chunks(
    db: str, chunks: int, pages: int, start: int = 0, batch_rows: int = 50_000
) -> Iterator[tuple[list[str], list[str]]]:
    """``chunks`` chunks of ``db``, its chunks repeated with renumbered pages
    (module docstring), from the ``start``-th on."""
    from kilt_chunks.bm25 import chunk_rows

    with duckdb.connect(db, read_only=True) as con:
        per_rep = con.sql("select count(*) from kilt_chunks").fetchall()[0][0]
    left = chunks - start
    rep, row = divmod(start, per_rep)
    while left > 0:
        offset = rep * pages
        for ids, bodies in chunk_rows(db, start=row, batch_rows=batch_rows):
            ids, bodies = ids[:left], bodies[:left]
            if offset:
                new_ids, new_bodies = [], []
                for chunk_id, body in zip(ids, bodies, strict=True):
                    page, rest = chunk_id[4:].split("_", 1)
                    n = int(page) - FIRST_PAGE
                    new_ids.append(f"doc-{int(page) + offset}_{rest}")
                    new_bodies.append(
                        body.replace(
                            f"Synthetic page {n}", f"Synthetic page {n + offset}"
                        )
                    )
                ids, bodies = new_ids, new_bodies
            left -= len(ids)
            yield ids, bodies
            if left <= 0:
                return
        rep += 1
        row = 0


def _index_child(args: argparse.Namespace) -> None:
    from kilt_chunks.bm25 import build_index, corpus_fingerprint, index_chunks

    if not args.chunks:
        meta = build_index(args.db, args.index, threads=args.threads)
    else:
        with duckdb.connect(args.db, read_only=True) as con:
            fingerprint = corpus_fingerprint(con)
            num_pages = con.sql(
                "select count(distinct wikipedia_id) from kilt_chunks"
            ).fetchall()[0][0]
        fingerprint = {**fingerprint, "num_chunks": args.chunks, "repeated": True}
        meta = index_chunks(
            args.index,
            fingerprint,
            lambda done: repeated_chunks(args.db, args.chunks, num_pages, done),
            threads=args.threads,
        )
    print(json.dumps({**meta, "peak_rss": _own_peak()}))


def _own_peak() -> int:
    """Peak RSS of this process (bytes): every thread of tantivy included."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _search_child(args: argparse.Namespace) -> None:
    from kilt_chunks.bm25 import search, search_committed

    run = search_committed if args.partial else search  # partial: being built

    queries = json.loads(Path(args.queries).read_text(encoding="utf-8"))
    run(args.index, queries[:50], k=100, threads=args.threads)  # warm-up
    start = time.perf_counter()
    hits = run(args.index, queries, k=100, threads=args.threads)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "queries": len(queries),
                "search_seconds": seconds,
                "mean_hits": sum(len(h) for h in hits) / len(hits),
                "peak_rss": _own_peak(),
            }
        )
    )


def _child(argv: list[str]) -> tuple[dict, float]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, *argv], capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if proc.returncode:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"child {argv[0]} failed ({proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--index", required=True)
    parser.add_argument("--chunks", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--num-queries", type=int, default=2000)
    parser.add_argument("--skip-index", action="store_true")
    parser.add_argument(
        "--partial",
        action="store_true",
        help="with --skip-index: search the chunks committed so far of an index"
        " whose build was stopped (the row says how many)",
    )
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--note", default="", help="what ran beside it")
    parser.add_argument("--queries", help=argparse.SUPPRESS)
    parser.add_argument("mode", nargs="?", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode == "index":
        _index_child(args)
        return
    if args.mode == "search":
        _search_child(args)
        return
    common = ["--db", args.db, "--index", args.index, "--threads", str(args.threads)]
    if args.skip_index and args.partial:
        from kilt_chunks.bm25 import _open

        index = _open(Path(args.index))
        index.reload()
        size = sum(f.stat().st_size for f in Path(args.index).iterdir() if f.is_file())
        meta = {"num_indexed": index.searcher().num_docs, "index_bytes": size}
        index_wall, index_peak = 0.0, 0
        common.append("--partial")
    elif args.skip_index:
        meta = json.loads((Path(args.index) / "kilt_bm25.json").read_text())
        index_wall, index_peak = meta["index_seconds"], 0
    else:
        meta, index_wall = _child(["index", *common, "--chunks", str(args.chunks)])
        index_peak = meta["peak_rss"]
    with duckdb.connect(args.db, read_only=True) as con:
        sentences = con.sql(
            "select text from kilt_chunks using sample"
            f" {args.num_queries} rows (reservoir, 7)"
        ).fetchall()
    queries = [" ".join(t.split(". ")[0].split()[:10]) for (t,) in sentences]
    query_file = Path(args.index).with_suffix(".queries.json")
    query_file.write_text(json.dumps(queries), encoding="utf-8")
    found, _ = _child(["search", *common, "--queries", str(query_file)])
    search_peak = found["peak_rss"]
    row = {
        "chunks": meta["num_indexed"],
        "index_seconds": round(index_wall, 1),
        "index_peak_rss_gib": round(index_peak / 2**30, 2),
        "index_gb": round(meta["index_bytes"] / 1e9, 2),
        "queries": found["queries"],
        "threads": args.threads,
        "queries_per_second": round(found["queries"] / found["search_seconds"], 1),
        "search_peak_rss_gib": round(search_peak / 2**30, 2),
        "mean_hits": found["mean_hits"],
    }
    print(json.dumps(row))
    if args.report:
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write(
                f"| {row['chunks']:,} | {row['index_seconds'] / 60:.1f} |"
                f" {row['index_peak_rss_gib']:.2f} | {row['index_gb']:.2f} |"
                f" {row['queries']:,} | {row['threads']} |"
                f" {row['queries_per_second']:,.0f} |"
                f" {row['search_peak_rss_gib']:.2f} | {args.note} |\n"
            )


if __name__ == "__main__":
    main()
