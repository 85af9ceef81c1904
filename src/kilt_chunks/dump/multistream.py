"""Wikimedia's multistream dumps: the index, split plans, and a writer.

A ``*-pages-articles-multistream.xml.bz2`` is a concatenation of bz2 streams:
the first holds ``<mediawiki>`` and ``<siteinfo>``, each next one 100
``<page>`` elements, the last ``</mediawiki>``. Its index
(``*-multistream-index.txt.bz2``) has one line per page,
``offset:page_id:title``, where ``offset`` is the byte offset of the stream
holding the page. Any run of whole streams can therefore be read on its own:
:func:`plan_splits` cuts the streams into ranges balanced by compressed bytes
from the index alone.
"""

from __future__ import annotations

import bz2
import html
import re
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MultistreamWriter",
    "Split",
    "Stream",
    "index_path_for",
    "plan_splits",
    "read_index",
    "write_multistream_from_export",
]


@dataclass(frozen=True)
class Stream:
    """One bz2 stream of pages: where it is and how many pages it holds."""

    offset: int
    size: int
    pages: int


@dataclass(frozen=True)
class Split:
    """A byte range of whole streams of one dump file (one shard's input).

    Attributes:
        index: The split's number (its shard is ``part-<index>``).
        path: The dump file.
        start: Offset of its first stream.
        end: End of its last stream (exclusive).
        pages: Pages the index lists in the range.
    """

    index: int
    path: str
    start: int
    end: int
    pages: int

    @property
    def nbytes(self) -> int:
        """Compressed bytes of the range."""
        return self.end - self.start


def index_path_for(dump: Path) -> Path:
    """The index Wikimedia publishes beside a multistream file
    (``...-multistream.xml.bz2`` -> ``...-multistream-index.txt.bz2``; part
    files ``...-multistream1.xml-p1p41242.bz2`` ->
    ``...-multistream-index1.txt-p1p41242.bz2``)."""
    name = dump.name.replace("multistream", "multistream-index", 1)
    return dump.with_name(name.replace(".xml", ".txt", 1))


