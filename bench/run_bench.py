"""Benchmark: splitter speed, worker scaling, end-to-end builds, memory.

Builds KILT-shaped corpora of chosen sizes by sampling real pages and paragraphs
of the bundled sample, then measures in one run:

* stock vs fast splitter MB/s of section text on one core, and their ratio;
* chunking with 1 worker vs all workers;
* `dbt build` end to end per corpus: pages/s, chunks/s, section MB/s, time per
  stage, peak RSS of the whole process tree;
* the projected time for the full KILT dump.

Writes a Markdown table to ``bench/RESULTS.md`` (and prints it). Usage:
``python bench/run_bench.py --sizes 50 500``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from importlib.metadata import version
from pathlib import Path

import duckdb
import psutil
import pyarrow as pa

from kilt_chunks.build.sections import page_sections
from kilt_chunks.build.splitting import split_section_batches
from kilt_chunks.dbt_command import dbt_build_command, dbt_build_env
from kilt_chunks.splitter import SPLITTER_NAMES, get_splitter

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "kilt_enwiki2016_sample.jsonl"

#: Full-dump assumptions used for the projection.
FULL_DUMP_PAGES = 5_903_530
FULL_DUMP_SECTION_TEXT_GB = 15.0
FULL_DUMP_JSON_GB = 34.8


#: Largest corpus (MB of JSON) below which start-up dominates the results.
MEANINGFUL_MB = 300

#: Mean UTF-8 bytes of paragraph text per page in the full dump (15 GB over
#: 5.9 million pages); the bundled sample's pages are ten times longer.
MEAN_PAGE_TEXT_BYTES = 2_500
#: Share of a kept paragraph's anchors kept: lead paragraphs of the sample's
#: long articles hold more links than the dump's average page.
ANCHOR_KEEP = 0.5


def make_long_page_corpus(path: Path, size_mb: float) -> dict:
    """Write about ``size_mb`` MB of copies of the bundled sample's pages (long
    articles: 28 kB of text per page, ten times KILT's mean), each with a new
    ``wikipedia_id``: the corpus the memory floor was measured on."""
    if path.exists():
        lines = path.read_text(encoding="utf-8").count("\n")
        return {"pages": lines, "bytes": path.stat().st_size}
    pages = [json.loads(line) for line in SAMPLE.open(encoding="utf-8")]
    written = n = 0
    with path.open("w", encoding="utf-8") as out:
        while written < size_mb * 1e6:
            page = {**pages[n % len(pages)], "wikipedia_id": str(10_000_000 + n)}
            line = json.dumps(page) + "\n"
            out.write(line)
            written += len(line.encode())
            n += 1
    return {"pages": n, "bytes": written}


def make_corpus(
    path: Path, size_mb: float, seed: int = 13, *, num_pages: int | None = None
) -> dict:
    """Write a KILT-shaped JSON lines corpus of about ``size_mb`` MB.

    With ``num_pages``, the corpus ends after that many pages instead (the
    full-size run: the dump's 5,903,530 pages). A path ending in ``.gz`` is
    written gzip-compressed (level 1: about 4x smaller, fast to write); the
    returned ``bytes`` always counts uncompressed JSON.

    Each page takes the first paragraphs (title, headers, layout) of a random
    real page of the bundled sample, up to a text length drawn from an
    exponential distribution with the full dump's mean page length, fills its
    body paragraphs with random real body and bullet paragraphs of the sample,
    and keeps half of the real page's anchors on the kept paragraphs, its
    categories and its history. Page lengths and JSON bytes per byte of text (about 2.3:
    34.8 GB of JSON, 15 GB of text) are then about those of the real dump.
    """
    rng = random.Random(seed)
    pages = [json.loads(line) for line in SAMPLE.open(encoding="utf-8")]
    pool = [
        p for page in pages for p in page["text"][1:] if not p.startswith("Section::::")
    ]
    target = int(size_mb * 1e6)
    written = 0
    n = 0
    if path.name.endswith(".gz"):
        out = gzip.open(path, "wt", encoding="utf-8", compresslevel=1)
    else:
        out = path.open("w", encoding="utf-8")
    with out as f:
        while (written < target) if num_pages is None else (n < num_pages):
            template = rng.choice(pages)
            budget = rng.expovariate(1 / MEAN_PAGE_TEXT_BYTES)
            text = [f"Synthetic page {n}\n"]
            size = 0
            for p in template["text"][1:]:
                if size >= budget:
                    break
                para = p if p.startswith("Section::::") else rng.choice(pool)
                text.append(para)
                size += len(para.encode("utf-8"))
            page = {
                "_id": str(10_000_000 + n),
                "wikipedia_id": str(10_000_000 + n),
                "wikipedia_title": f"Synthetic page {n}",
                "text": text,
                "anchors": [
                    a
                    for a in template.get("anchors", [])
                    if a.get("paragraph_id", 0) < len(text)
                    and rng.random() < ANCHOR_KEEP
                ],
                "categories": template["categories"],
                "history": template["history"],
            }
            line = json.dumps(page, ensure_ascii=False) + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
            n += 1
    return {"pages": n, "bytes": written}


def section_texts(corpus: Path, limit_mb: float) -> list[str]:
    """Section texts of the first pages of a corpus, up to ``limit_mb`` MB."""
    texts: list[str] = []
    total = 0
    with corpus.open(encoding="utf-8") as f:
        for line in f:
            page = json.loads(line)
            for section in page_sections(page["wikipedia_title"], page["text"]):
                texts.append(section.text)
                total += len(section.text.encode("utf-8"))
            if total >= limit_mb * 1e6:
                break
    return texts


def splitter_speeds(texts: list[str], blocks: int = 20) -> dict[str, float]:
    """MB/s of section text split on this core by stock and fast, side by side.

    The texts are cut into ``blocks`` blocks and the two splitters alternate
    block by block (CPU time of this process), so a burst of other load on the
    machine does not favour either.
    """
    splitters = {name: get_splitter(name, 256).split_text for name in SPLITTER_NAMES}
    for split in splitters.values():
        split("warm up. " * 100)
    seconds = dict.fromkeys(splitters, 0.0)
    size = max(1, len(texts) // blocks)
    for i in range(0, len(texts), size):
        block = texts[i : i + size]
        for name, split in splitters.items():
            start = time.process_time()
            for text in block:
                split(text)
            seconds[name] += time.process_time() - start
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    return {name: nbytes / 1e6 / seconds[name] for name in splitters}


def worker_speed(texts: list[str], splitter: str, workers: int) -> float:
    """MB/s of section text through :func:`split_section_batches`."""
    table = pa.table(
        {
            "page_order": pa.array(range(len(texts)), pa.int64()),
            "wikipedia_id": [str(i) for i in range(len(texts))],
            "section_order": pa.array([0] * len(texts), pa.int32()),
            "section_text": texts,
        }
    )
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    start = time.perf_counter()
    for _ in split_section_batches(
        table.to_batches(max_chunksize=2000), splitter=splitter, workers=workers
    ):
        pass
    return nbytes / 1e6 / (time.perf_counter() - start)


def _tree_files(folder: Path) -> dict[str, int]:
    """Bytes of each file below ``folder`` (files vanishing meanwhile skipped)."""
    sizes = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            try:
                sizes[os.path.relpath(path, folder)] = os.stat(path).st_size
            except OSError:
                pass
    return sizes


def _tree_bytes(folder: Path) -> int:
    """Bytes of every file below ``folder``."""
    return sum(_tree_files(folder).values())


class PeakRss:
    """Samples the summed RSS of a process and its children, and the disk used
    below a folder (database, scratch database, spill files, export), every
    0.2 s.

    Keeps every ``(unix time, rss bytes)`` sample, so the peak of a time window
    (one dbt node) can be read off afterwards with :meth:`peak_between`.
    """

    def __init__(self, pid: int, folder: Path | None = None) -> None:
        self.peak = 0
        self.peak_disk = 0
        #: The largest files when the disk use peaked, and the time.
        self.peak_disk_files: dict[str, int] = {}
        self.peak_disk_at = 0.0
        self.samples: list[tuple[float, int]] = []
        self._folder = folder
        self._proc = psutil.Process(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                procs = [self._proc, *self._proc.children(recursive=True)]
                rss = sum(p.memory_info().rss for p in procs)
                self.peak = max(self.peak, rss)
                self.samples.append((time.time(), rss))
            except psutil.Error:
                pass
            if self._folder is not None:
                files = _tree_files(self._folder)
                if sum(files.values()) > self.peak_disk:
                    self.peak_disk = sum(files.values())
                    self.peak_disk_at = time.time()
                    self.peak_disk_files = {
                        name: size for name, size in files.items() if size > 2**20
                    }
            time.sleep(0.2)

    def peak_between(self, start: float, end: float) -> int:
        """Largest sample taken from ``start`` to ``end`` (unix seconds)."""
        return max((rss for t, rss in self.samples if start <= t <= end), default=0)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


#: dbt models of each stage; the data and unit tests are the stage "tests".
STAGES = {
    "load": ["base_kilt__pages", "stg_kilt__pages"],
    "sections": ["int_paragraphs_classified", "int_sections_assembled"],
    "chunking": ["int_sections_chunked"],
}
#: Every other model (marts, export, provenance, build info) is "marts + export";
#: the rest of the wall time (dbt start-up, parsing, hooks) is "dbt overhead".
STAGE_NAMES = [*STAGES, "marts + export", "tests"]


def _stage_of(unique_id: str) -> str:
    if unique_id.startswith(("test.", "unit_test.")):
        return "tests"
    name = unique_id.split(".")[-1]
    return next((s for s, names in STAGES.items() if name in names), "marts + export")


def start_build(
    corpus: Path,
    workdir: Path,
    splitter: str,
    progress_seconds: float = 0,
    memory_limit: str | None = None,
) -> tuple[subprocess.Popen, PeakRss, float]:
    """Start `dbt build` of ``corpus`` into ``workdir`` (output in
    ``workdir/dbt_build.log``), with ``KILT_CHUNKS_MEMORY_LIMIT`` set to
    ``memory_limit`` (512MB when not given); return the process, its sampler, start
    time."""
    workdir.mkdir(parents=True, exist_ok=True)
    variables = {
        "kilt_path": str(corpus),
        "export_dir": str(workdir / "exports"),
        "splitter": splitter,
        "progress_seconds": progress_seconds,
    }
    env = dbt_build_env(workdir / "bench.duckdb")
    # The figures of bench/RESULTS.md were measured at 512 MB, the default
    # before the default became half of the machine's memory: kept, so the
    # runs stay comparable.
    env["KILT_CHUNKS_MEMORY_LIMIT"] = memory_limit or "512MB"
    log = (workdir / "dbt_build.log").open("a")
    start = time.perf_counter()
    proc = subprocess.Popen(
        dbt_build_command(ROOT, workdir, variables),
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    return proc, PeakRss(proc.pid, workdir), start


#: KILT_CHUNKS_MEMORY_LIMIT of the long-page corpus's build (what the load's
#: memory check advises for it).
LONG_PAGES_MEMORY_LIMIT = "1GiB"


def end_to_end(
    corpus: Path,
    workdir: Path,
    splitter: str,
    *,
    json_bytes: int | None = None,
    progress_seconds: float = 0,
    memory_limit: str | None = None,
) -> dict:
    """Run `dbt build` (models and tests) on a corpus; time stages, pages/s,
    peak RSS and peak disk (everything below ``workdir``)."""
    if workdir.exists():
        shutil.rmtree(workdir)
    proc, rss, start = start_build(
        corpus, workdir, splitter, progress_seconds, memory_limit
    )
    proc.wait()
    peak = rss.stop()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        output = (workdir / "dbt_build.log").read_text()
        raise SystemExit(f"dbt build failed:\n{output[-4000:]}")
    return measured_build(corpus, workdir, wall, rss, json_bytes=json_bytes) | {
        "peak_rss_gib": peak / 2**30
    }


def measured_build(
    corpus: Path,
    workdir: Path,
    wall: float,
    rss: PeakRss,
    *,
    json_bytes: int | None = None,
) -> dict:
    """The figures of a finished build in ``workdir`` (see :func:`end_to_end`)."""
    results = json.loads((workdir / "target" / "run_results.json").read_text())
    stages = dict.fromkeys(STAGE_NAMES, 0.0)
    for r in results["results"]:
        stages[_stage_of(r["unique_id"])] += r["execution_time"]
    stages["dbt overhead"] = wall - sum(stages.values())
    stage_rss = _stage_peaks(results["results"], rss)
    db = workdir / "bench.duckdb"
    with duckdb.connect(str(db), read_only=True) as con:
        audit = con.sql("select * from kilt_load_audit")
        row = dict(zip(audit.columns, audit.fetchall()[0], strict=True))
    json_bytes = json_bytes or corpus.stat().st_size
    text_mb = row["section_text_bytes"] / 1e6
    return {
        "wall_s": wall,
        "stages": stages,
        "pages": row["lines_read"],
        "sections": row["sections_kept"],
        "chunks": row["chunks_written"],
        "section_mb": text_mb,
        "json_bytes": json_bytes,
        "pages_per_s": row["lines_read"] / wall,
        "chunks_per_s": row["chunks_written"] / wall,
        "section_mb_per_s": text_mb / wall,
        # The rate the projection uses: dbt's start-up is paid once per build.
        "section_mb_per_s_after_startup": text_mb / (wall - stages["dbt overhead"]),
        "stage_rss_gib": stage_rss,
        "peak_disk_to_json": rss.peak_disk / json_bytes,
        "peak_disk_files_mb": {
            name: round(size / 1e6) for name, size in rss.peak_disk_files.items()
        },
        "peak_disk_stage": _stage_at(results["results"], rss.peak_disk_at),
        "database_to_json": db.stat().st_size / json_bytes,
        "database_gb": db.stat().st_size / 1e9,
        "export_gb": _tree_bytes(workdir / "exports") / 1e9,
    }


def _stage_at(results: list[dict], when: float) -> str:
    """The dbt node that ran at unix time ``when`` (or "between nodes")."""
    from datetime import datetime

    for result in results:
        timing = result.get("timing") or []
        if not timing:
            continue
        start = datetime.fromisoformat(timing[0]["started_at"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(timing[-1]["completed_at"].replace("Z", "+00:00"))
        if start.timestamp() <= when <= end.timestamp():
            return result["unique_id"].split(".")[-1]
    return "between nodes (hooks, dbt start-up)"


def _stage_peaks(results: list[dict], rss: PeakRss) -> dict[str, float]:
    """Peak RSS (GiB) while each stage's nodes ran."""
    from datetime import datetime

    def seconds(stamp: str) -> float:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()

    peaks: dict[str, float] = dict.fromkeys(STAGE_NAMES, 0.0)
    for result in results:
        timing = result.get("timing") or []
        if not timing:
            continue
        start = seconds(timing[0]["started_at"])
        end = seconds(timing[-1]["completed_at"])
        stage = _stage_of(result["unique_id"])
        peaks[stage] = max(peaks[stage], rss.peak_between(start, end) / 2**30)
    return peaks


def _argv_for_report() -> list[str]:
    """This run's arguments, with paths shown relative to the project."""
    shown = []
    for arg in sys.argv[1:]:
        path = Path(arg)
        if path.is_absolute():
            try:
                arg = str(path.relative_to(ROOT))
            except ValueError:
                arg = path.name
        shown.append(arg)
    return shown


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = psutil.virtual_memory().total / 2**30
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB RAM, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


#: Markers of the full-size section of RESULTS.md, which `make bench` keeps.
FULL_BEGIN = "<!-- full-size run: bench/run_bench.py --full -->"
FULL_END = "<!-- end of full-size run -->"


def chunks_digest(db: Path) -> tuple[int, int]:
    """Row count and an order-independent digest of every column of every row
    of ``kilt_chunks`` (chunk_id is unique, so a sum of row hashes): the
    columns as the table has them (its contract), each as text, NULL as
    ``~``."""
    with duckdb.connect(str(db), read_only=True) as con:
        columns = ", ".join(
            f"""coalesce("{name}"::varchar, '~')"""
            for name in con.table("kilt_chunks").columns
        )
        count, digest = con.sql(
            f"select count(*), sum(hash(concat_ws(chr(31), {columns}))::hugeint)"
            " from kilt_chunks"
        ).fetchall()[0]
    return int(count), int(digest)


def killed_and_resumed(
    corpus: Path, workdir: Path, splitter: str, *, json_bytes: int, at: float = 0.5
) -> dict:
    """Start a build, SIGKILL it once chunking has done ``at`` of the section
    text (read off its progress lines), run it again; time both."""
    if workdir.exists():
        shutil.rmtree(workdir)
    proc, rss, start = start_build(corpus, workdir, splitter, progress_seconds=10)
    log = workdir / "dbt_build.log"
    pattern = re.compile(r"chunking:\s+(\d+)%")
    while proc.poll() is None:
        done = [int(m) for m in pattern.findall(log.read_text(errors="replace"))]
        if done and done[-1] >= at * 100:
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(2)
    proc.wait()
    killed_s = time.perf_counter() - start
    rss.stop()
    with duckdb.connect(str(workdir / "bench.duckdb"), read_only=True) as con:
        committed = con.sql(
            "select count(*), coalesce(sum(num_chunks), 0)"
            " from kilt_chunking_checkpoint"
        ).fetchall()[0]
    proc, rss, start = start_build(corpus, workdir, splitter, progress_seconds=30)
    proc.wait()
    peak = rss.stop()
    rerun_s = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"resumed dbt build failed:\n{log.read_text()[-4000:]}")
    rerun = measured_build(corpus, workdir, rerun_s, rss, json_bytes=json_bytes)
    return {
        "killed_after_s": killed_s,
        "sections_committed_at_kill": int(committed[0]),
        "rerun": rerun | {"peak_rss_gib": peak / 2**30},
        "total_s": killed_s + rerun_s,
        "digest": chunks_digest(workdir / "bench.duckdb"),
    }


