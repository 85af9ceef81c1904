"""The ``<page>`` elements of a MediaWiki XML export, one at a time.

Two readers, both streaming (memory bounded by the largest page, not by the
input): :func:`pages_in_range` reads a byte range of a multistream ``.bz2``
(whole bz2 streams, each decompressed on its own) and :func:`pages_in_file`
reads a whole export (``.xml``, ``.xml.bz2``, ``.xml.gz``; any encoding that
the XML declaration or a byte-order mark names, e.g. UTF-16).
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import html
import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = [
    "DumpXmlError",
    "IndexMismatchError",
    "RawPage",
    "UnreadablePage",
    "open_dump",
    "pages_in_file",
    "pages_in_range",
    "read_header",
    "read_pages",
]

_READ = 1 << 20
#: Bytes read at a time while looking for the end of an export's header.
_HEADER_READ = 1 << 16


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


class DumpXmlError(ValueError):
    """The XML of a dump is broken outside any page (between pages, or a
    page cut short by the end of the file): the document cannot be read on.

    Attributes:
        line: Line of the problem in the (decompressed) file, from 1.
        column: Byte column in that line, from 1.
    """

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message, line, column)
        self.message, self.line, self.column = message, line, column

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"


class IndexMismatchError(ValueError):
    """A byte range planned from a multistream index does not hold the pages
    the index says (offsets shifted, another dump's index, an index that
    stops early)."""

    def __init__(self, dump: str, message: str) -> None:
        super().__init__(dump, message)
        self.dump, self.message = dump, message

    def __str__(self) -> str:
        return f"{self.dump}: {self.message}"


@dataclass(frozen=True)
class UnreadablePage:
    """A ``<page>`` that cannot be read (broken XML inside it: invalid UTF-8,
    an undefined or external entity; or an ``<ns>``/``<id>`` that is not a
    number): skipped with its reason, the run goes on.

    Attributes:
        page_id: Its ``<id>`` when one can be read, else None.
        title: Its ``<title>`` when one can be read, else ``""``.
        reason: ``unreadable: <what>`` (with the line in the file).
    """

    page_id: int | None
    title: str
    reason: str


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _number(fields: dict[str, str], name: str, tag: str) -> int:
    value = fields.get(name) or "0"
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{tag} is {value[:40]!r}, not a number") from None


def _page_of(elem: ET.Element) -> RawPage:
    """The :class:`RawPage` of a ``<page>`` element.

    Raises:
        ValueError: If ``<ns>``, ``<id>`` or a revision id is not a number.
    """
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
        ns=_number(fields, "ns", "<ns>"),
        page_id=_number(fields, "id", "<id>"),
        revid=_number(fields, "rev_id", "<revision><id>"),
        parentid=_number(fields, "rev_parentid", "<parentid>"),
        timestamp=fields.get("rev_timestamp", ""),
        redirect=redirect,
        text=fields.get("rev_text", ""),
    )


_PAGE_OPEN = b"<page>"
_PAGE_CLOSE = b"</page>"
_ROOT_CLOSE = b"</mediawiki>"
_TITLE = re.compile(rb"<title>([^<]*)</title>")
_ID = re.compile(rb"<id>\s*(\d+)\s*</id>")
_ENCODING = re.compile(r"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)""")


