"""The evidence of a KILT provenance entry, read from the page it names.

KILT's provenance entry (``start_paragraph_id``, ``start_character``,
``end_paragraph_id``, ``end_character``) indexes the page's paragraph list:
characters are Python string offsets (code points) into
``text[paragraph_id]``, the end exclusive, as KILT's
``kilt.kilt_utils.match_answer`` computes them (``paragraph.find(answer)``
and ``index + len(answer)``). A span over several paragraphs holds
``text[start][start_character:]``, every paragraph strictly between, and
``text[end][:end_character]``: the reading of the build's
``int_provenance_spans_checked`` model, whose checks are repeated here.
KILT writes ``-1`` for both characters where it found the paragraph but no
offsets (``match_answer`` without a tokenizer, or ``fast``): such an entry
names whole paragraphs.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Literal

__all__ = [
    "SpanKind",
    "PageText",
    "ProvenanceSpan",
    "SpanError",
    "read_span",
]

#: ``span``: offsets in paragraphs; ``paragraphs``: paragraph ids with both
#: characters ``-1`` (whole paragraphs); ``page``: no offsets at all (entity
#: linking: the page is the evidence).
SpanKind = Literal["span", "paragraphs", "page"]

_OFFSET_KEYS = (
    "start_paragraph_id",
    "start_character",
    "end_paragraph_id",
    "end_character",
)


class SpanError(ValueError):
    """A provenance entry that names no readable evidence (the message says why)."""


@dataclass(frozen=True)
class PageText:
    """One KILT page: its id, title and paragraphs, with absolute offsets.

    ``joined`` is ``"".join(text)``; ``starts[p]`` is where paragraph ``p``
    begins in it (code points), ``starts[-1]`` its length.
    """

    wikipedia_id: str
    title: str
    text: tuple[str, ...]

    @property
    def joined(self) -> str:
        """All paragraphs as one string (each keeps its own final newline).

        Joined again at each call (microseconds for a long page), not kept:
        a page's text is then held once, not twice.
        """
        return "".join(self.text)

    @property
    def starts(self) -> list[int]:
        """Start offset of each paragraph in :attr:`joined`, then its length."""
        return self.__dict__.setdefault(
            "_starts", [0, *accumulate(len(p) for p in self.text)]
        )

    def absolute(self, paragraph: int, character: int) -> int:
        """Offset in :attr:`joined` of ``text[paragraph][character]``."""
        return self.starts[paragraph] + character

    def start_position(self, offset: int) -> tuple[int, int]:
        """``(paragraph, character)`` of a span starting at ``offset``.

        Args:
            offset: 0 <= offset < len(joined).

        Returns:
            The paragraph holding the character at ``offset``.
        """
        paragraph = bisect.bisect_right(self.starts, offset) - 1
        return paragraph, offset - self.starts[paragraph]

    def end_position(self, offset: int) -> tuple[int, int]:
        """``(paragraph, character)`` of a span ending (exclusive) at ``offset``.

        Args:
            offset: 0 < offset <= len(joined).

        Returns:
            The paragraph holding the character before ``offset``, so an end
            at a paragraph boundary is the previous paragraph's length.
        """
        paragraph = bisect.bisect_left(self.starts, offset) - 1
        return paragraph, offset - self.starts[paragraph]


@dataclass(frozen=True)
class ProvenanceSpan:
    """A provenance entry read against its 2019 page.

    ``start`` and ``end`` are offsets in the page's :attr:`PageText.joined`
    (end exclusive); ``evidence`` is ``joined[start:end]``. For a ``page``
    entry they are 0 and the evidence is empty.
    """

    kind: SpanKind
    start: int
    end: int
    evidence: str
    start_paragraph_id: int | None
    start_character: int | None
    end_paragraph_id: int | None
    end_character: int | None


def _offsets(entry: dict[str, Any]) -> list[int | None]:
    values: list[int | None] = []
    for key in _OFFSET_KEYS:
        value = entry.get(key)
        if value is None:
            values.append(None)
        elif isinstance(value, bool) or not isinstance(value, int | float | str):
            raise SpanError(f"{key} {value!r} is not a number")
        else:
            try:
                number = float(value)
            except ValueError:
                raise SpanError(f"{key} {value!r} is not a number") from None
            if number != int(number):
                raise SpanError(f"{key} {value!r} is not a whole number")
            values.append(int(number))
    return values


def read_span(entry: dict[str, Any], page: PageText | None) -> ProvenanceSpan:
    """Read one KILT provenance entry against the page it names.

    Args:
        entry: The provenance object (``wikipedia_id``, the four offsets).
        page: The entry's page in the snapshot the offsets were made on, or
            None when that snapshot lacks it.

    Returns:
        The entry's kind, absolute offsets and evidence text.

    Raises:
        SpanError: The page is missing (for an entry with offsets), some but
            not all offsets are given, an offset is negative (other than
            KILT's ``-1`` pair) or beyond its paragraph or page, or the span
            is empty or reversed: the checks and messages of the build's
            ``int_provenance_spans_checked``.
    """
    sp, sc, ep, ec = _offsets(entry)
    if sp is None and sc is None and ep is None and ec is None:
        return ProvenanceSpan("page", 0, 0, "", None, None, None, None)
    if page is None:
        raise SpanError("page not in the old pages")
    if sp is None or ep is None or sc is None or ec is None:
        raise SpanError("incomplete span offsets (some missing)")
    n = len(page.text)
    if sp < 0 or ep < 0:
        raise SpanError("negative offset")
    if sp >= n:
        raise SpanError(f"start_paragraph_id {sp} beyond page ({n} paragraphs)")
    if ep >= n:
        raise SpanError(f"end_paragraph_id {ep} beyond page ({n} paragraphs)")
    if ep < sp:
        raise SpanError("empty or reversed span")
    if sc == -1 and ec == -1:
        start, end = page.starts[sp], page.starts[ep + 1]
        return ProvenanceSpan(
            "paragraphs", start, end, page.joined[start:end], sp, sc, ep, ec
        )
    if min(sc, ec) < 0:
        raise SpanError("negative offset")
    if sc > len(page.text[sp]):
        raise SpanError(
            f"start_character {sc} beyond paragraph {sp} ({len(page.text[sp])}"
            " characters)"
        )
    if ec > len(page.text[ep]):
        raise SpanError(
            f"end_character {ec} beyond paragraph {ep} ({len(page.text[ep])}"
            " characters)"
        )
    start, end = page.absolute(sp, sc), page.absolute(ep, ec)
    if end <= start:
        raise SpanError("empty or reversed span")
    return ProvenanceSpan("span", start, end, page.joined[start:end], sp, sc, ep, ec)