def full_size(args: argparse.Namespace) -> None:
    """The full-size run: a KILT-shaped corpus of the dump's 5,903,530 pages
    (gzip), built end to end, then built again killed in mid-chunking and
    resumed; writes its section of RESULTS.md."""
    folder = args.workdir / "full"
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "kilt_full.jsonl.gz"
    meta = folder / "kilt_full.meta.json"
    if not meta.exists():
        made = make_corpus(corpus, 0, num_pages=FULL_DUMP_PAGES)
        meta.write_text(json.dumps(made))
    made = json.loads(meta.read_text())
    print(f"full-size corpus: {made['pages']:,} pages, {made['bytes'] / 1e9:.1f} GB")
    run = end_to_end(
        corpus,
        folder / "build",
        args.splitter,
        json_bytes=made["bytes"],
        progress_seconds=30,
    )
    run["digest"] = chunks_digest(folder / "build" / "bench.duckdb")
    print(f"full-size build: {run}", flush=True)
    (folder / "run.json").write_text(json.dumps(run, indent=1))
    shutil.rmtree(folder / "build")
    resumed = None
    if not args.no_resume:
        resumed = killed_and_resumed(
            corpus, folder / "resumed", args.splitter, json_bytes=made["bytes"]
        )
        print(f"killed and resumed: {resumed}", flush=True)
        (folder / "resumed.json").write_text(json.dumps(resumed, indent=1))
        shutil.rmtree(folder / "resumed")
    section = full_size_report(made, run, resumed, corpus)
    text = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
    if FULL_BEGIN in text:
        text = (
            text[: text.index(FULL_BEGIN)]
            + text[text.index(FULL_END) + len(FULL_END) :]
        )
    args.output.write_text(text.rstrip() + "\n\n" + section + "\n", encoding="utf-8")
    print(section)


