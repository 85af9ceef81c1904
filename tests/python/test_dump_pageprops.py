"""``--page-props``: Wikimedia's page_props.sql.gz read (escapes, NULLs,
several INSERT lines, errors with line numbers) and joined into the pages'
``wikidata_info``; same bytes whatever the engine."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dump_helpers import DUMPS, ENWIKI, multistream, shard_digests, shared_dump_build

from kilt_chunks.dump.build import DumpBuildError, build_from_dump
from kilt_chunks.dump.compare import iter_page_file
from kilt_chunks.dump.pageprops import (
    PagePropsError,
    PagePropsStats,
    iter_page_props,
    read_wikibase_items,
    unescape_mysql,
)

PAGE_PROPS = DUMPS / "enwiki-latest-page_props-shortened.sql.gz"
#: The articles of the English test dump that the fixture gives an item.
EXPECTED = {
    "12": "Q6199",
    "25": "Q38404",
    "39": "Q101038",
    "290": "Q9659",
    "303": "Q173",
    "305": "Q41746",
    "307": "Q91",
    "308": "Q868",
    "339": "Q132524",
    "358": "Q262",
}


@pytest.fixture(scope="module")
def enwiki_ms(tmp_path_factory):
    return multistream(tmp_path_factory, ENWIKI, "enwiki100", 100 // 10)


@pytest.fixture(scope="module")
def wikidata_out(tmp_path_factory, enwiki_ms):
    """The English dump built with the page_props fixture (pool, 2 workers)."""
    return shared_dump_build(
        tmp_path_factory,
        "enwiki_wikidata",
        enwiki_ms,
        splits=4,
        workers=2,
        page_props=PAGE_PROPS,
    )


def write_sql(tmp_path, text: bytes, name="p.sql.gz"):
    path = tmp_path / name
    path.write_bytes(gzip.compress(text))
    return path


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        (rb"'plain'", b"plain"),
        (rb"'it\'s'", b"it's"),
        (rb"'a''b'", b"a'b"),
        (rb"'back\\slash'", b"back\\slash"),
        (rb"'ends \\'", b"ends \\"),
        (rb"'\0\b\n\r\t\Z\"\%'", b'\0\b\n\r\t\x1a"%'),
        (rb"''", b""),
    ],
)
def test_unescape_mysql(literal, value):
    assert unescape_mysql(literal) == value


def test_fixture_rows_with_every_trap():
    stats = PagePropsStats()
    rows = list(iter_page_props(PAGE_PROPS, stats))
    assert stats.statements == 3 and stats.rows == len(rows) == 22
    assert stats.columns == ("pp_page", "pp_propname", "pp_value", "pp_sortkey")
    by_key = {(r["pp_page"], r["pp_propname"]): r for r in rows}
    sort = by_key[(b"12", b"defaultsort")]
    assert sort["pp_value"] == (
        b"Anarchism, 'the' \\\\ ),(25,'wikibase_item','Q1',NULL),("
    )
    assert sort["pp_sortkey"] is None
    assert by_key[(b"12", b"page_top_level_section_count")]["pp_sortkey"] == b"8"
    assert by_key[(b"39", b"defaultsort")]["pp_value"] == b"Albedo \\"
    title = by_key[(b"290", b"displaytitle")]["pp_value"]
    assert title == "A \u2014 \u201cletter\u201d ".encode() + b"\0 \n \t \x1a \xff"
    assert by_key[(b"99999999", b"wikibase_item")]["pp_sortkey"] == b"-1.5e-3"


def test_wikibase_items_of_the_fixture():
    stats = PagePropsStats()
    items = dict(read_wikibase_items(PAGE_PROPS, stats))
    # the articles, plus a redirect (10), a project page (724) and a page
    # not in the dump; the empty value of page 330 is left out and counted
    assert items == {
        **{int(k): v for k, v in EXPECTED.items()},
        10: "Q4690066",
        724: "Q4649451",
        99999999: "Q42",
    }
    assert (stats.items, stats.bad_items, stats.rows) == (13, 1, 22)


def test_columns_from_create_table_in_any_order(tmp_path):
    path = write_sql(
        tmp_path,
        b"CREATE TABLE `page_props` (\n  `pp_propname` varbinary(60) NOT NULL,\n"
        b"  `pp_sortkey` float DEFAULT NULL,\n  `pp_page` int(10) NOT NULL,\n"
        b"  `pp_value` blob NOT NULL,\n  PRIMARY KEY (`pp_page`,`pp_propname`)\n"
        b") ENGINE=InnoDB;\n"
        b"INSERT INTO `page_props` VALUES ('wikibase_item',NULL,7,'Q7'),"
        b"('x',1,8,'Q8');\n",
    )
    assert list(read_wikibase_items(path)) == [(7, "Q7")]


def test_statement_over_several_lines_and_plain_sql(tmp_path):
    path = tmp_path / "p.sql"
    path.write_bytes(
        b"INSERT INTO `page_props` VALUES (1,'wikibase_item','Q1',NULL),\n"
        b"(2,'wikibase_item','Q2',NULL);\n"
        b"INSERT INTO `other` VALUES (3,'wikibase_item','Q3',NULL);\n"
    )
    assert list(read_wikibase_items(path)) == [(1, "Q1"), (2, "Q2")]


@pytest.mark.parametrize(
    "statement",
    [
        b"INSERT INTO `page_props` VALUES (1,'wikibase_item','Q1');\n",  # 3 of 4
        b"INSERT INTO `page_props` VALUES (1,'wikibase_item','Q1',0)(2,'a','b',0);\n",
        b"INSERT INTO `page_props` VALUES (1,'wikibase_item','Q1\\',NULL);\n",  # open '
        b"INSERT INTO `page_props` VALUES (1,'wikibase_item','Q1',NULL); x;\n",
        b"INSERT INTO `page_props` VALUES (1,'wikibase_item','Q1',NULL),\n",  # no ;
    ],
)
def test_unreadable_statement_is_an_error_with_its_line(tmp_path, statement):
    path = write_sql(tmp_path, b"-- header\n" + statement)
    with pytest.raises(PagePropsError, match="line 2"):
        list(iter_page_props(path))


def test_pages_get_their_wikidata_ids(wikidata_out):
    pages = list(iter_page_file(wikidata_out / "pages"))
    assert len(pages) == 106
    got = {p["_id"]: p["wikidata_info"] for p in pages if "wikidata_info" in p}
    assert got == {k: {"wikidata_id": v} for k, v in EXPECTED.items()}
    # KILT's key order: wikidata_info after history
    assert list(pages[0]) == [
        "_id", "wikipedia_id", "wikipedia_title", "text", "anchors",
        "categories", "history", "wikidata_info",
    ]  # fmt: skip
    manifest = json.loads((wikidata_out / "manifest.json").read_text())
    assert manifest["wikidata"] == {
        "page_props": str(PAGE_PROPS),
        "page_props_rows": 22,
        "wikibase_items": 13,
        "bad_wikibase_items": 1,
        "pages_with_wikidata_id": 10,
    }
    [source] = [s for s in manifest["sources"] if s["path"] == str(PAGE_PROPS)]
    assert source["bytes"] == PAGE_PROPS.stat().st_size and len(source["sha1"]) == 40


def test_without_page_props_the_pages_are_unchanged(
    tmp_path_factory, enwiki_ms, wikidata_out
):
    plain = shared_dump_build(
        tmp_path_factory, "enwiki", enwiki_ms, splits=4, workers=2
    )
    assert json.loads((plain / "manifest.json").read_text())["wikidata"] is None
    for with_ids, without in zip(
        iter_page_file(wikidata_out / "pages"),
        iter_page_file(plain / "pages"),
        strict=True,
    ):
        with_ids.pop("wikidata_info", None)
        assert with_ids == without


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def ray_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A Ray cluster of one node, started as users start one (``ray start
    --head``) in processes of its own, with token authentication on (the
    default of Ray's local clusters since 2.59); yields its address. The
    local-mode Ray of test_dump_build is the other Ray path."""
    # The token is the test session's RAY_AUTH_TOKEN (conftest.py): Ray
    # caches the token a process read, so a token of this test's own would
    # break every later local Ray of the same worker process.
    assert os.environ.get("RAY_AUTH_TOKEN"), "conftest.py sets RAY_AUTH_TOKEN"
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    port = _free_port()
    head = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("ray")), "start", "--head",
            "--block", f"--port={port}", "--node-ip-address=127.0.0.1",
            "--num-cpus=2", "--include-dashboard=false",
            "--disable-usage-stats",
            f"--dashboard-agent-listen-port={_free_port()}",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, env=dict(os.environ),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        lines = []
        assert head.stdout is not None
        while time.monotonic() < deadline:
            line = head.stdout.readline()
            lines.append(line)
            if not line or "Ray runtime started" in line:
                break
        assert "Ray runtime started" in lines[-1], "".join(lines)
        yield f"127.0.0.1:{port}"
    finally:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)


