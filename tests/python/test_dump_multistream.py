"""Multistream files and their index in Wikimedia's layout, split planning
from the index alone, and the two XML readers."""

from __future__ import annotations

import bz2

import pytest
from dump_helpers import (
    BGWIKI,
    ENWIKI,
    ENWIKI_ARTICLES,
    ENWIKI_OTHER_NS,
    ENWIKI_REDIRECTS,
    TABLES,
    multistream,
)

from kilt_chunks.dump.multistream import index_path_for, plan_splits, read_index
from kilt_chunks.dump.siteinfo import parse_siteinfo
from kilt_chunks.dump.xmlpages import (
    IndexMismatchError,
    pages_in_file,
    pages_in_range,
    read_header,
)


@pytest.fixture(scope="module")
def enwiki_ms(tmp_path_factory):
    """The English test dump as a multistream file, 10 pages per stream."""
    return multistream(tmp_path_factory, ENWIKI, "enwiki10", 10)


def test_layout_header_streams_footer(enwiki_ms):
    index = index_path_for(enwiki_ms)
    assert index.name == "enwiki10-20160501-pages-articles-multistream-index.txt.bz2"
    lines = bz2.decompress(index.read_bytes()).decode().splitlines()
    pages = list(pages_in_file(ENWIKI))
    assert (
        len(lines) == len(pages) == ENWIKI_ARTICLES + ENWIKI_REDIRECTS + ENWIKI_OTHER_NS
    )
    first = lines[0].split(":", 2)
    assert (int(first[1]), first[2]) == (pages[0].page_id, pages[0].title)
    data = enwiki_ms.read_bytes()
    offsets = sorted({int(line.split(":", 1)[0]) for line in lines})
    assert len(offsets) == 21  # 206 pages, 10 a stream
    # the first stream is the header alone, the last one the footer
    header = bz2.BZ2Decompressor().decompress(data[: offsets[0]]).decode()
    assert "<siteinfo>" in header and "<page>" not in header
    assert bz2.decompress(data[offsets[-1] :]).decode().endswith("</mediawiki>\n")


def test_part_file_index_names():
    part = ENWIKI.with_name(
        "enwiki-20190801-pages-articles-multistream1.xml-p10p30303.bz2"
    )
    assert (
        index_path_for(part).name
        == "enwiki-20190801-pages-articles-multistream-index1.txt-p10p30303.bz2"
    )


@pytest.mark.parametrize("n", range(1, 17))
def test_every_page_exactly_once(enwiki_ms, n):
    streams = read_index(index_path_for(enwiki_ms), enwiki_ms.stat().st_size)
    splits = plan_splits([(str(enwiki_ms), streams)], n)
    assert len(splits) == min(n, len(streams))
    assert [s.index for s in splits] == list(range(len(splits)))
    # contiguous, on stream boundaries, covering every stream
    assert splits[0].start == streams[0].offset
    assert splits[-1].end == enwiki_ms.stat().st_size
    for a, b in zip(splits, splits[1:], strict=False):
        assert a.end == b.start
    boundaries = {s.offset for s in streams}
    assert all(s.start in boundaries for s in splits)
    assert sum(s.pages for s in splits) == 206
    if n == 16:  # balanced: no split more than twice the mean
        mean = sum(s.nbytes for s in splits) / len(splits)
        assert max(s.nbytes for s in splits) < 2 * mean + max(x.size for x in streams)


def test_ranges_read_the_same_pages_as_the_file(enwiki_ms):
    site = parse_siteinfo(read_header(enwiki_ms))
    streams = read_index(index_path_for(enwiki_ms), enwiki_ms.stat().st_size)
    ids = []
    for split in plan_splits([(str(enwiki_ms), streams)], 7):
        got = list(pages_in_range(enwiki_ms, split.start, split.end, site.xmlns))
        assert len(got) == split.pages
        ids += [p.page_id for p in got]
    assert ids == [p.page_id for p in pages_in_file(ENWIKI)]


def test_range_not_on_a_stream_boundary_is_an_error(enwiki_ms):
    site = parse_siteinfo(read_header(enwiki_ms))
    streams = read_index(index_path_for(enwiki_ms), enwiki_ms.stat().st_size)
    with pytest.raises(IndexMismatchError, match="inside a bz2 stream"):
        list(
            pages_in_range(
                enwiki_ms, streams[0].offset, streams[1].offset - 5, site.xmlns
            )
        )


def test_siteinfo_of_each_dump():
    en = parse_siteinfo(read_header(ENWIKI))
    assert (en.dbname, en.lang, en.server) == (
        "enwiki",
        "en",
        "https://en.wikipedia.org",
    )
    assert en.from_dump and en.namespace_of("category") == 14
    assert en.namespace_of("Image") == 6  # canonical alias
    bg = parse_siteinfo(read_header(BGWIKI))  # UTF-16 little endian
    assert (bg.dbname, bg.sitename, bg.lang) == ("bgwiki", "Уикипедия", "bg")
    assert bg.namespace_of("Категория") == 14 and bg.namespace_of("Category") == 14
    tables = parse_siteinfo(read_header(TABLES))  # no <siteinfo>
    assert not tables.from_dump and tables.namespace_of("File") == 6


def test_utf16_file_reads_all_pages():
    pages = list(pages_in_file(BGWIKI))
    assert [(p.ns, p.title) for p in pages if p.ns == 0] == [
        (0, "Григориански календар")
    ]
    assert len(pages) == 3


def test_the_header_is_read_up_to_the_first_page_only(enwiki_ms, monkeypatch):
    """read_header decompressed 4 MB of a dump to find its header (a tenth
    of a second per run on a 1 MB stream dump, seconds on a plain
    pages-articles file read from its start); now it stops at the read that
    holds the first ``<page>``: here the header stream and the start of the
    first pages' stream, one 64 KB read."""
    from kilt_chunks.dump import xmlpages

    read = []
    real_open = xmlpages.open_dump

    class Counting:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def read(self, n=-1):
            data = self.f.read(n)
            read.append(len(data))
            return data

    monkeypatch.setattr(xmlpages, "open_dump", lambda path: Counting(real_open(path)))
    header = read_header(enwiki_ms)
    assert header.rstrip().endswith("</siteinfo>")
    assert read == [xmlpages._HEADER_READ]
    assert enwiki_ms.stat().st_size > 4 * xmlpages._HEADER_READ  # more was there
