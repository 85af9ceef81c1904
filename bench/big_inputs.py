"""Benchmark: memory of a build on pathological inputs (issue 21, items 8-9).

Cases, each a small real-sample prefix plus one big thing:

* ``page_40mb``: one page of 40 MB of text in 40,000 paragraphs and 8 sections;
* ``page_40mb_sections``: the same 40 MB cut into 29,559 sections;
* ``line_600mb`` and ``line_2200mb``: one JSON line of 600 MB / 2.2 GB with no
  newline before the end of the file (rejected as a line over 64 MB).

Each is built with ``dbt build`` at the default memory cap (the profile's
512 MB) and measured as in ``run_bench.py``: wall time, peak RSS of the whole
process tree, and per stage. Writes the section "Big inputs" of
``bench/RESULTS.md``. Usage: ``python bench/big_inputs.py [--cases page_40mb ...]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_bench import PeakRss, machine, start_build  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "kilt_enwiki2016_sample.jsonl"
WORK = ROOT / "bench" / "work" / "big_inputs"

PAGE_TEXT_BYTES = 40 * 10**6
MANY_SECTIONS = 29_559
FEW_SECTIONS = 8
PARAGRAPHS = 40_000


def _sample_lines(n: int) -> list[str]:
    with SAMPLE.open(encoding="utf-8") as f:
        return [next(f) for _ in range(n)]


def _big_page(num_sections: int) -> str:
    """One page of about :data:`PAGE_TEXT_BYTES` of text: sentences of the
    sample, ``num_sections`` headers spread evenly among the paragraphs."""
    sentences = [
        p.strip()
        for line in _sample_lines(20)
        for p in json.loads(line)["text"][1:]
        if not p.startswith(("Section::::", "BULLET::::"))
    ]
    body = " ".join(sentences)
    paragraphs_total = max(PARAGRAPHS, num_sections * 2)
    size = PAGE_TEXT_BYTES // paragraphs_total
    text = ["Big page\n"]
    every = paragraphs_total // num_sections
    for i in range(paragraphs_total):
        if i % every == 0 and i // every < num_sections:
            text.append(f"Section::::Part {i // every}.\n")
        start = (i * 977) % max(1, len(body) - size)
        text.append(body[start : start + size].strip() + "\n")
    page = {
        "_id": "900000001",
        "wikipedia_id": "900000001",
        "wikipedia_title": "Big page",
        "text": text,
        "categories": "",
        "history": {"revid": 1, "pageid": 900000001, "parentid": 0},
    }
    return json.dumps(page, ensure_ascii=False) + "\n"


def make_case(name: str, folder: Path) -> Path:
    """Write case ``name`` into ``folder``; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    head = _sample_lines(5)
    with path.open("w", encoding="utf-8") as f:
        f.writelines(head[:3])
        if name == "page_40mb":
            f.write(_big_page(FEW_SECTIONS))
        elif name == "page_40mb_sections":
            f.write(_big_page(MANY_SECTIONS))
        f.writelines(head[3:])
        if name.startswith("line_"):
            size = int(name.removeprefix("line_").removesuffix("mb")) * 10**6
            f.write('{"wikipedia_id": "1", "text": ["')
            block = "y" * 2**20
            for _ in range(size // len(block)):
                f.write(block)
    return path


CASES = ["page_40mb", "page_40mb_sections", "line_600mb", "line_2200mb"]

#: Peak RSS of the same cases before the fixes of issue 21 (its adversarial
#: run, on main at 6b5a904): the target is under 1.5 GiB each.
BEFORE = {
    "page_40mb": "2.58 GB",
    "page_40mb_sections": "6.46 GB",
    "line_600mb": "2.16 GB",
    "line_2200mb": "7.1 GB, then a traceback",
}


def run_case(name: str) -> dict:
    """Build case ``name`` at the default memory cap and measure it."""
    workdir = WORK / name
    if workdir.exists():
        shutil.rmtree(workdir)
    corpus = make_case(name, WORK / "inputs")
    proc, rss, start = start_build(corpus, workdir, "fast")
    proc.wait()
    peak = rss.stop()
    wall = time.perf_counter() - start
    output = (workdir / "dbt_build.log").read_text()
    with duckdb.connect(str(workdir / "bench.duckdb"), read_only=True) as con:
        rejected = con.sql(
            "select reject_reason, count(*) from kilt_rejected_pages group by all"
        ).fetchall()
        chunks = con.sql("select count(*) from kilt_chunks").fetchall()[0][0]
    return {
        "case": name,
        "input_mb": corpus.stat().st_size / 1e6,
        "returncode": proc.returncode,
        "wall_s": wall,
        "peak_rss_gib": peak / 2**30,
        "chunks": chunks,
        "rejected": rejected,
        "tail": output[-600:] if proc.returncode else "",
        "stage_peaks": _stage_peaks(workdir, rss),
    }


def _stage_peaks(workdir: Path, rss: PeakRss) -> dict[str, float]:
    """Peak RSS (GiB) per dbt node group, from run_results.json."""
    results = json.loads((workdir / "target" / "run_results.json").read_text())
    peaks: dict[str, float] = {}
    from datetime import datetime

    for result in results["results"]:
        timing = {t["name"]: t for t in result["timing"]}
        if "execute" not in timing:
            continue
        start = datetime.fromisoformat(
            timing["execute"]["started_at"].replace("Z", "+00:00")
        ).timestamp()
        end = datetime.fromisoformat(
            timing["execute"]["completed_at"].replace("Z", "+00:00")
        ).timestamp()
        node = result["unique_id"].split(".")[-1]
        peaks[node] = rss.peak_between(start, end) / 2**30
    return dict(sorted(peaks.items(), key=lambda kv: -kv[1])[:3])


def report(rows: list[dict]) -> str:
    lines = [
        "## Big inputs (issue 21: memory bounded for any page and any line)",
        "",
        f"`python bench/big_inputs.py`, {machine()}, default memory cap (512 MB).",
        "",
        "| case | input MB | result | wall s | peak RSS GiB | before (issue 21) "
        "| top stages (GiB) |",
        "|---|---:|---|---:|---:|---|---|",
    ]
    for r in rows:
        verdict = f"built, {r['chunks']:,} chunks" if r["returncode"] == 0 else "FAILED"
        if r["rejected"]:
            verdict += "; rejected: " + ", ".join(
                f"{n} x {why}" for why, n in r["rejected"]
            )
        stages = ", ".join(f"{k} {v:.2f}" for k, v in r["stage_peaks"].items())
        lines.append(
            f"| {r['case']} | {r['input_mb']:,.0f} | {verdict} | {r['wall_s']:.0f} "
            f"| {r['peak_rss_gib']:.2f} | {BEFORE[r['case']]} | {stages} |"
        )
    lines += [
        "",
        "Wall times were measured with other sessions' tests running on the same",
        "2 cores (load average about 10); the memory figures do not depend on it.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=CASES, choices=CASES)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rows = []
    for name in args.cases:
        row = run_case(name)
        print(json.dumps(row, default=str), flush=True)
        rows.append(row)
    text = report(rows)
    print(text)
    if not args.no_write:
        results = ROOT / "bench" / "RESULTS.md"
        old = results.read_text()
        marker = "## Big inputs"
        if marker in old:
            old = old[: old.index(marker)].rstrip() + "\n\n"
        results.write_text(old + text)


if __name__ == "__main__":
    main()
