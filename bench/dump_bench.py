"""Benchmark of ``kilt-chunks from-dump`` (bench/RESULTS_DUMP.md).

Builds a multistream dump of about ``--mb`` MB of wikitext in Wikimedia's
layout from the bundled English test dump (its 106 articles and 99 redirects
repeated with new page ids and titles ``<title> (<copy>)``), then runs the
builder on it with each engine setting given (default: the pool with 2
workers, Ray with 2, the pool with 1), and reports per run: wall seconds,
MB/s of wikitext (wall), MB/s of wikitext per core (wikitext over the CPU
seconds the workers spent in the map step), peak RSS of the run's process
tree (sampled every 0.2 s) and of its largest process, and the split count.
Results are appended to ``bench/work/dump_bench.jsonl`` run by run, so an
interrupted benchmark keeps what it measured.

Every run also reports its whole-run CPU seconds (``run_cpu_s``: the command
and every process it waited for, start-up, map, resolve and manifest
included; from ``getrusage(RUSAGE_CHILDREN)``) and ``mb_per_cpu_s`` (article
wikitext over them), the figure a peer can be measured by too. The peer is
WikiExtractor 2.75 (the extractor behind KILT; optional, not a dependency):
``--wikiextractor FILE`` names its ``WikiExtractor.py`` (for instance
``git show 3162bb6:WikiExtractor.py`` of attardi/wikiextractor, with its two
mid-pattern ``(?i)`` flags given as ``re.I`` on Python >= 3.11), and runs
``wikiextractor:N`` run it on the same dump with KILT's flags (``--json -s
--lists -l``) and ``--processes N``, in this Python. Give the runs in
alternation (``pool:1 wikiextractor:1 pool:1 wikiextractor:1``): this host's
speed moves within the hour (bench/RESULTS_DUMP.md, "Against WikiExtractor
2.75 per CPU-second"), so only neighbouring runs compare.
A line ``ratio`` then gives, per worker count, our MB per CPU-second over
the peer's, each the mean of its runs.

Usage:
    python bench/dump_bench.py --mb 1000 [--runs pool:2 ray:2 pool:1]
    python bench/dump_bench.py --mb 60 --wikiextractor /tmp/we/WikiExtractor.py \\
        --runs pool:1 wikiextractor:1 pool:1 wikiextractor:1 pool:2 wikiextractor:2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from xml.sax.saxutils import escape

import psutil

from kilt_chunks.dump.multistream import MultistreamWriter
from kilt_chunks.dump.xmlpages import pages_in_file, read_header

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = (
    ROOT
    / "tests/python/fixtures/dumps"
    / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
WORK = ROOT / "bench" / "work" / "dump"
NAME = "benchwiki-20160501-pages-articles-multistream"


def page_xml(
    title: str,
    ns: int,
    page_id: int,
    revid: int,
    parentid: int,
    timestamp: str,
    redirect: str | None,
    text: str,
) -> str:
    """One ``<page>`` element as the dumps write it."""
    red = (
        f'    <redirect title="{escape(redirect, {chr(34): "&quot;"})}" />\n'
        if redirect
        else ""
    )
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n"
        f"    <id>{page_id}</id>\n{red}    <revision>\n      <id>{revid}</id>\n"
        f"      <parentid>{parentid}</parentid>\n"
        f"      <timestamp>{timestamp}</timestamp>\n"
        f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text xml:space="preserve">{escape(text)}</text>\n'
        f"    </revision>\n  </page>\n"
    )


def make_dump(mb: float, work: Path) -> tuple[Path, float]:
    """Write the benchmark dump into ``work`` (kept and reused for the same
    size)."""
    work.mkdir(parents=True, exist_ok=True)
    dump = work / f"{NAME}.xml.bz2"
    index = work / f"{NAME}-index.txt.bz2"
    stamp = work / "dump.json"
    if stamp.exists() and json.loads(stamp.read_text())["mb"] == mb and dump.exists():
        return dump, json.loads(stamp.read_text())["wikitext_mb"]
    pages = list(pages_in_file(FIXTURE))
    header = read_header(FIXTURE)
    articles = sum(len(p.text.encode()) for p in pages if p.ns == 0 and not p.redirect)
    copies = max(1, round(mb * 1e6 / articles))
    writer = MultistreamWriter(dump, index, header, pages_per_stream=100)
    next_id = 1
    for copy in range(copies):
        for p in pages:
            title = f"{p.title} ({copy})" if copy else p.title
            redirect = (
                (f"{p.redirect} ({copy})" if copy else p.redirect)
                if p.redirect
                else None
            )
            writer.add_page(
                page_xml(
                    title,
                    p.ns,
                    next_id,
                    p.revid,
                    p.parentid,
                    p.timestamp,
                    redirect,
                    p.text,
                ),
                next_id,
                title,
            )
            next_id += 1
    writer.close()
    wikitext_mb = copies * articles / 1e6
    stamp.write_text(
        json.dumps({"mb": mb, "copies": copies, "wikitext_mb": wikitext_mb})
    )
    return dump, wikitext_mb


def shards_sha1(folder: Path) -> str:
    """One SHA-1 over every shard's bytes, in name order (equal runs, equal
    digest)."""
    digest = hashlib.sha1()
    for shard in sorted(folder.iterdir()):
        digest.update(shard.name.encode())
        digest.update(shard.read_bytes())
    return digest.hexdigest()


def _children_cpu() -> float:
    """CPU seconds (user + system) of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_peer(dump: Path, script: Path, processes: int, wikitext_mb: float) -> dict:
    """One WikiExtractor run on ``dump`` with KILT's flags (output next to the
    dump), its whole-run CPU seconds (every process of it)."""
    out = dump.parent / f"out-wikiextractor-{processes}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, str(script), "--json", "-s", "--lists", "-l", "-q"]
    cmd += ["--processes", str(processes), "-o", str(out), str(dump)]
    load_start = os.getloadavg()[0]
    cpu_start, started = _children_cpu(), time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall, cpu = time.monotonic() - started, _children_cpu() - cpu_start
    return {
        "engine": "wikiextractor",
        "workers": processes,
        "wikitext_mb": round(wikitext_mb, 1),
        "wall_s": round(wall, 1),
        "run_cpu_s": round(cpu, 2),
        "mb_per_cpu_s": round(wikitext_mb / cpu, 3),
        "load_avg_1m_start": round(load_start, 2),
        "load_avg_1m_end": round(os.getloadavg()[0], 2),
    }


