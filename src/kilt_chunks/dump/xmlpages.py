"""The ``<page>`` elements of a MediaWiki XML export, one at a time.

Two readers, both streaming (memory bounded by the largest page, not by the
input): :func:`pages_in_range` reads a byte range of a multistream ``.bz2``
(whole bz2 streams, each decompressed on its own) and :func:`pages_in_file`
reads a whole export (``.xml``, ``.xml.bz2``, ``.xml.gz``; any encoding that
the XML declaration or a byte-order mark names, e.g. UTF-16).
"""

from __future__ import annotations

import bz2
import gzip
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["RawPage", "open_dump", "pages_in_file", "pages_in_range", "read_header"]

_READ = 1 << 20


@dataclass(frozen=True)
class RawPage:
    """One ``<page>`` of the export, its latest revision only.

    Attributes:
        title: Full title (with namespace prefix).
        ns: Namespace number.
        page_id: ``<id>`` of the page.
        revid: ``<revision><id>``, or 0.
        parentid: ``<revision><parentid>``, or 0 (a page's first revision).
        timestamp: ``<revision><timestamp>`` (ISO 8601, UTC).
        redirect: Target title of ``<redirect title=...>``, or None.
        text: The wikitext of the revision.
    """

    title: str
    ns: int
    page_id: int
    revid: int
    parentid: int
    timestamp: str
    redirect: str | None
    text: str


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _page_of(elem: ET.Element) -> RawPage:
    fields: dict[str, str] = {}
    redirect = None
    for child in elem:
        name = _local(child.tag)
        if name == "revision":
            for r in child:
                rname = _local(r.tag)
                if rname in ("id", "parentid", "timestamp", "text"):
                    fields[f"rev_{rname}"] = r.text or ""
        elif name == "redirect":
            redirect = child.get("title")
        else:
            fields[name] = child.text or ""
    return RawPage(
        title=fields.get("title", ""),
        ns=int(fields.get("ns") or 0),
        page_id=int(fields.get("id") or 0),
        revid=int(fields.get("rev_id") or 0),
        parentid=int(fields.get("rev_parentid") or 0),
        timestamp=fields.get("rev_timestamp", ""),
        redirect=redirect,
        text=fields.get("rev_text", ""),
    )


def _pages_from_events(parser: ET.XMLPullParser) -> Iterator[RawPage]:
    for event, elem in parser.read_events():  # type: ignore[misc]
        if (
            event == "end"
            and isinstance(elem, ET.Element)
            and _local(elem.tag) == "page"
        ):
            yield _page_of(elem)
            elem.clear()


def open_dump(path: Path) -> IO[bytes]:
    """The bytes of an export, decompressed by its suffix (``.bz2``, ``.gz``)."""
    if path.name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def read_header(path: Path, limit: int = 1 << 22) -> str:
    """The text of an export before its first ``<page>`` (root and siteinfo).

    Args:
        path: The export (any suffix :func:`open_dump` reads).
        limit: Bytes of decompressed text to look at, at most.

    Raises:
        ValueError: If no ``<page>`` starts within ``limit`` bytes.
    """
    with open_dump(path) as f:
        head = f.read(limit)
    encoding = "utf-8"
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        encoding = "utf-16"
    text = head.decode(encoding, errors="ignore")
    end = text.find("<page>")
    if end < 0:
        raise ValueError(f"{path}: no <page> in its first {limit:,} bytes")
    return text[:end]


def pages_in_file(path: Path) -> Iterator[RawPage]:
    """Every page of a whole export, in file order (one reader, streaming)."""
    with open_dump(path) as f:
        for _, elem in ET.iterparse(f, events=("end",)):
            if _local(elem.tag) == "page":
                yield _page_of(elem)
                elem.clear()


def pages_in_range(path: Path, start: int, end: int, xmlns: str) -> Iterator[RawPage]:
    """The pages of the bz2 streams in bytes ``[start, end)`` of a multistream
    dump.

    Args:
        path: The ``*-multistream.xml.bz2`` file.
        start: Offset of the first stream (from the index).
        end: Offset where the range's last stream ends (the next range's start
            or the file size).
        xmlns: The export's XML namespace (``{...}``) from the header, so the
            fragment parses as the dump does.

    Raises:
        OSError: If the range does not hold whole bz2 streams.
        xml.etree.ElementTree.ParseError: If the XML in the range is broken.
    """
    parser = ET.XMLPullParser(events=("end",))
    ns = xmlns.strip("{}")
    parser.feed(f'<mediawiki xmlns="{ns}">' if ns else "<mediawiki>")
    with path.open("rb") as f:
        f.seek(start)
        remaining = end - start
        decomp = bz2.BZ2Decompressor()
        pending = b""
        out: list[bytes] = []
        fed = False
        while True:
            if pending:
                chunk, pending = pending, b""
            elif remaining > 0:
                chunk = f.read(min(_READ, remaining))
                remaining -= len(chunk)
                if not chunk:
                    break
            else:
                break
            fed = True
            out.append(decomp.decompress(chunk))
            if decomp.eof:
                pending = decomp.unused_data
                whole = b"".join(out)
                out, fed = [], False
                decomp = bz2.BZ2Decompressor()
                if whole.strip() != b"</mediawiki>":
                    parser.feed(whole)
                    yield from _pages_from_events(parser)
        if fed:
            raise OSError(f"{path}: bytes {start}-{end} end inside a bz2 stream")
    parser.feed("</mediawiki>")
    yield from _pages_from_events(parser)
    parser.close()
