"""Wikidata ids of pages from Wikimedia's ``<wiki>-<date>-page_props.sql.gz``.

The file is a ``mysqldump`` of the table ``page_props`` (``pp_page``,
``pp_propname``, ``pp_value``, ``pp_sortkey``): a ``CREATE TABLE`` statement,
then extended ``INSERT INTO `page_props` VALUES (...),(...);`` statements,
one per line. Rows whose ``pp_propname`` is ``wikibase_item`` give the
Wikidata item (``Q42``) of page ``pp_page``.

Why a parser of our own: the PyPI packages that read these dumps are GPL
(``mwsql``, which this MIT project cannot take in) or a Lark grammar that is
slow and unmaintained (``mysqltotsv``), and DuckDB's SQL cannot run MySQL's
backslash-escaped strings. The grammar needed is small and fixed (what
``mysqldump`` writes for the values of an extended ``INSERT``), so it is one
regular expression per row, checked to cover every byte between ``VALUES``
and ``;`` (a row it cannot read is an error with its line number, never a
silent skip):

* a value is a quoted string ``'...'`` in which ``\\x`` escapes one byte
  (``\\'``, ``\\\\``, ``\\n``, ``\\0``, ... as MySQL's string literal
  rules, https://dev.mysql.com/doc/refman/8.0/en/string-literals.html) and
  ``''`` is a quote; ``NULL``; a number; or a hex literal ``0x...``;
* rows are ``(v,v,...)`` separated by ``,``; the statement ends in ``;``.

Column positions come from the dump's ``CREATE TABLE`` (Wikimedia's order
when it has none). The file is read as bytes (``pp_value`` is a blob, not
always UTF-8), line by line: memory is one ``INSERT`` statement (about 1 MB
in Wikimedia's dumps).
"""

from __future__ import annotations

import bz2
import gzip
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

__all__ = [
    "PagePropsError",
    "PagePropsStats",
    "iter_page_props",
    "read_wikibase_items",
    "unescape_mysql",
]

#: Wikimedia's column order of ``page_props`` (used when the dump has no
#: ``CREATE TABLE``).
DEFAULT_COLUMNS = ("pp_page", "pp_propname", "pp_value", "pp_sortkey")

#: A Wikidata item id.
QID = re.compile(r"Q[1-9][0-9]*")

# One value of a row: a quoted string (backslash escapes, '' for a quote),
# NULL, a number, or a hex literal. The string pattern is the "unrolled
# loop" form (no backtracking between its alternatives).
_VALUE = rb"'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'|NULL|0x[0-9A-Fa-f]*|[-+0-9.eE]+"
_ESCAPE = re.compile(rb"\\(.)|''", re.S)
_ESCAPES = {
    b"0": b"\0",
    b"b": b"\b",
    b"n": b"\n",
    b"r": b"\r",
    b"t": b"\t",
    b"Z": b"\x1a",
}
_COLUMN = re.compile(rb"^\s*`([^`]+)`\s")


class PagePropsError(ValueError):
    """The page_props dump holds a statement that cannot be read; the message
    gives the file, the line and what was found."""


@dataclass
class PagePropsStats:
    """What a read of the dump saw.

    Attributes:
        rows: Rows of ``page_props`` read (all property names).
        items: Rows whose property is ``wikibase_item`` with a valid ``Q`` id.
        bad_items: ``wikibase_item`` rows whose value is not a ``Q`` id
            (left out).
        statements: ``INSERT`` statements read.
    """

    rows: int = 0
    items: int = 0
    bad_items: int = 0
    statements: int = 0
    columns: tuple[str, ...] = field(default=DEFAULT_COLUMNS)


def unescape_mysql(quoted: bytes) -> bytes:
    """The bytes of a MySQL string literal as ``mysqldump`` writes it.

    Args:
        quoted: The literal with its quotes, e.g. ``b"'it\\\\'s'"``.

    Returns:
        Its value (``b"it's"``): ``\\0 \\b \\n \\r \\t \\Z`` as MySQL maps
        them, any other ``\\x`` as ``x``, ``''`` as ``'``.
    """
    body = quoted[1:-1]
    if b"\\" not in body and b"''" not in body:
        return body
    return _ESCAPE.sub(
        lambda m: b"'" if m.group(1) is None else _ESCAPES.get(m.group(1), m.group(1)),
        body,
    )


def _value(raw: bytes) -> bytes | None:
    if raw == b"NULL":
        return None
    if raw[:1] == b"'":
        return unescape_mysql(raw)
    if raw[:2] == b"0x":
        return bytes.fromhex(raw[2:].decode("ascii"))
    return raw


