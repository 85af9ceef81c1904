"""Where the map step's CPU goes, stage by stage (bench/RESULTS_DUMP.md).

On the articles of the bundled English test dump (106 pages, 5.7 MB of
article wikitext), each stage is timed alone in this process (CPU seconds,
``time.process_time``, best of ``--repeat`` runs) and given as MB of article
wikitext per second per core:

* ``bz2``: decompressing the dump file (its XML, redirects included);
* ``xml``: reading its ``<page>`` elements from the decompressed XML;
* ``pre-removal``: comments, ``<ref>``, templates and tables dropped by
  regular expressions (the renderer's first step);
* ``tokenize``: mwparserfromhell's C tokenizer on the pre-removed text;
* ``parse``: ``mwparserfromhell.parse`` (tokenizer, then its Python tree
  builder) on the pre-removed text: the ceiling of any renderer that walks
  mwparserfromhell's whole tree;
* ``before the parser``: the renderer's steps before it parses (pre-removal,
  plain links, hidden list marks and headings);
* ``parse, what the renderer gives it``: ``mwparserfromhell.parse`` on the
  output of those steps;
* ``render, parser alone``: ``render_wikitext`` with its shortcuts (plain
  links, hidden list marks and headings) turned off;
* ``render``: ``render_wikitext`` as shipped;
* ``json + gzip``: the rendered pages as JSON lines, gzip level 1 (what map
  shards were);
* ``map shard``: the rendered pages written as the map step writes them
  (``MapShardWriter``: pickles in one zstd stream).

Usage:
    python bench/render_stages.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import bz2
import io
import json
import re
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import mwparserfromhell
from mwparserfromhell.parser._tokenizer import CTokenizer

from kilt_chunks.dump import render
from kilt_chunks.dump.shards import MapShardWriter
from kilt_chunks.dump.siteinfo import parse_siteinfo
from kilt_chunks.dump.xmlpages import pages_in_file, read_header

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "tests/python/fixtures/dumps"
    / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)


def best_cpu(fn: Callable[[], object], repeat: int) -> float:
    """The least CPU seconds of ``repeat`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        fn()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    site = parse_siteinfo(read_header(FIXTURE))
    raw = FIXTURE.read_bytes()
    xml = bz2.decompress(raw)
    pages = [p for p in pages_in_file(FIXTURE) if p.ns == 0 and p.redirect is None]
    texts = [p.text for p in pages]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6

    def pre(text: str) -> str:
        return render._drop_nested(render._REF.sub("", render._COMMENT.sub("", text)))

    removed = [pre(t) for t in texts]
    given = [render._for_the_parser(t, render._Renderer(site))[0] for t in texts]
    rows = [render.render_page(p, site) for p in pages]

    plain_xml = Path(tempfile.mkdtemp()) / "enwiki.xml"
    plain_xml.write_bytes(xml)

    def read_xml() -> None:
        for _ in pages_in_file(plain_xml):
            pass

    def parser_alone() -> None:
        plain_links = render._Renderer.plain_links
        marks, headings = render._LIST_MARKS, render._PLAIN_HEADING
        render._Renderer.plain_links = lambda self, text: text  # type: ignore[method-assign]
        render._LIST_MARKS = render._PLAIN_HEADING = re.compile(r"(?!)")
        try:
            for t in texts:
                render.render_wikitext(t, site)
        finally:
            render._Renderer.plain_links = plain_links  # type: ignore[method-assign]
            render._LIST_MARKS, render._PLAIN_HEADING = marks, headings

    def json_gzip() -> None:
        out = io.BytesIO()
        z = zlib.compressobj(1)
        for row in rows:
            out.write(z.compress((json.dumps(row, ensure_ascii=False) + "\n").encode()))
        out.write(z.flush())

    def map_shard() -> None:
        with tempfile.TemporaryDirectory() as folder:
            with MapShardWriter(Path(folder) / "map.pickle.zst") as shard:
                for row in rows:
                    shard.write(row)

    stages: dict[str, Callable[[], object]] = {
        "bz2": lambda: bz2.decompress(raw),
        "xml": read_xml,
        "pre-removal": lambda: [pre(t) for t in texts],
        "tokenize": lambda: [CTokenizer().tokenize(t, 0, True) for t in removed],
        "parse": lambda: [
            mwparserfromhell.parse(t, skip_style_tags=True) for t in removed
        ],
        "before the parser": lambda: [
            render._for_the_parser(t, render._Renderer(site)) for t in texts
        ],
        "parse, what the renderer gives it": lambda: [
            mwparserfromhell.parse(t, skip_style_tags=True) for t in given
        ],
        "render, parser alone": parser_alone,
        "render": lambda: [render.render_wikitext(t, site) for t in texts],
        "json + gzip": json_gzip,
        "map shard": map_shard,
    }
    print(f"{len(pages)} articles, {mb:.2f} MB of wikitext; best of {args.repeat}")
    print("| stage | CPU s | MB of wikitext / s / core |")
    print("| --- | ---: | ---: |")
    for name, fn in stages.items():
        seconds = best_cpu(fn, args.repeat)
        print(f"| {name} | {seconds:.3f} | {mb / seconds:.2f} |")
    plain_xml.unlink()


if __name__ == "__main__":
    main()