def read_index(index: Path, dump_size: int) -> list[Stream]:
    """The streams of a multistream dump, from its index.

    Args:
        index: The ``offset:page_id:title`` file (``.bz2`` or plain text).
        dump_size: Size of the dump file in bytes (ends the last stream; the
            ``</mediawiki>`` stream after it is read and ignored).

    Returns:
        The page streams in file order.

    Raises:
        ValueError: If a line is not ``offset:page_id:title``, the offsets
            go backwards or past the dump's end, naming the line.
    """
    opener = bz2.open if index.name.endswith(".bz2") else open
    counts: dict[int, int] = {}
    last = -1
    with opener(index, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            head = line.split(":", 2)
            if len(head) < 3 or not head[0].isdigit():
                raise ValueError(
                    f"{index}, line {number}: not offset:page_id:title: {line!r}"
                )
            offset = int(head[0])
            if offset >= dump_size:
                raise ValueError(
                    f"{index}, line {number}: offset {offset:,} is past the end"
                    f" of the dump ({dump_size:,} bytes): the index does not"
                    " match the dump"
                )
            if offset < last:
                raise ValueError(f"{index}, line {number}: offset goes backwards")
            last = offset
            counts[offset] = counts.get(offset, 0) + 1
    offsets = sorted(counts)
    ends = offsets[1:] + [dump_size]
    return [Stream(o, e - o, counts[o]) for o, e in zip(offsets, ends, strict=True)]


def _cut(streams: list[Stream], n: int) -> list[tuple[int, int]]:
    """Stream index ranges [i, j) of about equal compressed bytes."""
    n = max(1, min(n, len(streams)))
    cum = [0]
    for s in streams:
        cum.append(cum[-1] + s.size)
    total = cum[-1]
    bounds = [0]
    for k in range(1, n):
        i = bisect_left(cum, total * k / n)
        i = min(max(i, bounds[-1] + 1), len(streams) - (n - k))
        bounds.append(i)
    bounds.append(len(streams))
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def plan_splits(files: list[tuple[str, list[Stream]]], n: int) -> list[Split]:
    """Cut the streams of one or more dump files into about ``n`` splits.

    Each split is a run of whole streams of one file, so every page is in
    exactly one split; splits are balanced by compressed bytes (the cost of a
    split is close to proportional to them). With several files, ``n`` is
    shared out in proportion to their bytes, each file getting at least one.

    Args:
        files: ``(path, streams)`` per dump file, in dump order.
        n: Splits wanted (at most one per stream).

    Returns:
        The splits in dump order, numbered from 0.
    """
    sizes = [sum(s.size for s in streams) for _, streams in files]
    total = sum(sizes) or 1
    splits: list[Split] = []
    for (path, streams), size in zip(files, sizes, strict=True):
        if not streams:
            continue
        share = max(1, round(n * size / total))
        for i, j in _cut(streams, share):
            run = streams[i:j]
            splits.append(
                Split(
                    index=len(splits),
                    path=path,
                    start=run[0].offset,
                    end=run[-1].offset + run[-1].size,
                    pages=sum(s.pages for s in run),
                )
            )
    return splits


class MultistreamWriter:
    """Write a multistream dump and its index in Wikimedia's layout.

    Args:
        dump: The ``.xml.bz2`` to write.
        index: The ``-index.txt.bz2`` to write.
        header: The text before the first ``<page>`` (``<mediawiki ...>`` and
            ``<siteinfo>``), written as the first stream.
        pages_per_stream: Pages per bz2 stream (Wikimedia: 100).
    """

    def __init__(
        self, dump: Path, index: Path, header: str, pages_per_stream: int = 100
    ) -> None:
        self.pages_per_stream = pages_per_stream
        self._dump = dump.open("wb")
        self._index_lines: list[str] = []
        self._pending: list[tuple[str, int, str]] = []
        self._index = index
        self._dump.write(bz2.compress(header.encode("utf-8")))

    def add_page(self, page_xml: str, page_id: int, title: str) -> None:
        """Append one ``<page>...</page>`` element (its text, indented as in
        the dumps)."""
        self._pending.append((page_xml, page_id, title))
        if len(self._pending) >= self.pages_per_stream:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        offset = self._dump.tell()
        self._dump.write(
            bz2.compress("".join(p for p, _, _ in self._pending).encode("utf-8"))
        )
        self._index_lines.extend(f"{offset}:{i}:{t}\n" for _, i, t in self._pending)
        self._pending = []

    def close(self) -> None:
        """Write the last page stream, the ``</mediawiki>`` stream and the
        index."""
        self._flush()
        self._dump.write(bz2.compress(b"</mediawiki>\n"))
        self._dump.close()
        with bz2.open(self._index, "wt", encoding="utf-8") as f:
            f.writelines(self._index_lines)


_PAGE = re.compile(r"[ \t]*<page>.*?</page>\n?", re.S)
_ID = re.compile(r"<id>(\d+)</id>")
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_DECL = re.compile(r"^\s*<\?xml[^>]*\?>\s*")


def write_multistream_from_export(
    export: Path, dump: Path, index: Path, pages_per_stream: int = 100
) -> int:
    """Rewrite a whole (small) export as a multistream dump with its index.

    The export is read into memory, decoded (UTF-8, or UTF-16 with its byte
    order mark) and written as UTF-8, as Wikimedia's dumps are.

    Returns:
        The number of pages written.
    """
    from kilt_chunks.dump.xmlpages import open_dump

    with open_dump(export) as f:
        raw = f.read()
    text = (
        raw.decode("utf-16") if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else raw.decode()
    )
    text = _DECL.sub("", text.replace("\r\n", "\n"))
    first = _PAGE.search(text)
    if first is None:
        raise ValueError(f"{export}: no <page> element")
    writer = MultistreamWriter(dump, index, text[: first.start()], pages_per_stream)
    count = 0
    for m in _PAGE.finditer(text):
        page = m.group(0)
        pid = _ID.search(page)
        title = _TITLE.search(page)
        if pid is None or title is None:
            raise ValueError(f"{export}: a <page> without <id> or <title>")
        writer.add_page(page, int(pid.group(1)), html.unescape(title.group(1)))
        count += 1
    writer.close()
    return count