def _open(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    if path.suffix == ".bz2":
        return cast(IO[bytes], bz2.open(path, "rb"))
    return path.open("rb")


def _statements(f: IO[bytes], table: bytes) -> Iterator[tuple[bytes, int, bytes]]:
    """``(kind, first line number, statement)`` of the ``CREATE TABLE``
    (kind ``C``) and ``INSERT`` (kind ``I``, the text after ``VALUES``)
    statements of ``table``; other statements are skipped."""
    insert = b"INSERT INTO `" + table + b"` VALUES "
    create = b"CREATE TABLE `" + table + b"`"
    parts: list[bytes] = []
    start = 0
    kind = b""
    for number, line in enumerate(f, 1):
        if not parts:
            if line.startswith(insert):
                kind, start = b"I", number
                line = line[len(insert) :]
            elif line.startswith(create):
                kind, start = b"C", number
            else:
                continue
        parts.append(line)
        if line.rstrip().endswith(b";"):
            body = b"".join(parts).rstrip()
            parts = []
            yield kind, start, body
    if parts:
        raise PagePropsError(f"line {start}: statement without its final ';'")


def _raw_rows(
    path: Path, stats: PagePropsStats, table: str
) -> Iterator[tuple[bytes, ...]]:
    """The rows of ``table`` as tuples of their SQL literals (``b"'a\\'b'"``,
    ``b"NULL"``, ``b"12"``), in ``stats.columns`` order."""
    columns: tuple[str, ...] = DEFAULT_COLUMNS
    row_re: re.Pattern[bytes] | None = None
    with _open(path) as f:
        for kind, number, statement in _statements(f, table.encode()):
            if kind == b"C":
                names = [
                    m.group(1).decode()
                    for line in statement.splitlines()[1:]
                    if (m := _COLUMN.match(line))
                ]
                columns = tuple(names) or DEFAULT_COLUMNS
                row_re = None
                continue
            if row_re is None:
                stats.columns = columns
                row_re = re.compile(
                    rb"\s*\(\s*"
                    + rb"\s*,\s*".join([rb"(" + _VALUE + rb")"] * len(columns))
                    + rb"\s*\)\s*([,;])",
                    re.S,
                )
            stats.statements += 1
            pos = 0
            last = b","
            for m in row_re.finditer(statement):
                if m.start() != pos or last == b";":
                    break
                pos = m.end()
                last = m.group(len(columns) + 1)
                stats.rows += 1
                yield m.groups()[:-1]
            if last != b";" or statement[pos:].strip():
                raise PagePropsError(
                    f"{path}: line {number}: cannot read a {len(columns)}-column"
                    f" row of `{table}` at {statement[pos : pos + 60]!r}"
                )


def iter_page_props(
    path: Path, stats: PagePropsStats | None = None, table: str = "page_props"
) -> Iterator[dict[str, bytes | None]]:
    """Every row of ``table`` in a ``mysqldump`` file, as ``{column: value}``
    (values as bytes, numbers as their text, ``NULL`` as None).

    Args:
        path: ``.sql``, ``.sql.gz`` or ``.sql.bz2``.
        stats: Filled while reading (rows, statements, columns).
        table: The table whose ``INSERT`` statements are read.

    Raises:
        PagePropsError: A statement that does not parse (file and line
            named: a row of another width than the table's columns, a value
            that is no SQL literal, text after the final ``;``).
        OSError: The file cannot be read.
    """
    stats = stats if stats is not None else PagePropsStats()
    for raw in _raw_rows(path, stats, table):
        yield {c: _value(v) for c, v in zip(stats.columns, raw, strict=True)}


def read_wikibase_items(
    path: Path, stats: PagePropsStats | None = None
) -> Iterator[tuple[int, str]]:
    """``(page id, Q id)`` of every ``wikibase_item`` row, in file order.

    Values that are not a Wikidata item id (``Q`` and digits) are counted in
    ``stats.bad_items`` and left out.

    Raises:
        PagePropsError: See :func:`iter_page_props`; also a ``pp_page`` that
            is not an integer.
    """
    stats = stats if stats is not None else PagePropsStats()
    indexes: tuple[int, int, int] | None = None
    for raw in _raw_rows(path, stats, "page_props"):
        if indexes is None:
            try:
                indexes = tuple(  # type: ignore[assignment]
                    stats.columns.index(c) for c in DEFAULT_COLUMNS[:3]
                )
            except ValueError as exc:
                raise PagePropsError(
                    f"{path}: page_props without the columns {DEFAULT_COLUMNS[:3]}"
                ) from exc
        page_at, name_at, value_at = indexes  # type: ignore[misc]
        # mysqldump writes this name as it is (nothing in it to escape)
        if raw[name_at] != b"'wikibase_item'":
            continue
        page, value = _value(raw[page_at]), _value(raw[value_at]) or b""
        qid = value.decode("utf-8", "replace").strip()
        if not QID.fullmatch(qid):
            stats.bad_items += 1
            continue
        try:
            page_id = int(page or b"")
        except ValueError as exc:
            raise PagePropsError(f"{path}: pp_page {page!r} is no integer") from exc
        stats.items += 1
        yield page_id, qid
