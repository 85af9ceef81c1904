"""Carry every provenance entry of KILT task files onto a new snapshot.

For each entry: read its evidence on the old page
(:func:`kilt_chunks.reanchor.evidence.read_span`), find the pages of the new
snapshot that may hold it (same id, same title, the title's redirect:
:meth:`kilt_chunks.reanchor.pages.Snapshot.candidates`), locate the evidence
there (:func:`kilt_chunks.reanchor.locate.locate`) and give the entry the new
page's id, title and offsets. An entry that cannot be carried is *lost*
(``lost_page``: no page of the new snapshot; ``lost_text``: the pages are
there but the evidence is not; ``invalid``: it named no evidence in the old
snapshot either), and so is its whole evidence set: an evidence set of KILT
is the pages needed together, so a set missing a member is no longer gold,
and the output keeps its answer without ``provenance``.
"""

from __future__ import annotations

import copy
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

from kilt_chunks.reanchor.evidence import PageText, ProvenanceSpan, SpanError, read_span
from kilt_chunks.reanchor.locate import (
    CONTEXT_CHARS,
    FUZZY_THRESHOLD,
    Match,
    NormalisedText,
    locate,
    normalise,
)
from kilt_chunks.reanchor.pages import Snapshot

__all__ = ["EntryResult", "LOST", "MAPPED", "Mapper", "Status", "rewrite_entry"]

Status = Literal[
    "exact", "normalised", "fuzzy", "page", "lost_page", "lost_text", "invalid"
]
#: Statuses of an entry carried onto the new snapshot.
MAPPED = ("exact", "normalised", "fuzzy", "page")
#: Statuses of an entry that is not.
LOST = ("lost_page", "lost_text", "invalid")

#: Normalised pages kept in memory (least recently used dropped): 512 pages
#: of 40,000 characters are about 100 MB.
NORMALISED_PAGES_KEPT = 512

_LEADING_MARKUP = re.compile(r"(?:BULLET::::(?:-|[0-9]+\.)? ?|\s)*")
_HEADING = "Section::::"


@dataclass(frozen=True)
class EntryResult:
    """What became of one provenance entry (offsets: KILT's, in the new page)."""

    status: Status
    kind: str | None = None
    reason: str | None = None
    via: str | None = None
    evidence_chars: int | None = None
    wikipedia_id: str | None = None
    title: str | None = None
    start_paragraph_id: int | None = None
    start_character: int | None = None
    end_paragraph_id: int | None = None
    end_character: int | None = None
    section: str | None = None
    score: float | None = None


def _section(page: PageText, paragraph: int) -> str:
    """The heading paragraph above ``paragraph`` (without its newline), or
    ``Section::::Abstract.`` before the first heading (KILT's section names)."""
    for p in range(paragraph, 0, -1):
        if page.text[p].startswith(_HEADING):
            return page.text[p].rstrip("\n")
    return _HEADING + "Abstract."


def _new_offsets(
    span: ProvenanceSpan, old: PageText, match: Match, page: PageText
) -> tuple[int, int, int, int]:
    """KILT offsets of ``match`` in ``page``, in the old span's conventions."""
    start, end = match.start, match.end
    if match.kind != "exact":
        # Give back what normalising dropped at the ends, when the old span had
        # it: white space up to its paragraph's end, markup from its start.
        if span.evidence[-1:].isspace():
            while end < len(page.joined) and page.joined[end].isspace():
                end += 1
                if page.joined[end - 1] == "\n":
                    break
        sp, sc = page.start_position(start)
        if span.start_character == 0 and _LEADING_MARKUP.fullmatch(page.text[sp][:sc]):
            start -= sc
    sp, sc = page.start_position(start)
    ep, ec = page.end_position(end)
    assert span.start_paragraph_id is not None and span.end_paragraph_id is not None
    old_sp, old_ep = span.start_paragraph_id, span.end_paragraph_id
    # An old span that starts at its paragraph's end or ends at the next
    # paragraph's start keeps that spelling (self-mapping is the identity).
    if span.start_character == len(old.text[old_sp]) and sc == 0 and sp > 0:
        sp, sc = sp - 1, len(page.text[sp - 1])
    if span.end_character == 0 and old_ep > old_sp and ec == len(page.text[ep]):
        if ep + 1 < len(page.text):
            ep, ec = ep + 1, 0
    return sp, sc, ep, ec