@pytest.mark.full
def test_engines_give_identical_bytes_with_page_props(
    tmp_path, enwiki_ms, wikidata_out, ray_cluster
):
    """The pool and Ray tasks on a separately started cluster (the address
    path of ``--ray-address``) write the same bytes."""
    digests = {}
    for name, options in {
        "pool1": {"workers": 1},
        "ray_cluster": {"workers": 2, "engine": "ray", "ray_address": ray_cluster},
    }.items():
        out = tmp_path / name
        build_from_dump(
            [enwiki_ms], out, splits=4, progress_seconds=0, page_props=PAGE_PROPS,
            **options,
        )  # fmt: skip
        digests[name] = shard_digests(out)
    assert digests["pool1"] == digests["ray_cluster"] == shard_digests(wikidata_out)


def test_page_props_errors_are_clear(tmp_path, enwiki_ms):
    with pytest.raises(DumpBuildError, match="no such page_props file"):
        build_from_dump(
            [enwiki_ms], tmp_path / "o", page_props=tmp_path / "missing.sql.gz"
        )
    bad = write_sql(tmp_path, b"INSERT INTO `page_props` VALUES (1,'x');\n")
    with pytest.raises(DumpBuildError, match="page_props: .*line 1"):
        build_from_dump(
            [enwiki_ms], tmp_path / "o2", splits=2, workers=1, progress_seconds=0,
            page_props=bad,
        )  # fmt: skip


