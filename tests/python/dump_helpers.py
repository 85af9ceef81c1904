"""Shared helpers of the test_dump_* files: the bundled dumps, multistream
copies of them, and builds made once per session (shared by the pytest-xdist
workers under a file lock, as conftest.shared_build does for dbt builds)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from conftest import HANDMADE_TASK, Build, shared_build
from kilt_chunks.dump.build import build_from_dump
from kilt_chunks.dump.multistream import write_multistream_from_export

DUMPS = Path(__file__).resolve().parent / "fixtures" / "dumps"
ENWIKI = DUMPS / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
TABLES = DUMPS / "enwiki-table-markup.xml.bz2"
BGWIKI = DUMPS / "bgwiki-latest-pages-articles-shortened.xml.bz2"
#: What the English test dump holds (counted from its XML).
ENWIKI_ARTICLES = 106
ENWIKI_REDIRECTS = 99
ENWIKI_OTHER_NS = 1


def shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder shared by the session's pytest-xdist workers."""
    root = tmp_path_factory.getbasetemp()
    return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root


def multistream(
    tmp_path_factory: pytest.TempPathFactory,
    export: Path,
    name: str,
    pages_per_stream: int,
) -> Path:
    """A multistream copy of ``export`` in Wikimedia's layout (made once)."""
    from filelock import FileLock

    root = shared_root(tmp_path_factory) / "dumps"
    root.mkdir(exist_ok=True)
    dump = root / f"{name}-20160501-pages-articles-multistream.xml.bz2"
    index = root / f"{name}-20160501-pages-articles-multistream-index.txt.bz2"
    with FileLock(str(root / f"{name}.lock")):
        if not index.exists():
            write_multistream_from_export(export, dump, index, pages_per_stream)
    return dump


def shared_dump_build(
    tmp_path_factory: pytest.TempPathFactory, name: str, dump: Path, **options
) -> Path:
    """``build_from_dump`` once per session; returns its output folder."""
    from filelock import FileLock

    root = shared_root(tmp_path_factory)
    out = root / f"dump_build_{name}"
    with FileLock(str(root / f"dump_build_{name}.lock")):
        if not (out / "_SUCCESS").exists():
            shutil.rmtree(out, ignore_errors=True)
            build_from_dump([dump], out, progress_seconds=0, **options)
    return out


def enwiki_wikidata_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``pages/`` folder of the English test dump built once per session
    from a multistream copy (10 pages a stream, 4 splits, 2 workers) with the
    page_props fixture: pages with and without ``wikidata_info``."""
    dump = multistream(tmp_path_factory, ENWIKI, "enwiki100", 10)
    out = shared_dump_build(
        tmp_path_factory,
        "enwiki_wikidata",
        dump,
        splits=4,
        workers=2,
        page_props=DUMPS / "enwiki-latest-page_props-shortened.sql.gz",
    )
    return out / "pages"


def enwiki_dump_dbt_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """``dbt build`` of :func:`enwiki_wikidata_pages` with the handmade KILT
    task (its provenance models run on the from-dump pages), data tests
    included; built once per session (test_dump_dbt reads its chunks,
    test_provenance its provenance check)."""
    return shared_build(
        tmp_path_factory,
        "enwiki_dump_task",
        f"{enwiki_wikidata_pages(tmp_path_factory)}/",
        extra_vars={"kilt_tasks": str(HANDMADE_TASK)},
    )


def shard_digests(out: Path) -> dict[str, str]:
    """SHA-1 of every final shard, by file name."""
    return {
        p.name: hashlib.sha1(p.read_bytes()).hexdigest()
        for p in sorted((out / "pages").iterdir())
    }
