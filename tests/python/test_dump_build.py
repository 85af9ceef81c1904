"""``build_from_dump`` end to end on the bundled dumps: counts, manifest,
resolved anchors, skipped pages, engine equivalence (process pool with 1 and
2 workers, Ray in local mode: byte-identical shards) and a run killed
mid-way and started again (identical shards)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import types

import duckdb
import pytest
from dump_helpers import (
    BGWIKI,
    ENWIKI,
    ENWIKI_ARTICLES,
    ENWIKI_OTHER_NS,
    ENWIKI_REDIRECTS,
    TABLES,
    multistream,
    shard_digests,
    shared_dump_build,
)

from kilt_chunks.dump import build
from kilt_chunks.dump.build import DumpBuildError, build_from_dump
from kilt_chunks.dump.compare import iter_page_file
from kilt_chunks.dump.request import PageOptions
from kilt_chunks.dump.shards import SplitJob, run_split
from kilt_chunks.dump.siteinfo import parse_siteinfo
from kilt_chunks.dump.xmlpages import read_header


@pytest.fixture(scope="module")
def enwiki_ms(tmp_path_factory):
    return multistream(tmp_path_factory, ENWIKI, "enwiki100", 100 // 10)


@pytest.fixture(scope="module")
def enwiki_out(tmp_path_factory, enwiki_ms):
    """The English dump built with the process pool, 2 workers, 4 splits."""
    return shared_dump_build(tmp_path_factory, "enwiki", enwiki_ms, splits=4, workers=2)


def tmp_path_factory_of(tmp_path):
    """A stand-in TempPathFactory whose base is ``tmp_path`` (for helpers
    that share files between xdist workers; here private to one test)."""

    class _Factory:
        def getbasetemp(self):
            return tmp_path

    return _Factory()


@pytest.fixture(scope="module")
def tables_ms(tmp_path_factory):
    """The table-markup dump (no <siteinfo>) as multistream, a page a stream."""
    return multistream(tmp_path_factory, TABLES, "tables", 1)


def test_counts_manifest_and_marker(enwiki_out):
    manifest = json.loads((enwiki_out / "manifest.json").read_text())
    assert manifest["pages"] == ENWIKI_ARTICLES
    assert manifest["skipped"] == {"namespace": ENWIKI_OTHER_NS}
    assert manifest["lookup"]["redirects"] == ENWIKI_REDIRECTS
    assert manifest["wiki"] == "enwiki" and manifest["dump_date"] == "20160501"
    assert manifest["siteinfo"]["namespaces"]["14"] == "Category"
    names = [s["file"] for s in manifest["shards"]]
    assert names == [f"pages/part-{i:05d}-of-00004.jsonl.gz" for i in range(4)]
    assert sum(s["pages"] for s in manifest["shards"]) == ENWIKI_ARTICLES
    assert [s["index"] for s in manifest["split_plan"]] == [0, 1, 2, 3]
    assert all(len(s["sha1"]) == 40 for s in manifest["sources"])
    assert (enwiki_out / "_SUCCESS").exists() and not (enwiki_out / "work").exists()
    # shards in dump order: page ids as in the dump
    ids = [int(p["wikipedia_id"]) for p in iter_page_file(enwiki_out / "pages")]
    assert ids == sorted(ids) and len(set(ids)) == ENWIKI_ARTICLES


def test_pages_and_resolved_anchors(enwiki_out):
    pages = {p["wikipedia_title"]: p for p in iter_page_file(enwiki_out / "pages")}
    anarchism = pages["Anarchism"]
    assert anarchism["text"][0] == "Anarchism\n"
    assert anarchism["text"][3] == "Section::::Etymology and terminology.\n"
    assert "Section::::History.:Origins.\n" in anarchism["text"]
    assert anarchism["categories"].startswith("Anarchism,Political culture,")
    for page in pages.values():
        for a in page["anchors"]:
            assert page["text"][a["paragraph_id"]][a["start"] : a["end"]] == a["text"]
    # a link to an article of the dump resolves to its id ...
    to_autism = [
        a for p in pages.values() for a in p["anchors"] if a["href"] == "autism"
    ]
    assert to_autism and {a["wikipedia_id"] for a in to_autism} == {
        pages["Autism"]["_id"]
    }
    # ... and one through a redirect of the dump to its target
    with duckdb.connect() as con:
        title, target, wid = con.execute(
            "select title, wikipedia_title, wikipedia_id from read_parquet(?)"
            " where wikipedia_id <> '' order by page_id limit 1",
            [str(enwiki_out / "redirects.parquet")],
        ).fetchone()
    assert pages[target]["_id"] == wid
    via = [
        a
        for p in pages.values()
        for a in p["anchors"]
        if a["href"].replace("%20", " ").lower() == title.lower()
    ]
    assert all(a["wikipedia_title"] == target and a["wikipedia_id"] == wid for a in via)


def test_bulgarian_utf16_dump(tmp_path):
    out = tmp_path / "bg"
    manifest = build_from_dump([BGWIKI], out, workers=1, progress_seconds=0)
    assert manifest["wiki"] == "bgwiki" and manifest["skipped"] == {"namespace": 2}
    [page] = list(iter_page_file(out / "pages"))
    assert page["wikipedia_title"] == "Григориански календар"
    assert page["categories"] == "Календари"
    assert not any("Категория" in t for t in page["text"])
    assert not any("Файл:" in t or "мини|" in t for t in page["text"])
    assert page["history"]["url"].startswith("https://bg.wikipedia.org/w/index.php?")


@pytest.mark.full
def test_engines_and_workers_give_identical_bytes(tmp_path, tables_ms):
    outs = {}
    for name, options in {
        "pool1": {"workers": 1},
        "pool2": {"workers": 2},
        "ray2": {"workers": 2, "engine": "ray"},
    }.items():
        outs[name] = tmp_path / name
        build_from_dump(
            [tables_ms], outs[name], splits=3, progress_seconds=0, **options
        )
    digests = {name: shard_digests(out) for name, out in outs.items()}
    assert list(digests["pool1"]) == [
        f"part-{i:05d}-of-00003.jsonl.gz" for i in range(3)
    ]
    assert digests["pool1"] == digests["pool2"] == digests["ray2"]
    manifest = json.loads((outs["ray2"] / "manifest.json").read_text())
    assert manifest["pages"] == 5 and manifest["siteinfo"]["from_dump"] is False


def test_failing_page_is_listed_and_the_run_goes_on(tmp_path, tables_ms):
    out = tmp_path / "small"
    manifest = build_from_dump(
        [tables_ms], out, splits=2, workers=1, max_page_mb=0.05, progress_seconds=0
    )
    skipped = [
        json.loads(line) for line in (out / "skipped.jsonl").read_text().splitlines()
    ]
    assert skipped and all(s["reason"].startswith("too_large") for s in skipped)
    assert manifest["skipped"]["too_large"] == len(skipped)
    assert manifest["pages"] == 5 - len(skipped) > 0


def test_resume_skips_finished_splits(tmp_path, tables_ms):
    clean = tmp_path / "clean"
    build_from_dump([tables_ms], clean, splits=3, workers=1, progress_seconds=0)
    # what a killed run leaves: split 1 finished, split 2 half-written
    out = tmp_path / "resumed"
    work = out / "work"
    work.mkdir(parents=True)
    site = parse_siteinfo(read_header(tables_ms))
    plan = json.loads((clean / "manifest.json").read_text())["split_plan"]
    s = plan[1]
    run_split(
        SplitJob(
            1,
            str(work),
            site,
            PageOptions(10.0, 8_000_000, False),
            s["path"],
            s["start"],
            s["end"],
        )
    )
    (work / "map-00002.pickle.zst.tmp").write_bytes(b"partial")
    with pytest.raises(DumpBuildError, match="other inputs or settings"):
        (work / "plan.json").write_text("{}")
        build_from_dump([tables_ms], out, splits=3, workers=1, progress_seconds=0)
    (work / "plan.json").unlink()
    manifest = build_from_dump(
        [tables_ms], out, splits=3, workers=1, progress_seconds=0
    )
    assert manifest["run"]["resumed_splits"] == 1
    assert shard_digests(out) == shard_digests(clean)
    assert not (out / "work").exists()


@pytest.mark.full
def test_killed_run_started_again_gives_identical_shards(
    tmp_path, enwiki_ms, enwiki_out
):
    out = tmp_path / "killed"
    cmd = [
        sys.executable, "-m", "kilt_chunks.cli", "from-dump", str(enwiki_ms),
        "--out", str(out), "--splits", "4", "--workers", "1",
        "--progress-seconds", "0",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (out / "work" / "map-00000.side.json").exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "_SUCCESS").exists()
    manifest = build_from_dump(
        [enwiki_ms], out, splits=4, workers=1, progress_seconds=0
    )
    assert manifest["run"]["resumed_splits"] >= 1
    # same bytes as the uninterrupted 2-worker build
    assert shard_digests(out) == shard_digests(enwiki_out)
    with gzip.open(out / "pages" / "part-00000-of-00004.jsonl.gz", "rt") as f:
        assert json.loads(f.readline())["wikipedia_title"] == "Anarchism"


def test_bad_arguments_are_clear_errors(tmp_path, enwiki_ms):
    with pytest.raises(DumpBuildError, match="no such dump file"):
        build_from_dump([tmp_path / "missing.xml.bz2"], tmp_path / "o")
    with pytest.raises(DumpBuildError, match="unknown engine"):
        build_from_dump(
            [enwiki_ms], tmp_path / "o2", engine="spark", progress_seconds=0
        )


def test_part_files_with_their_indexes(tmp_path, tables_ms):
    from kilt_chunks.dump.multistream import index_path_for

    # two part files, each a multistream file with its own header and index
    part2 = multistream(tmp_path_factory_of(tmp_path), BGWIKI, "bgparts", 1)
    out = tmp_path / "parts"
    manifest = build_from_dump(
        [tables_ms, part2],
        out,
        indexes=[index_path_for(tables_ms), index_path_for(part2)],
        splits=4,
        workers=1,
        progress_seconds=0,
    )
    assert manifest["pages"] == 5 + 1
    assert manifest["skipped"] == {"namespace": 2}
    plan = manifest["split_plan"]
    # dump order kept: the first file's splits, then the second's
    paths = [s["path"] for s in plan]
    first = paths.count(str(tables_ms))
    assert first >= 1 and paths == [str(tables_ms)] * first + [str(part2)] * (
        len(paths) - first
    )
    assert len(paths) > first  # no split crosses the two files
    titles = [p["wikipedia_title"] for p in iter_page_file(out / "pages")]
    assert titles[0] == "Constructive vote of no confidence"
    assert titles[-1] == "Григориански календар"


def test_ray_without_an_address_starts_its_own(monkeypatch):
    """With no --ray-address, Ray is started locally with the worker count
    (address "local"), not joined to a cluster a `ray start` left on the
    machine (which refuses num_cpus); with one, it is joined as given."""
    calls: list[dict] = []
    fake = types.SimpleNamespace(
        is_initialized=lambda: False,
        init=lambda **kw: calls.append(kw),
        shutdown=lambda: None,
    )
    monkeypatch.setitem(sys.modules, "ray", fake)
    build._Ray(3, None)
    build._Ray(3, "ray://head:10001")
    assert [(c.get("address"), c.get("num_cpus")) for c in calls] == [
        ("local", 3),
        ("ray://head:10001", None),
    ]


def test_a_finished_folder_is_reused_only_for_the_same_request(tmp_path, tables_ms):
    out = tmp_path / "done"
    first = build_from_dump([tables_ms], out, splits=2, workers=1, progress_seconds=0)
    again = build_from_dump([tables_ms], out, splits=2, workers=1, progress_seconds=0)
    assert again == first and first["request"]["inputs"] == [str(tables_ms)]
    with pytest.raises(DumpBuildError, match=r"finished run of other .*\(max_page_mb"):
        build_from_dump(
            [tables_ms], out, splits=2, workers=1, progress_seconds=0, max_page_mb=1
        )


def test_a_cut_plain_dump_is_one_line_naming_it(tmp_path):
    from dump_helpers import ENWIKI

    data = ENWIKI.read_bytes()
    for cut in (300_000, 1_000_000):  # inside the header's read, then later
        dump = tmp_path / f"cut{cut}.xml.bz2"
        dump.write_bytes(data[:cut])
        with pytest.raises(DumpBuildError, match=rf"^{dump}: Compressed file ended"):
            build_from_dump([dump], tmp_path / f"o{cut}", progress_seconds=0)