def test_a_cluster_that_refuses_the_driver_is_one_clear_error(
    tmp_path, enwiki_ms, monkeypatch
):
    import ray

    def refuse(**_options):
        raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.9:6379")

    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(DumpBuildError) as error:
        build_from_dump(
            [enwiki_ms], tmp_path / "o", workers=2, engine="ray",
            ray_address="10.0.0.9:6379", progress_seconds=0,
        )  # fmt: skip
    message = str(error.value)
    assert message.startswith("cannot connect to the Ray cluster at 10.0.0.9:6379")
    assert "RAY_AUTH_MODE=token" in message and "\n" not in message


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"not gzip at all", "Not a gzipped file"),
        (gzip.compress(b"this is garbage\n", mtime=0), "no row of table page_props"),
        (PAGE_PROPS.read_bytes()[:600], "Compressed file ended"),  # cut short
    ],
    ids=["not-gzip", "no-rows", "cut-short"],
)
def test_a_page_props_file_that_is_not_one_is_refused_naming_it(
    tmp_path, enwiki_ms, data, problem
):
    bad = tmp_path / "bad.sql.gz"
    bad.write_bytes(data)
    with pytest.raises(DumpBuildError, match=rf"^page_props: {bad}: .*{problem}"):
        build_from_dump(
            [enwiki_ms], tmp_path / "o", splits=2, workers=1, progress_seconds=0,
            page_props=bad,
        )  # fmt: skip
