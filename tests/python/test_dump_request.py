"""``DumpRequest``: every ``from-dump`` option declared once, the command
line made from it, and the reuse key: a finished folder is reused only for a
request equal in every option that decides the output."""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import fields

import pytest
from dump_helpers import DUMPS, ENWIKI, TABLES, multistream

from kilt_chunks.dump.build import build_from_dump
from kilt_chunks.dump.multistream import index_path_for
from kilt_chunks.dump.render import RENDERER_VERSION
from kilt_chunks.dump.request import (
    DumpBuildError,
    DumpRequest,
    add_request_arguments,
    request_from_args,
)

PAGE_PROPS = DUMPS / "enwiki-latest-page_props-shortened.sql.gz"

#: The options that decide the output bytes, listed here by hand (not read
#: from the fields' metadata): a field that stops refusing reuse fails.
DECIDES_OUTPUT = {
    "inputs",
    "indexes",
    "splits",
    "split_mb",
    "page_seconds",
    "max_page_mb",
    "namespace_aliases",
    "redirect_words",
    "keep_colon_links",
    "page_props",
}


@pytest.fixture(scope="module")
def tables_ms(tmp_path_factory):
    return multistream(tmp_path_factory, TABLES, "tables", 1)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, tables_ms):
    out = tmp_path_factory.mktemp("request") / "done"
    build_from_dump([tables_ms], out, splits=2, workers=1, progress_seconds=0)
    return out


def _variants(tables_ms, tmp_path) -> dict:
    """For each field, a value other than the finished build's."""
    moved = tmp_path / "moved"
    return {
        "inputs": (TABLES,),
        "out": moved,
        "indexes": (index_path_for(tables_ms),),
        "workers": 2,
        "engine": "ray",
        "ray_address": "ray://head:10001",
        "splits": 3,
        "split_mb": 1.0,
        "page_seconds": 5.0,
        "max_page_mb": 1.0,
        "progress_seconds": 5.0,
        "namespace_aliases": {"Bild": 6},
        "redirect_words": ("UMLEITUNG",),
        "keep_colon_links": True,
        "page_props": PAGE_PROPS,
        "keep_work": True,
    }


def test_each_option_that_decides_the_output_refuses_reuse(
    tmp_path, tables_ms, finished
):
    variants = _variants(tables_ms, tmp_path)
    assert set(variants) == {f.name for f in fields(DumpRequest)}, (
        "give every DumpRequest field a variant here"
    )
    base = {"inputs": (tables_ms,), "out": finished, "splits": 2, "workers": 1}
    base["progress_seconds"] = 0
    done = json.loads((finished / "manifest.json").read_text())
    shutil.copytree(finished, variants["out"])  # a moved folder is reused
    for name, value in variants.items():
        request = {**base, name: value}
        inputs, out = request.pop("inputs"), request.pop("out")
        if name in DECIDES_OUTPUT:
            with pytest.raises(DumpBuildError, match=rf"other inputs .*\({name}\)"):
                build_from_dump(inputs, out, **request)
        else:
            assert build_from_dump(inputs, out, **request) == done, name


def test_the_manifest_records_the_whole_request(finished, tables_ms):
    request = json.loads((finished / "manifest.json").read_text())["request"]
    assert request == {
        "inputs": [str(tables_ms)],
        "out": str(finished),
        "indexes": None,
        "workers": 1,
        "engine": "pool",
        "ray_address": None,
        "splits": 2,
        "split_mb": 32.0,
        "page_seconds": 10.0,
        "max_page_mb": 8.0,
        "progress_seconds": 0,
        "namespace_aliases": {},
        "redirect_words": [],
        "keep_colon_links": False,
        "page_props": None,
        "keep_work": False,
        "renderer_version": RENDERER_VERSION,
    }


def test_a_folder_finished_by_other_rendering_rules_is_not_reused(
    tmp_path, tables_ms, finished
):
    """A folder made by an older renderer (whose manifest records another
    renderer_version, or none, as before the version was recorded) holds
    other text for the same request: refused, naming the version."""
    out = tmp_path / "older"
    shutil.copytree(finished, out)
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["request"]["renderer_version"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DumpBuildError, match=r"other inputs .*\(renderer_version\)"):
        build_from_dump([tables_ms], out, splits=2, workers=1, progress_seconds=0)


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_request_arguments(parser)
    return request_from_args(parser.parse_args(argv))


def test_the_command_line_is_made_from_the_fields(tmp_path):
    request = _parse([str(ENWIKI), "-o", str(tmp_path / "o")])
    assert request == DumpRequest(inputs=(ENWIKI,), out=tmp_path / "o")
    assert (request.workers, request.split_mb, request.max_page_mb) == (2, 32.0, 8.0)
    request = _parse(
        [str(ENWIKI), "--out", "o", "--namespace-alias", "Bild=6",
         "--namespace-alias", "Abb=6", "--redirect-word", "UMLEITUNG",
         "--keep-colon-links", "--splits", "3", "--max-page-mb", "0.5"]
    )  # fmt: skip
    assert request.namespace_aliases == {"Abb": 6, "Bild": 6}
    assert request.redirect_words == ("UMLEITUNG",)
    assert request.keep_colon_links and request.splits == 3
    assert request.page_options().max_page_bytes == 500_000
    assert request.out.is_absolute()


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("workers", 0, "--workers: must be 1 or more"),
        ("splits", 0, "--splits: must be 1 or more"),
        ("split_mb", 0.0, "--split-mb: must be above 0"),
        ("max_page_mb", -1.0, "--max-page-mb: must be above 0"),
        ("page_seconds", -1.0, "--page-seconds: must be 0 or more"),
        ("engine", "spark", "--engine: unknown engine"),
    ],
)
def test_each_check_names_its_option(tmp_path, option, value, message):
    with pytest.raises(DumpBuildError, match=f"^{message}"):
        DumpRequest(inputs=(ENWIKI,), out=tmp_path / "o", **{option: value})
