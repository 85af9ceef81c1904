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
second child with ``--threads`` threads, and one JSON line is printed:
wall time, queries/s and CPU time per query (user + system of the search
process, all threads; the machine's load average beside it), which together
with the chunk ids of the hits (the repeated corpus's ids: a chunk's row is
repetition x the build's chunks + its rowid, resolved in one DuckDB query)
is what ``kilt-chunks bm25`` does. ``--dump FILE`` writes the hits (to
check that two index formats give the same results), ``--max-df-share S``
searches with that non-exact option. ``--report`` appends a Markdown row to
``bench/RESULTS_BM25.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS_BM25.md"
#: A page's title in the bench generator's pages (``run_bench.make_corpus``).
PAGE_TITLE = re.compile(r"Synthetic page (\d+)")


def repeated_chunks(
    db: str, chunks: int, pages: int, start: int = 0, batch_rows: int = 50_000
) -> Iterator[tuple[list[int], list[str]]]:
    """``chunks`` chunks of ``db``, its chunks repeated with renumbered pages
    (module docstring), from the ``start``-th on, as ``(rows, bodies)``: the
    row of repetition r's chunk at rowid i is r x (the build's chunks) + i
    (:func:`repeated_chunk_ids` turns it into the chunk id)."""
    from kilt_chunks.evaluation.bm25 import chunk_rows

    with duckdb.connect(db, read_only=True) as con:
        per_rep = con.sql("select count(*) from kilt_chunks").fetchall()[0][0]
    left = chunks - start
    rep, row = divmod(start, per_rep)
    while left > 0:
        offset = rep * pages
        for rows, bodies in chunk_rows(db, start=row, batch_rows=batch_rows):
            rows, bodies = rows[:left], bodies[:left]
            rows = [rep * per_rep + r for r in rows]
            if offset:
                bodies = [_renumbered(body, offset) for body in bodies]
            left -= len(rows)
            yield rows, bodies
            if left <= 0:
                return
        rep += 1
        row = 0


def _renumbered(body: str, offset: int) -> str:
    """``body`` (``title + "\\n" + text``) of a repeated page: its page
    number in ``Synthetic page n`` (the title path and the title line)
    becomes n + ``offset``."""
    return PAGE_TITLE.sub(lambda m: f"Synthetic page {int(m.group(1)) + offset}", body)


def repeated_chunk_ids(db: str, pages: int, rows: Sequence[int]) -> list[str]:
    """The chunk id of each row of :func:`repeated_chunks`: the build's
    chunk id at rowid ``row mod n`` with its page renumbered by
    ``(row div n) x pages`` (n: the build's chunks), read in one DuckDB query
    (:func:`kilt_chunks.evaluation.bm25.chunk_ids_of_rows`)."""
    from kilt_chunks.evaluation.bm25 import chunk_ids_of_rows

    with duckdb.connect(db, read_only=True) as con:
        per_rep = con.sql("select count(*) from kilt_chunks").fetchall()[0][0]
    base = chunk_ids_of_rows(db, [row % per_rep for row in rows])
    ids = []
    for row, chunk_id in zip(rows, base, strict=True):
        rep = row // per_rep
        if rep:
            page, rest = str(chunk_id)[4:].split("_", 1)
            chunk_id = f"doc-{int(page) + rep * pages}_{rest}"
        ids.append(str(chunk_id))
    return ids


def _index_child(args: argparse.Namespace) -> None:
    from kilt_chunks.evaluation import lucene
    from kilt_chunks.evaluation.bm25 import (
        build_index,
        corpus_fingerprint,
        index_chunks,
    )

    children = _ChildMemory()
    if args.engine == "lucene" and not args.chunks:
        meta = lucene.build_index(args.db, args.index, threads=args.threads)
    elif not args.chunks:
        meta = build_index(args.db, args.index, threads=args.threads)
    else:
        with duckdb.connect(args.db, read_only=True) as con:
            fingerprint = corpus_fingerprint(con)
            num_pages = con.sql(
                "select count(distinct wikipedia_id) from kilt_chunks"
            ).fetchall()[0][0]
        fingerprint = {**fingerprint, "num_chunks": args.chunks, "repeated": True}
        if args.engine == "lucene":
            meta = lucene.index_chunks(
                args.index,
                fingerprint,
                lambda: repeated_chunks(args.db, args.chunks, num_pages),
                threads=args.threads,
            )
        else:
            meta = index_chunks(
                args.index,
                fingerprint,
                lambda done: repeated_chunks(args.db, args.chunks, num_pages, done),
                threads=args.threads,
            )
    print(json.dumps({**meta, "peak_rss": _own_peak(), **children.stop()}))


class _ChildMemory:
    """Samples the memory of this process's children (Anserini's Java) every
    0.2 s: the peak RSS, and the peak of its anonymous part (RSS less the
    file-backed and shared pages: Lucene's memory-mapped index files, which
    the kernel can drop, are not in it)."""

    def __init__(self) -> None:
        import threading

        self.rss = 0
        self.anon = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        me = psutil.Process()
        while not self._stop.is_set():
            for child in me.children(recursive=True):
                try:
                    info = child.memory_info()
                except psutil.Error:
                    continue
                self.rss = max(self.rss, info.rss)
                self.anon = max(self.anon, info.rss - info.shared)
            time.sleep(0.2)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return {"child_peak_rss": self.rss, "child_peak_anon_rss": self.anon}


def _own_peak() -> int:
    """Peak RSS of this process or of its largest child (bytes): every
    thread of tantivy included; Anserini's Java process for --engine lucene."""
    return 1024 * max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    )


def _cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children so
    far, all threads (s): Anserini's Java processes for --engine lucene."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _search_child(args: argparse.Namespace) -> None:
    from kilt_chunks.evaluation.bm25 import chunk_ids_of_rows, search_rows

    with duckdb.connect(args.db, read_only=True) as con:
        num_pages = con.sql(
            "select count(distinct wikipedia_id) from kilt_chunks"
        ).fetchall()[0][0]

    def run(texts: list[str]) -> list[list[tuple[str, float]]]:
        """:func:`kilt_chunks.evaluation.bm25.search`, with the chunk ids of the
        repeated corpus when ``--chunks`` repeats the build."""
        if args.engine == "lucene":
            from kilt_chunks.evaluation import lucene

            hits = lucene.search_rows(args.index, texts, k=100, threads=args.threads)
        else:
            hits = search_rows(
                args.index,
                texts,
                k=100,
                threads=args.threads,
                max_df_share=args.max_df_share,
            )
        rows = [row for found in hits for row, _ in found]
        ids = iter(
            repeated_chunk_ids(args.db, num_pages, rows)
            if args.chunks
            else chunk_ids_of_rows(args.db, rows)
        )
        return [[(str(next(ids)), score) for _, score in found] for found in hits]

    queries = json.loads(Path(args.queries).read_text(encoding="utf-8"))
    run(queries[:50])  # warm-up
    cpu = _cpu_seconds()
    start = time.perf_counter()
    hits = run(queries)
    seconds = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu
    if args.dump:
        Path(args.dump).write_text(json.dumps(hits), encoding="utf-8")
    alone = _lucene_alone(args, queries) if args.engine == "lucene" else {}
    print(
        json.dumps(
            {
                "queries": len(queries),
                "search_seconds": seconds,
                "search_cpu_seconds": cpu,
                "mean_hits": sum(len(h) for h in hits) / len(hits),
                "peak_rss": _own_peak(),
                "load_average": os.getloadavg(),
                **alone,
            }
        )
    )


def _lucene_alone(args: argparse.Namespace, queries: list[str]) -> dict:
    """Anserini's ``SearchCollection`` by itself on the same index, queries,
    k and threads as ``kilt-chunks bm25 --engine lucene`` (what a Pyserini
    or Anserini user runs): its wall and CPU time (Java's start included)."""
    import tempfile

    from kilt_chunks.evaluation import lucene

    with tempfile.TemporaryDirectory() as tmp:
        topics = lucene.write_topics(Path(tmp) / "topics.tsv", queries)
        command = lucene.search_command(
            args.index, topics, Path(tmp) / "run.trec", 100, args.threads
        )
        cpu = _cpu_seconds()
        start = time.perf_counter()
        lucene.run_anserini(
            lucene.java_executable(),
            lucene.anserini_jar(),
            lucene.SEARCH_HEAP,
            "io.anserini.search.SearchCollection",
            command,
            Path(tmp) / "search.log",
        )
        return {
            "alone_search_seconds": time.perf_counter() - start,
            "alone_search_cpu_seconds": _cpu_seconds() - cpu,
        }


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
    parser.add_argument(
        "--engine",
        choices=("tantivy", "lucene"),
        default="tantivy",
        help="the BM25 engine of kilt-chunks bm25 to measure (lucene: Anserini"
        " in Java, make lucene-install)",
    )
    parser.add_argument("--skip-index", action="store_true")
    parser.add_argument(
        "--partial",
        action="store_true",
        help="with --skip-index: search the chunks committed so far of an index"
        " whose build was stopped (the row says how many)",
    )
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--note", default="", help="what ran beside it")
    parser.add_argument(
        "--dump", help="write the hits, [[chunk_id, score], ...] per query, here"
    )
    parser.add_argument(
        "--max-df-share",
        type=float,
        default=None,
        help="search with this max_df_share (not exact BM25; default: exact)",
    )
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
    common += ["--engine", args.engine]
    if args.skip_index and args.partial:
        from kilt_chunks.evaluation.bm25 import _open

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
    search_args = ["--queries", str(query_file), "--chunks", str(args.chunks)]
    if args.dump:
        search_args += ["--dump", args.dump]
    if args.max_df_share is not None:
        search_args += ["--max-df-share", str(args.max_df_share)]
    found, _ = _child(["search", *common, *search_args])
    search_peak = found["peak_rss"]
    row = {
        "chunks": meta["num_indexed"],
        "index_seconds": round(index_wall, 1),
        "index_peak_rss_gib": round(index_peak / 2**30, 2),
        "index_child_peak_rss_gib": round(meta.get("child_peak_rss", 0) / 2**30, 2),
        "index_child_peak_anon_gib": round(
            meta.get("child_peak_anon_rss", 0) / 2**30, 2
        ),
        "index_gb": round(meta["index_bytes"] / 1e9, 2),
        "queries": found["queries"],
        "threads": args.threads,
        "queries_per_second": round(found["queries"] / found["search_seconds"], 1),
        "cpu_ms_per_query": round(
            1000 * found["search_cpu_seconds"] / found["queries"], 2
        ),
        "load_average": found["load_average"],
        "search_peak_rss_gib": round(search_peak / 2**30, 2),
        "mean_hits": found["mean_hits"],
    }
    if "alone_search_seconds" in found:
        row["anserini_alone_queries_per_second"] = round(
            found["queries"] / found["alone_search_seconds"], 1
        )
        row["anserini_alone_cpu_ms_per_query"] = round(
            1000 * found["alone_search_cpu_seconds"] / found["queries"], 2
        )
    print(json.dumps(row))
    if args.report:
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write(
                f"| {row['chunks']:,} | {row['index_seconds'] / 60:.1f} |"
                f" {row['index_peak_rss_gib']:.2f} | {row['index_gb']:.2f} |"
                f" {row['queries']:,} | {row['threads']} |"
                f" {row['queries_per_second']:,.0f} |"
                f" {row['cpu_ms_per_query']:.1f} |"
                f" {row['search_peak_rss_gib']:.2f} | {args.note} |\n"
            )


if __name__ == "__main__":
    main()