@dataclass
class Mapper:
    """Map provenance entries from ``old`` pages onto ``new`` pages.

    Results are cached per (page, offsets, title, answer): a span repeated
    over outputs or queries is located once.
    """

    old: Snapshot
    new: Snapshot
    threshold: float = FUZZY_THRESHOLD
    _cache: dict[tuple, EntryResult] = field(default_factory=dict)
    _normalised: OrderedDict[str, NormalisedText] = field(default_factory=OrderedDict)

    def _norm(self, page: PageText) -> NormalisedText:
        """``normalise(page.joined)``, kept for the last
        :data:`NORMALISED_PAGES_KEPT` pages used (about 5 bytes per character)."""
        cache = self._normalised
        if page.wikipedia_id in cache:
            cache.move_to_end(page.wikipedia_id)
        else:
            cache[page.wikipedia_id] = normalise(page.joined)
            if len(cache) > NORMALISED_PAGES_KEPT:
                cache.popitem(last=False)
        return cache[page.wikipedia_id]

    def map_entry(self, entry: Any, answer: Any = None) -> EntryResult:
        """Map one provenance entry.

        Args:
            entry: The provenance object of a task file.
            answer: The output's ``answer`` (checked in fuzzy matches).

        Returns:
            The entry's status and, when mapped, its new id, title, offsets
            and score (100 for exact and normalised matches, the rapidfuzz
            ratio for fuzzy ones, None for page-level entries).
        """
        if not isinstance(entry, dict):
            return EntryResult("invalid", reason="provenance entry is not an object")
        raw_id = entry.get("wikipedia_id")
        old_id = None if raw_id is None else str(raw_id).strip()
        if not old_id:
            return EntryResult("invalid", reason="no wikipedia_id")
        key = (
            old_id,
            *(entry.get(k) for k in ("start_paragraph_id", "start_character")),
            *(entry.get(k) for k in ("end_paragraph_id", "end_character")),
            entry.get("title"),
            answer if isinstance(answer, str) else None,
        )
        if key not in self._cache:
            self._cache[key] = self._map(entry, old_id, answer)
        return self._cache[key]

    def _map(self, entry: dict, old_id: str, answer: Any) -> EntryResult:
        old_page = self.old.pages.get(old_id)
        try:
            span = read_span(entry, old_page)
        except SpanError as error:
            return EntryResult("invalid", reason=str(error))
        title = old_page.title if old_page else entry.get("title")
        candidates = self.new.candidates(
            old_id, title if isinstance(title, str) else None
        )
        if not candidates:
            return EntryResult(
                "lost_page", kind=span.kind, reason="no page in the new snapshot"
            )
        if span.kind == "page":
            page, via = candidates[0]
            return EntryResult(
                "page",
                kind="page",
                via=via,
                wikipedia_id=page.wikipedia_id,
                title=page.title,
            )
        assert old_page is not None
        joined = old_page.joined
        context = (
            joined[max(0, span.start - CONTEXT_CHARS) : span.start],
            joined[span.end : span.end + CONTEXT_CHARS],
        )
        expected = span.start / max(len(joined), 1)
        best: tuple[tuple[int, float], Match, PageText, str] | None = None
        rank = {"exact": 0, "normalised": 1, "fuzzy": 2}
        for page, via in candidates:
            match = locate(
                span.evidence,
                page,
                context=context,
                expected=expected,
                paragraphs=span.end_paragraph_id - span.start_paragraph_id + 1,  # type: ignore[operator]
                answer=answer if isinstance(answer, str) else None,
                threshold=self.threshold,
                norm_page=self._norm(page),
            )
            if match is None:
                continue
            order = (rank[match.kind], -match.score)
            if best is None or order < best[0]:
                best = (order, match, page, via)
            if match.kind == "exact":
                break
        if best is None:
            return EntryResult(
                "lost_text",
                kind=span.kind,
                evidence_chars=len(span.evidence),
                reason="evidence not found on "
                + ", ".join(f"{p.wikipedia_id} ({via})" for p, via in candidates),
            )
        _, match, page, via = best
        sp, sc, ep, ec = _new_offsets(span, old_page, match, page)
        if span.kind == "paragraphs":
            sc, ec = -1, -1
        return EntryResult(
            match.kind,
            kind=span.kind,
            via=via,
            evidence_chars=len(span.evidence),
            wikipedia_id=page.wikipedia_id,
            title=page.title,
            start_paragraph_id=sp,
            start_character=sc,
            end_paragraph_id=ep,
            end_character=ec,
            section=_section(page, sp),
            score=match.score,
        )


def rewrite_entry(entry: dict, result: EntryResult) -> dict:
    """The provenance entry pointing into the new snapshot (other keys kept).

    Args:
        entry: The original entry (not changed).
        result: Its mapped result (status in :data:`MAPPED`).

    Returns:
        A copy with the new ``wikipedia_id`` and ``title``, the four offsets
        for a span, and ``section`` when the entry had one.
    """
    out = copy.deepcopy(entry)
    out["wikipedia_id"] = result.wikipedia_id
    if "title" in out or result.title:
        out["title"] = result.title
    if result.status != "page":
        out["start_paragraph_id"] = result.start_paragraph_id
        out["start_character"] = result.start_character
        out["end_paragraph_id"] = result.end_paragraph_id
        out["end_character"] = result.end_character
        if out.get("section") is not None:
            out["section"] = result.section
    return out