def ratios(rows: list[dict]) -> dict[int, float]:
    """Per worker count, the mean MB per CPU-second of the builder's pool runs
    over the mean of WikiExtractor's (worker counts run by both only)."""
    means: dict[tuple[str, int], list[float]] = {}
    for row in rows:
        means.setdefault((row["engine"], row["workers"]), []).append(
            row["mb_per_cpu_s"]
        )
    return {
        workers: round(
            (sum(ours) / len(ours)) / (sum(peer) / len(peer)),
            3,
        )
        for (engine, workers), ours in sorted(means.items())
        if engine == "pool" and (peer := means.get(("wikiextractor", workers)))
    }


def run(dump: Path, engine: str, workers: int, split_mb: float) -> dict:
    """One from-dump run in a subprocess, its process tree's RSS sampled
    (output next to the dump)."""
    out = dump.parent / f"out-{engine}-{workers}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable,
        "-m",
        "kilt_chunks.cli",
        "from-dump",
        str(dump),
        "--out",
        str(out),
        "--engine",
        engine,
        "--workers",
        str(workers),
        "--split-mb",
        str(split_mb),
        "--progress-seconds",
        "60",
    ]
    load_start = os.getloadavg()[0]
    cpu_start, started = _children_cpu(), time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT)
    peak = {"tree": 0, "largest": 0}
    root = psutil.Process(proc.pid)

    def sample() -> None:
        while proc.poll() is None:
            try:
                procs = [root, *root.children(recursive=True)]
                rss = [p.memory_info().rss for p in procs if p.is_running()]
            except psutil.Error:
                continue
            peak["tree"] = max(peak["tree"], sum(rss))
            peak["largest"] = max(peak["largest"], max(rss, default=0))
            time.sleep(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    code = proc.wait()
    wall, run_cpu = time.monotonic() - started, _children_cpu() - cpu_start
    thread.join()
    if code != 0:
        raise SystemExit(f"{engine}:{workers} failed ({code})")
    manifest = json.loads((out / "manifest.json").read_text())
    wikitext_mb = manifest["wikitext_bytes"] / 1e6
    cpu = manifest["run"]["map_cpu_seconds"]
    return {
        "engine": engine,
        "workers": workers,
        "splits": len(manifest["shards"]),
        "pages": manifest["pages"],
        "wikitext_mb": round(wikitext_mb, 1),
        "wall_s": round(wall, 1),
        "map_s": manifest["run"]["map_seconds"],
        "mb_per_s_wall": round(wikitext_mb / wall, 3),
        "map_cpu_s": cpu,
        "mb_per_s_per_core": round(wikitext_mb / cpu, 3) if cpu else None,
        "run_cpu_s": round(run_cpu, 2),
        "mb_per_cpu_s": round(wikitext_mb / run_cpu, 3),
        "peak_rss_tree_mb": round(peak["tree"] / 1e6),
        "peak_rss_largest_mb": round(peak["largest"] / 1e6),
        "load_avg_1m_start": round(load_start, 2),
        "load_avg_1m_end": round(os.getloadavg()[0], 2),
        "shards_sha1": shards_sha1(out / "pages"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=1000)
    parser.add_argument("--split-mb", type=float, default=16)
    parser.add_argument(
        "--runs",
        nargs="*",
        default=["pool:2", "ray:2", "pool:1"],
        help="engine:workers runs (none: only write the dump); engine pool,"
        " ray or wikiextractor (with --wikiextractor)",
    )
    parser.add_argument(
        "--wikiextractor",
        type=Path,
        help="WikiExtractor.py of version 2.75, for the wikiextractor:N runs",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=WORK,
        help="folder of the dump and its outputs (one per size, to keep both)",
    )
    args = parser.parse_args()
    t = time.monotonic()
    dump, wikitext_mb = make_dump(args.mb, args.work)
    print(
        f"dump: {dump} ({dump.stat().st_size / 1e6:,.0f} MB bz2, {wikitext_mb:,.0f} MB"
        f" article wikitext) in {time.monotonic() - t:,.0f} s",
        flush=True,
    )
    results = WORK.parent / "dump_bench.jsonl"
    results.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for spec in args.runs:
        engine, workers = spec.split(":")
        if engine == "wikiextractor":
            if args.wikiextractor is None:
                parser.error("wikiextractor runs need --wikiextractor FILE")
            row = run_peer(dump, args.wikiextractor, int(workers), wikitext_mb)
        else:
            row = run(dump, engine, int(workers), args.split_mb)
        row["dump_bz2_mb"] = round(dump.stat().st_size / 1e6)
        rows.append(row)
        print(json.dumps(row), flush=True)
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
    if ratio := ratios(rows):
        print(json.dumps({"ratio": ratio}), flush=True)


if __name__ == "__main__":
    main()