def full_size_report(made: dict, run: dict, resumed: dict | None, corpus: Path) -> str:
    """Markdown section of the full-size run."""
    s = run["stages"]
    lines = [
        FULL_BEGIN,
        "## Full size: 5.9 M pages, measured",
        "",
        f"Machine: {machine()}. Command: `python bench/run_bench.py --full`"
        " (`make bench-full`). Corpus: KILT-shaped JSON lines as for the smaller"
        f" corpora, {made['pages']:,} pages (the dump's count),"
        f" {made['bytes'] / 1e9:.1f} GB of JSON, written gzip-compressed"
        f" ({corpus.stat().st_size / 1e9:.1f} GB; the build reads the `.gz`)."
        " `dbt build`: every model, every data and unit test, the Parquet export.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| wall time | {run['wall_s'] / 60:.1f} min ({run['wall_s']:,.0f} s) |",
        *(
            f"| time in {stage} | {s[stage] / 60:.1f} min |"
            for stage in [*STAGE_NAMES, "dbt overhead"]
        ),
        f"| pages | {run['pages']:,} ({run['pages_per_s']:,.0f} pages/s) |",
        f"| sections | {run['sections']:,} |",
        f"| chunks | {run['chunks']:,} ({run['chunks_per_s']:,.0f} chunks/s) |",
        f"| section text | {run['section_mb'] / 1e3:.2f} GB "
        f"({run['section_mb_per_s']:.2f} MB/s end to end) |",
        f"| peak RSS, whole process tree | {run['peak_rss_gib']:.2f} GiB |",
        *(
            f"| peak RSS in {stage} | {gib:.2f} GiB |"
            for stage, gib in run["stage_rss_gib"].items()
        ),
        f"| peak disk (database, scratch, spill, export) | "
        f"{run['peak_disk_to_json'] * run['json_bytes'] / 1e9:.1f} GB "
        f"({run['peak_disk_to_json']:.2f}x the JSON) |",
        f"| final DuckDB file | {run['database_gb']:.1f} GB "
        f"({run['database_to_json']:.2f}x the JSON) |",
        f"| Parquet export | {run['export_gb']:.1f} GB |",
    ]
    if resumed is not None:
        same = resumed["digest"] == run["digest"]
        lines += [
            f"| killed in mid-chunking (SIGKILL) after | "
            f"{resumed['killed_after_s'] / 60:.1f} min, "
            f"{resumed['sections_committed_at_kill']:,} sections committed |",
            f"| rerun after the kill | {resumed['rerun']['wall_s'] / 60:.1f} min |",
            f"| killed + rerun, total | {resumed['total_s'] / 60:.1f} min "
            f"({resumed['total_s'] / run['wall_s'] - 1:+.0%} on the uninterrupted "
            "build) |",
            f"| resumed rows identical to the uninterrupted build | "
            f"{'yes' if same else 'NO'} ({resumed['digest'][0]:,} rows, digest of "
            "every column) |",
        ]
    lines.append(FULL_END)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--sizes",
        type=float,
        nargs="+",
        default=[50, 500, 1000],
        help="corpus sizes to build end to end, MB of JSON lines",
    )
    parser.add_argument(
        "--splitter-mb",
        type=float,
        default=10,
        help="MB of section text for the stock vs fast splitter comparison",
    )
    parser.add_argument(
        "--workers-mb",
        type=float,
        default=120,
        help="MB of section text for the 1 vs all workers comparison",
    )
    parser.add_argument(
        "--long-pages-mb",
        type=float,
        default=257,
        help="MB of the long-page corpus (copies of the sample's pages) built"
        " end to end beside the KILT-shaped ones; 0 skips it",
    )
    parser.add_argument(
        "--splitter", default="fast", help="splitter of the end-to-end builds"
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=ROOT / "bench" / "work",
        help="corpora and builds (kept between runs; corpora are reused)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=ROOT / "bench" / "RESULTS.md",
        help="results table (overwritten)",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="the full-size run instead: 5,903,530 pages (about 36 GB of JSON,"
        " written gzip-compressed), built, then killed in mid-chunking and"
        " resumed; writes its own section of --output (about an hour)",
    )
    parser.add_argument(
        "--no-resume",
        action="store_true",
        help="with --full: skip the killed-and-resumed build",
    )
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.full:
        full_size(args)
        return

    corpora = {}
    for size in args.sizes:
        path = args.workdir / f"corpus_{size:g}mb.jsonl"
        corpora[size] = (path, make_corpus(path, size))
        print(f"corpus {size:g} MB: {corpora[size][1]['pages']:,} pages", flush=True)

    texts = section_texts(corpora[args.sizes[0]][0], args.splitter_mb)
    speeds = splitter_speeds(texts)
    stock, fast = speeds["llama_index"], speeds["fast"]
    print(f"splitter MB/s on one core: stock {stock:.2f}, fast {fast:.2f}", flush=True)
    # The bundled sample's own sections: long articles, long sections.
    sample_texts = section_texts(SAMPLE, args.splitter_mb)
    sample_speeds = splitter_speeds(sample_texts)
    sample_stock, sample_fast = sample_speeds["llama_index"], sample_speeds["fast"]
    worker_texts = section_texts(corpora[max(args.sizes)][0], args.workers_mb)
    one = worker_speed(worker_texts, args.splitter, 1)
    cores = os.cpu_count() or 1
    many = worker_speed(worker_texts, args.splitter, cores)
    print(f"chunking MB/s: 1 worker {one:.2f}, {cores} workers {many:.2f}", flush=True)

    runs = {}
    for size in args.sizes:
        runs[size] = end_to_end(
            corpora[size][0], args.workdir / f"e2e_{size:g}mb", args.splitter
        )
        print(f"end to end {size:g} MB: {runs[size]}", flush=True)
    long_pages = {}
    if args.long_pages_mb > 0:
        size = args.long_pages_mb
        path = args.workdir / f"long_pages_{size:g}mb.jsonl"
        made = make_long_page_corpus(path, size)
        label = f"{size:g} MB, long pages"
        # Long pages need more than the default 512 MB cap in the sections
        # step (docs/resources.md: SECTIONS_MEMORY_PER_TEXT_BYTE times the
        # text of the longest run of 2,048 pages; 58 MB here): the limit the
        # load's check advises for this corpus.
        long_pages[label] = end_to_end(
            path,
            args.workdir / f"e2e_long_{size:g}mb",
            args.splitter,
            memory_limit=LONG_PAGES_MEMORY_LIMIT,
        )
        print(f"end to end {label} ({made['pages']:,} pages): {long_pages[label]}")

    largest = runs[max(args.sizes)]
    stages = largest["stages"]
    json_scale = FULL_DUMP_JSON_GB * 1e9 / corpora[max(args.sizes)][1]["bytes"]
    text_scale = FULL_DUMP_SECTION_TEXT_GB * 1e3 / largest["section_mb"]
    chunk_rate = largest["section_mb"] / max(stages["chunking"], 1e-9)
    projected = {
        "load": stages["load"] * json_scale,
        "sections": stages["sections"] * text_scale,
        "chunking": stages["chunking"] * text_scale,
        "marts + export": stages["marts + export"] * text_scale,
        "tests": stages["tests"] * text_scale,
        "dbt overhead": stages["dbt overhead"],
    }
    projected_min = sum(projected.values()) / 60

    versions = ", ".join(
        f"{p} {version(p)}"
        for p in ("llama-index-core", "nltk", "tiktoken", "rs-bpe", "duckdb")
    )
    lines = [
        "# Benchmark results",
        "",
        f"Machine: {machine()}.",
        "Command: `python bench/run_bench.py "
        + " ".join(_argv_for_report())
        + "` (`make bench` runs it with the default sizes).",
        f"Versions: {versions}. Splitter for end-to-end runs: `{args.splitter}`.",
        "Corpora: KILT-shaped JSON lines built by sampling real pages (header "
        "layout) and real paragraphs of the bundled 2016 sample "
        "(`bench/run_bench.py`).",
        *(
            [
                "",
                f"**Caveat: the largest corpus here is {max(args.sizes):g} MB.** "
                f"Below about {MEANINGFUL_MB} MB, start-up (dbt, worker "
                "processes) dominates: the worker scaling, the end-to-end rates "
                "and the full-dump projection below do not describe a large "
                "build. Use `make bench` (50, 500 and 1000 MB) for those.",
            ]
            if max(args.sizes) < MEANINGFUL_MB
            else []
        ),
        "",
        "## Splitter, one core",
        "",
        "| splitter | corpus sections, MB/s | sample sections, MB/s |",
        "|---|---|---|",
        f"| stock LlamaIndex `SentenceSplitter` | {stock:.2f} | {sample_stock:.2f} |",
        f"| kilt-chunks fast (identical output) | {fast:.2f} | {sample_fast:.2f} |",
        f"| ratio fast / stock | {fast / stock:.2f}x "
        f"| {sample_fast / sample_stock:.2f}x |",
        "",
        f"Corpus sections: {sum(len(t.encode()) for t in texts) / 1e6:.1f} MB of"
        " section text of the first corpus (page lengths of the full dump, many"
        " short sections). Sample sections: the"
        f" {sum(len(t.encode()) for t in sample_texts) / 1e6:.1f} MB of section text"
        " of the bundled sample's own 106 pages (long articles). The two splitters"
        " alternate block by block (CPU time of one process).",
        "",
        "## Chunking step, workers",
        "",
        f"{sum(len(t.encode()) for t in worker_texts) / 1e6:.1f} MB of section text"
        " through `split_section_batches` (splitting, chunk spans, token counts),"
        " worker start-up included.",
        "",
        "| workers | MB/s |",
        "|---|---|",
        f"| 1 | {one:.2f} |",
        f"| {cores} | {many:.2f} |",
        "",
        "## End to end (`dbt build`: all models, all data and unit tests, the "
        "Parquet export)",
        "",
        "| corpus | pages | sections | chunks | section MB | wall s | pages/s "
        "| chunks/s | section MB/s | section MB/s after dbt start-up | load s "
        "| sections s | chunking s | marts + export s | tests s | dbt overhead s "
        "| peak RSS GiB | peak disk / JSON | DuckDB file / JSON | export / JSON |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        "---|",
    ]
    labelled = {f"{size:g} MB": r for size, r in runs.items()} | long_pages
    for label, r in labelled.items():
        s = r["stages"]
        lines.append(
            f"| {label} | {r['pages']:,} | {r['sections']:,} | {r['chunks']:,} "
            f"| {r['section_mb']:.0f} | {r['wall_s']:.0f} | {r['pages_per_s']:,.0f} "
            f"| {r['chunks_per_s']:,.0f} | {r['section_mb_per_s']:.2f} "
            f"| {r['section_mb_per_s_after_startup']:.2f} "
            f"| {s['load']:.1f} | {s['sections']:.1f} | {s['chunking']:.1f} "
            f"| {s['marts + export']:.1f} | {s['tests']:.1f} "
            f"| {s['dbt overhead']:.1f} "
            f"| {r['peak_rss_gib']:.2f} | {r['peak_disk_to_json']:.2f}x "
            f"| {r['database_to_json']:.2f}x "
            f"| {r['export_gb'] * 1e9 / r['json_bytes']:.2f}x |"
        )
    smallest = runs[min(args.sizes)]["peak_rss_gib"]
    lines += [
        "",
        "Section MB/s is section text over wall time; the next column leaves out"
        " dbt's start-up (parsing, connecting), paid once per build whatever its"
        " size. Peak RSS: dbt, DuckDB, the JSON loader and the chunking workers"
        " together, sampled every 0.2 s; relative to the smallest corpus: "
        + ", ".join(
            f"{size:g} MB {r['peak_rss_gib'] / smallest - 1:+.0%}"
            for size, r in runs.items()
        )
        + ".",
    ]
    stage_names = list(next(iter(runs.values()))["stage_rss_gib"])
    lines += [
        "",
        "Peak RSS by stage, GiB (the same samples, within each stage's dbt nodes):",
        "",
        "| corpus | " + " | ".join(stage_names) + " |",
        "|---|" + "---|" * len(stage_names),
        *(
            f"| {label} | "
            + " | ".join(f"{r['stage_rss_gib'][n]:.2f}" for n in stage_names)
            + " |"
            for label, r in labelled.items()
        ),
        *(
            [
                "",
                "The long-page corpus is copies of the bundled sample's pages with"
                " new ids (28 kB of text per page, ten times KILT's mean): the"
                " corpus the memory floor of the sections step was measured on"
                ' (README, "Disk and memory"). It builds at the default 512 MB'
                " cap; below the floor its build stops after the load.",
            ]
            if long_pages
            else []
        ),
    ]
    lines += [
        "",
        "## Projection for the full KILT dump",
        "",
        "(The full-size run below measures it; the projection shows how far "
        "linear scaling from this size goes.)",
        "",
        f"Assumptions: {FULL_DUMP_PAGES:,} pages, {FULL_DUMP_JSON_GB} GB of JSON, "
        f"{FULL_DUMP_SECTION_TEXT_GB:.0f} GB of section text. Each stage of the "
        f"{max(args.sizes):g} MB run scaled linearly: load by JSON bytes "
        f"(x{json_scale:.0f}), sections, chunking ({chunk_rate:.2f} MB/s of section "
        f"text) and marts by section text bytes (x{text_scale:.0f}); dbt overhead "
        "once.",
        "",
        "| stage | projected minutes |",
        "|---|---|",
        *(f"| {stage} | {sec / 60:.1f} |" for stage, sec in projected.items()),
        f"| **total** | **{projected_min:.0f}** |",
        "",
    ]
    lines += [
        "Peak disk: everything below the build's folder (DuckDB file, scratch "
        "database, spill files, export), sampled every 0.2 s; the input is not "
        "counted.",
        "",
    ]
    report = "\n".join(lines)
    # Keep the full-size run's section (`--full`, an hour) across `make bench`.
    previous = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
    if FULL_BEGIN in previous and FULL_END in previous:
        start, end = previous.index(FULL_BEGIN), previous.index(FULL_END)
        report = report.rstrip() + "\n\n" + previous[start : end + len(FULL_END)] + "\n"
    args.output.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