class _PageScanner:
    """Cut a stream of XML bytes into its ``<page>...</page>`` elements
    without parsing them, so that one broken page is skipped alone (expat
    stops at its first error: a whole-document parse would stop the run).

    Between pages only white space and the closing ``</mediawiki>`` may
    stand. ``<`` inside text is always escaped in XML, so ``</page>`` ends
    the page it closes. Memory: one page plus one read.

    Args:
        skip_head: Ignore what comes before the first ``<page>`` (the root
            start tag and ``<siteinfo>``, read by :func:`read_header`).
    """

    def __init__(self, skip_head: bool) -> None:
        self.skip_head = skip_head
        self.closed = False  # </mediawiki> seen
        self.pages = 0

    def blobs(self, chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
        """``(line, bytes)`` of each page in order: the line the page starts
        on, and the page from ``<page>`` to ``</page>``.

        Raises:
            DumpXmlError: Text other than white space between pages, or a
                page the input ends inside.
        """
        buf = bytearray()
        pos = 0  # the first byte not yet consumed
        line = 1  # the line of buf[pos]
        inside = False
        search = 0  # where to look for </page> next
        for chunk in chunks:
            if pos:  # once a read (moving the rest once per page would be
                del buf[:pos]  # quadratic on a read of small pages)
                search -= pos
                pos = 0
            buf += chunk
            while True:
                if not inside:
                    start = buf.find(_PAGE_OPEN, pos)
                    if start >= 0:
                        keep = start
                        self._between(buf, pos, start, line)
                        if self.closed:
                            raise DumpXmlError(
                                "a <page> after </mediawiki>",
                                line + buf.count(b"\n", pos, start),
                                1,
                            )
                    elif self.skip_head and not self.pages:  # the header
                        keep = max(len(buf) - len(_PAGE_OPEN), pos)
                    else:  # white space goes (whole lines: columns stay
                        # right); other text waits to be checked
                        space = len(buf) - pos - len(buf[pos:].lstrip())
                        keep = max(buf.rfind(b"\n", pos, pos + space) + 1, pos)
                    line += buf.count(b"\n", pos, keep)
                    pos = keep
                    if start < 0:
                        break
                    inside, search = True, pos + len(_PAGE_OPEN)
                end = buf.find(_PAGE_CLOSE, search)
                if end < 0:
                    search = max(len(buf) - len(_PAGE_CLOSE), pos + len(_PAGE_OPEN))
                    break
                end += len(_PAGE_CLOSE)
                blob = bytes(buf[pos:end])
                yield line, blob
                self.pages += 1
                line += blob.count(b"\n")
                pos = end
                inside = False
        if inside:
            raise DumpXmlError(
                "the input ends inside this <page> (the file is cut short)", line, 1
            )
        self._between(buf, pos, len(buf), line)

    def _between(self, buf: bytearray, begin: int, end: int, line: int) -> None:
        """Check ``buf[begin:end]``, text outside pages (``line``: the line
        of ``buf[begin]``)."""
        if self.skip_head and not self.pages:
            return
        text = bytes(buf[begin:end])
        rest = text.strip()
        if not rest:
            return
        if not self.closed and rest.startswith(_ROOT_CLOSE):
            self.closed = True
            rest = rest[len(_ROOT_CLOSE) :].strip()
            if not rest:
                return
        offset = text.find(rest)
        before = text[:offset]
        column = offset - (before.rfind(b"\n") + 1) + 1
        raise DumpXmlError(
            f"text outside any <page>: {rest[:40].decode('utf-8', 'replace')!r}",
            line + before.count(b"\n"),
            column,
        )


def _parse_page(
    blob: bytes, line: int, prolog: bytes, epilog: bytes, text: str = "the file"
) -> RawPage | UnreadablePage:
    """Parse one ``<page>`` element (its own parser: an error stays in it);
    ``line`` is where it starts in ``text`` (for the reason)."""
    parser = ET.XMLParser()
    try:
        parser.feed(prolog)
        parser.feed(blob)
        parser.feed(epilog)
        root = parser.close()
    except ET.ParseError as exc:
        where, column = exc.position
        what = str(exc).rsplit(": line", 1)[0]
        if what == "undefined entity":  # name it: expat does not
            rest = (prolog + blob).split(b"\n")[where - 1][column:]
            name = re.match(rb"&[^;\s&<]{1,60};", rest)
            what += f" {name.group(0).decode('utf-8', 'replace')}" if name else ""
        return _unreadable(blob, f"{what} (line {line + where - 1} of {text})")
    try:
        return _page_of(root[0])
    except (ValueError, IndexError) as exc:
        return _unreadable(blob, f"{exc} (the page on line {line} of {text})")


def _unreadable(blob: bytes, what: str) -> UnreadablePage:
    title = _TITLE.search(blob)
    page_id = _ID.search(blob)
    return UnreadablePage(
        page_id=int(page_id.group(1)) if page_id else None,
        title=html.unescape(title.group(1).decode("utf-8", "replace")) if title else "",
        reason=f"unreadable: {what}"[:300],
    )


def _prolog(xmlns: str, encoding: str = "utf-8") -> bytes:
    ns = xmlns.strip("{}")
    root = f'<mediawiki xmlns="{ns}">' if ns else "<mediawiki>"
    decl = "" if encoding == "utf-8" else f'<?xml version="1.0" encoding="{encoding}"?>'
    return (decl + root).encode("ascii", "xmlcharrefreplace")


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
        ValueError: If no ``<page>`` starts within ``limit`` bytes (the
            message does not name the file: the caller does).
    """
    head = b""
    with open_dump(path) as f:
        # Read on only until the first page starts (a multistream dump's
        # header is one small stream): not ``limit`` bytes of pages.
        while len(head) < limit and (
            chunk := f.read(min(_HEADER_READ, limit - len(head)))
        ):
            head += chunk
            encoding = "utf-16" if head[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8"
            text = head.decode(encoding, errors="ignore")
            end = text.find("<page>")
            if end >= 0:
                return text[:end]
    raise ValueError(f"no <page> in its first {limit:,} bytes")


def _chunks(f: IO[bytes]) -> Iterator[bytes]:
    while chunk := f.read(_READ):
        yield chunk


def _utf8_chunks(first: bytes, f: IO[bytes], encoding: str) -> Iterator[bytes]:
    """``first`` then the bytes of ``f``, read in ``encoding``, as UTF-8 (for
    UTF-16 exports)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    for chunk in itertools.chain([first], _chunks(f)):
        yield decoder.decode(chunk).encode("utf-8")
    yield decoder.decode(b"", final=True).encode("utf-8")


def read_pages(
    path: Path, warn: Callable[[str], None] | None = None
) -> Iterator[RawPage | UnreadablePage]:
    """Every page of a whole export, in file order (one reader, streaming);
    a page that cannot be read comes as an :class:`UnreadablePage`.

    Args:
        path: The export (``.xml``, ``.xml.bz2``, ``.xml.gz``; UTF-8, UTF-16
            with its byte-order mark, or an encoding its XML declaration
            names).
        warn: Called with a one-line warning when the export is readable but
            not whole: no ``</mediawiki>`` after its last page (some
            published samples end so).

    Raises:
        DumpXmlError: Broken XML outside any page, or a page cut short at
            the end of the file (line and column in the decompressed file).
        EOFError: A ``.bz2``/``.gz`` cut short.
    """
    header = read_header(path)
    xmlns = _xmlns_of(header)
    scanner = _PageScanner(skip_head=True)
    with open_dump(path) as f:
        first = f.read(4)
        if first[:2] in (b"\xff\xfe", b"\xfe\xff"):
            chunks = _utf8_chunks(first, f, "utf-16")
            prolog = _prolog(xmlns)
        else:
            m = _ENCODING.match(header)
            encoding = m.group(1).lower() if m else "utf-8"
            encoding = "utf-8" if encoding in ("utf8", "utf-8") else encoding
            chunks = itertools.chain([first], _chunks(f))
            prolog = _prolog(xmlns, encoding)
        for line, blob in scanner.blobs(chunks):
            yield _parse_page(blob, line, prolog, b"</mediawiki>")
    if not scanner.closed and warn is not None:
        warn(
            f"{path}: no closing </mediawiki> after the last page"
            f" ({scanner.pages:,} pages read; accepted)"
        )


def pages_in_file(path: Path) -> Iterator[RawPage]:
    """Every page of a whole export, in file order (one reader, streaming).

    Raises:
        ValueError: If a page cannot be read (:func:`read_pages` lets the
            build skip it instead), or as :func:`read_pages`.
    """
    for page in read_pages(path):
        if isinstance(page, UnreadablePage):
            raise ValueError(f"{path}: page {page.page_id}: {page.reason}")
        yield page


def _xmlns_of(header: str) -> str:
    m = re.search(r"<mediawiki\b[^>]*?\bxmlns=\"([^\"]*)\"", header)
    return "{" + m.group(1) + "}" if m else ""


def pages_in_range(
    path: Path, start: int, end: int, xmlns: str, expected: int = 0
) -> Iterator[RawPage | UnreadablePage]:
    """The pages of the bz2 streams in bytes ``[start, end)`` of a multistream
    dump (a page that cannot be read comes as an :class:`UnreadablePage`).

    Args:
        path: The ``*-multistream.xml.bz2`` file.
        start: Offset of the first stream (from the index).
        end: Offset where the range's last stream ends (the next range's start
            or the file size).
        xmlns: The export's XML namespace (``{...}``) from the header, so the
            pages parse as the dump's do.
        expected: Pages the index lists in the range (0: not checked).

    Raises:
        IndexMismatchError: If the range does not hold whole bz2 streams of
            whole pages, or holds another number of pages than ``expected``:
            the index does not match the dump (or the dump is damaged).
    """
    prolog = _prolog(xmlns)
    scanner = _PageScanner(skip_head=False)
    where = f"bytes {start:,}-{end:,}"
    try:
        text = f"the streams at {where}"
        for line, blob in scanner.blobs(_streams(path, start, end)):
            yield _parse_page(blob, line, prolog, b"</mediawiki>", text)
    except (OSError, EOFError) as exc:
        raise IndexMismatchError(str(path), f"{where}: {exc}") from exc
    except DumpXmlError as exc:
        raise IndexMismatchError(
            str(path), f"{where} are not whole pages ({exc})"
        ) from exc
    if expected and scanner.pages != expected:
        raise IndexMismatchError(
            str(path),
            f"{where} hold {scanner.pages:,} pages where the index lists {expected:,}",
        )


def _streams(path: Path, start: int, end: int) -> Iterator[bytes]:
    """The decompressed bytes of the whole bz2 streams in ``[start, end)``.

    Raises:
        OSError: If the bytes are not bz2 data or end inside a stream.
    """
    with path.open("rb") as f:
        f.seek(start)
        remaining = end - start
        decomp = bz2.BZ2Decompressor()
        pending = b""
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
            yield decomp.decompress(chunk)
            if decomp.eof:
                pending = decomp.unused_data
                fed = False
                decomp = bz2.BZ2Decompressor()
        if fed:
            raise OSError("the range ends inside a bz2 stream")
