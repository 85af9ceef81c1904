"""Find a piece of 2019 evidence text in a page of another snapshot.

Three tries, in order, each only if the one before found nothing:

1. **exact**: the evidence string, paragraph breaks included, occurs in the
   page's joined paragraphs (``str.find``).
2. **normalised**: it occurs after both sides are normalised by
   :func:`normalise` (white space, Unicode compatibility forms, quotes and
   dashes, and the markup residue that differs between extractions:
   ``BULLET::::``/``Section::::`` markers, wiki quote marks, ``[[``/``]]``,
   HTML entities, ``formula_N`` numbers, parentheses left empty by dropped
   templates). The new span covers exactly the page characters whose
   normalised form equals the normalised evidence.
3. **fuzzy**: rapidfuzz's ``partial_ratio_alignment`` (the best window of
   the page for the evidence, by normalised Indel similarity) over the
   paragraphs most like the evidence, then the window's ends moved to word
   boundaries to maximise ``fuzz.ratio``; accepted when that ratio is at
   least :data:`FUZZY_THRESHOLD`, the evidence has at least
   :data:`FUZZY_MIN_CHARS` normalised characters, and the output's answer,
   when it is a short string (at most :data:`ANSWER_GUARD_SHARE` of the
   evidence) inside the old evidence, is also in the new text (precision
   first).

Where the text occurs more than once, the occurrence whose surrounding text
is most like the old surroundings wins, then the one nearest the old
relative position.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from rapidfuzz import fuzz

from kilt_chunks.reanchor.evidence import PageText

__all__ = [
    "CONTEXT_CHARS",
    "FUZZY_MIN_CHARS",
    "FUZZY_THRESHOLD",
    "Match",
    "MatchKind",
    "NormalisedText",
    "locate",
    "normalise",
]

MatchKind = Literal["exact", "normalised", "fuzzy"]

#: Least ``fuzz.ratio`` (0-100) between the normalised evidence and the
#: normalised new text for a fuzzy match. Chosen from the measurements in
#: bench/RESULTS_REANCHOR.md (``bench/reanchor_bench.py``): sentences of the
#: sample edited by one to four words against the same sentences deleted or
#: replaced; the few deleted ones above it were restatements of the same
#: facts elsewhere on their page.
FUZZY_THRESHOLD = 85.0

#: Shortest normalised evidence (characters) a fuzzy match is tried for: a
#: short string (a name, a date) that is not found as it is was changed, and
#: a near miss is another fact.
FUZZY_MIN_CHARS = 40

#: An answer is checked in a fuzzy match when it is at most this share of the
#: evidence's length (a fact inside the evidence; a longer answer, such as an
#: NQ long answer, is the evidence itself and is judged by the ratio alone).
ANSWER_GUARD_SHARE = 0.5

#: Characters of surrounding text compared to choose between occurrences.
CONTEXT_CHARS = 80

#: Paragraphs of the new page tried as fuzzy windows (the most like the
#: evidence by shared words, plus the one at the old relative position).
FUZZY_CANDIDATES = 6

#: Word boundaries tried on each side of a fuzzy window (their pairs are
#: scored: at most this number squared ratios per window).
REFINE_POINTS = 15


@dataclass(frozen=True)
class Match:
    """Where the evidence is in the new page: ``joined[start:end]``, end exclusive."""

    kind: MatchKind
    start: int
    end: int
    score: float


@dataclass(frozen=True)
class NormalisedText:
    """A normalised string and, for each of its characters, the offset of the
    source character it came from (non-decreasing)."""

    text: str
    source: np.ndarray

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """Source offsets ``[s, e)`` of the normalised characters ``[start, end)``."""
        return int(self.source[start]), int(self.source[end - 1]) + 1


_TRANSLATE = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u0060\u00b4", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff\u00ad", ""),
    }
)


def _compatible(match: re.Match[str]) -> str:
    """NFKC and the quote/dash table of one character."""
    return unicodedata.normalize("NFKC", match.group()).translate(_TRANSLATE)


# (pattern, replacement): applied in order; a replacement is a string or a
# function of the match.
_STEPS: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    # Characters outside ASCII (and the backtick), one by one: NFKC, quotes,
    # dashes; zero-width characters and soft hyphens become nothing.
    (re.compile(r"[^\x00-\x5f\x61-\x7f]"), _compatible),
    (
        re.compile(r"&(?:[a-zA-Z]{2,8}|#[0-9]{1,6}|#[xX][0-9a-fA-F]{1,6});"),
        lambda m: html.unescape(m.group()).translate(_TRANSLATE),
    ),
    (re.compile(r"BULLET::::(?:-|[0-9]+\.)? ?|Section::::"), ""),
    (re.compile(r"''+|\[\[|\]\]"), ""),
    (re.compile(r"formula_[0-9]+"), "formula"),
    (re.compile(r"\s{2,}|[^\S ]"), " "),  # runs, and any other white space
    # Template residue: "( )", "(; born ...", "( , ...".
    (re.compile(r"\( ?[;,]? ?\)"), ""),
    (re.compile(r"\( ?[;,] ?"), "("),
    (re.compile(r" (?=[,.;:!?)\]])|(?<=[(\[]) "), ""),
    (re.compile(r"  +"), " "),
]


def _substitute(
    text: str,
    source: np.ndarray,
    pattern: re.Pattern[str],
    replacement: str | Callable[[re.Match[str]], str],
) -> tuple[str, np.ndarray]:
    """``pattern.sub`` that keeps each character's source offset; the
    characters of a replacement take the offset of the match's first one."""
    pieces: list[str] = []
    keep: list[np.ndarray] = []
    last = 0
    for match in pattern.finditer(text):
        start, end = match.span()
        new = replacement if isinstance(replacement, str) else replacement(match)
        if start == end or new == text[start:end]:
            continue
        pieces.append(text[last:start])
        keep.append(source[last:start])
        pieces.append(new)
        keep.append(np.full(len(new), source[start], dtype=np.int32))
        last = end
    if not pieces:
        return text, source
    pieces.append(text[last:])
    keep.append(source[last:])
    return "".join(pieces), np.concatenate(keep)


def normalise(text: str) -> NormalisedText:
    """Normalise ``text`` for comparison across extractions, keeping offsets.

    Steps: Unicode NFKC per character; typographic quotes to ``'``/``"``,
    dashes and minus to ``-``, zero-width characters and soft hyphens
    removed; HTML entities decoded; ``BULLET::::- ``, ``BULLET::::1. ``
    and ``Section::::`` markers, runs of two or more ``'`` (wiki
    italics/bold) and ``[[``/``]]`` removed; ``formula_N`` to ``formula``;
    white space runs (paragraph breaks included) to one space; parentheses
    left empty or opening with ``;``/``,`` by dropped templates cleaned;
    no space before ``,.;:!?)]`` or after ``([``; trimmed. Case is kept.

    Args:
        text: Any string (a page's joined paragraphs, an evidence string).

    Returns:
        The normalised string and each of its characters' source offset in
        ``text``.
    """
    out, source = text, np.arange(len(text), dtype=np.int32)
    for pattern, replacement in _STEPS:
        out, source = _substitute(out, source, pattern, replacement)
    stripped = out.strip()
    if stripped != out:
        first = len(out) - len(out.lstrip())
        source = source[first : first + len(stripped)]
        out = stripped
    return NormalisedText(out, source)


def _occurrences(needle: str, haystack: str) -> list[int]:
    found: list[int] = []
    at = haystack.find(needle)
    while at >= 0:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def _best_occurrence(
    spans: list[tuple[int, int]],
    page: PageText,
    context: tuple[str, str],
    expected: float,
) -> tuple[int, int]:
    """The occurrence whose surroundings are most like ``context``, then the
    nearest to ``expected`` (a relative position, 0 to 1)."""
    if len(spans) == 1:
        return spans[0]
    left, right = context
    joined = page.joined
    size = max(len(joined), 1)

    def key(span: tuple[int, int]) -> tuple[float, float]:
        start, end = span
        new_left = joined[max(0, start - CONTEXT_CHARS) : start]
        new_right = joined[end : end + CONTEXT_CHARS]
        similarity = fuzz.ratio(left[-len(new_left) :] if new_left else "", new_left)
        similarity += fuzz.ratio(right[: len(new_right)], new_right)
        return (-similarity, abs(start / size - expected))

    return min(spans, key=key)


_WORD = re.compile(r"\w+")


def _paragraph_words(
    page: PageText, norm_page: NormalisedText
) -> tuple[np.ndarray, list[set[str]]]:
    """Normalised offset of each paragraph start (and the end), and each
    paragraph's lower-cased words; computed once per page."""
    cached = norm_page.__dict__.get("_paragraph_words")
    if cached is None:
        par_starts = np.searchsorted(norm_page.source, np.asarray(page.starts))
        text = norm_page.text.lower()
        words = [
            set(_WORD.findall(text[par_starts[p] : par_starts[p + 1]]))
            for p in range(len(page.text))
        ]
        cached = norm_page.__dict__.setdefault("_paragraph_words", (par_starts, words))
    return cached


def _fuzzy(
    evidence: NormalisedText,
    page: PageText,
    norm_page: NormalisedText,
    paragraphs: int,
    expected: float,
    answer: str | None,
    threshold: float,
) -> tuple[int, int, float] | None:
    """The best fuzzy window ``[s, e)`` of ``norm_page`` and its ratio, or None."""
    needle = evidence.text
    if len(needle) < FUZZY_MIN_CHARS or not page.text:
        return None
    par_starts, par_words = _paragraph_words(page, norm_page)
    words = set(_WORD.findall(needle.lower()))
    n = len(page.text)
    overlap = [len(words & w) for w in par_words]
    ranked = sorted(range(n), key=lambda p: (-overlap[p], p))[:FUZZY_CANDIDATES]
    ranked.append(min(n - 1, int(expected * n)))
    best: tuple[float, int, int] | None = None
    tried: set[tuple[int, int]] = set()
    for p in ranked:
        if overlap[p] == 0:
            continue
        lo = int(par_starts[max(0, p - paragraphs)])
        hi = int(par_starts[min(n, p + paragraphs + 1)])
        if (lo, hi) in tried:
            continue
        tried.add((lo, hi))
        window = norm_page.text[lo:hi]
        if not window:
            continue
        aligned = fuzz.partial_ratio_alignment(
            needle, window, score_cutoff=threshold - 15
        )
        if aligned is None:
            continue
        start, end = lo + aligned.dest_start, lo + aligned.dest_end
        start, end, score = _refine(needle, norm_page.text, start, end)
        if best is None or score > best[0]:
            best = (score, start, end)
    if best is None or best[0] < threshold:
        return None
    score, start, end = best
    if answer:
        guard = normalise(answer).text.lower()
        if (
            guard
            and len(guard) <= len(needle) * ANSWER_GUARD_SHARE
            and guard in needle.lower()
            and guard not in norm_page.text[start:end].lower()
        ):
            return None
    return start, end, score


def _refine(needle: str, text: str, start: int, end: int) -> tuple[int, int, float]:
    """Move ``[start, end)`` to word boundaries within a quarter of the
    needle's length to maximise ``fuzz.ratio`` (ties: the shorter)."""
    reach = max(20, len(needle) // 4)

    def boundaries(lo: int, hi: int, at_start: bool) -> list[int]:
        lo, hi = max(0, lo), min(len(text), hi)
        points = [
            i
            for i in range(lo, hi + 1)
            if (at_start and (i == 0 or text[i - 1] == " "))
            or (not at_start and (i == len(text) or text[i] == " "))
        ]
        if not points:
            return [start if at_start else end]
        # At most REFINE_POINTS boundaries, the nearest to the window's end.
        centre = start if at_start else end
        return sorted(points, key=lambda i: abs(i - centre))[:REFINE_POINTS]

    starts = boundaries(start - reach, start + reach, True)
    ends = boundaries(end - reach, end + reach, False)
    best = (-1.0, start, end)
    for s in starts:
        for e in ends:
            if e <= s:
                continue
            score = fuzz.ratio(needle, text[s:e])
            if score > best[0] or (score == best[0] and e - s < best[2] - best[1]):
                best = (score, s, e)
    return best[1], best[2], best[0]


def locate(
    evidence: str,
    page: PageText,
    *,
    context: tuple[str, str] = ("", ""),
    expected: float = 0.0,
    paragraphs: int = 1,
    answer: str | None = None,
    threshold: float = FUZZY_THRESHOLD,
    norm_page: NormalisedText | None = None,
) -> Match | None:
    """Find ``evidence`` in ``page``: exact, normalised, then fuzzy.

    Args:
        evidence: The 2019 evidence text (may hold paragraph breaks).
        page: The page of the new snapshot.
        context: Up to :data:`CONTEXT_CHARS` characters before and after the
            evidence in the 2019 page, to choose between occurrences.
        expected: The evidence's relative position (0 to 1) in the 2019 page.
        paragraphs: Paragraphs the evidence runs over (fuzzy window size).
        answer: The output's answer; for a fuzzy match it must be in the new
            text if it was in the old (compared normalised, case-folded).
        threshold: Least fuzzy ratio (0-100).
        norm_page: ``normalise(page.joined)``, if already computed.

    Returns:
        The match (offsets in ``page.joined``) or None when the evidence is
        not there.
    """
    found = _occurrences(evidence, page.joined)
    if found:
        spans = [(s, s + len(evidence)) for s in found]
        start, end = _best_occurrence(spans, page, context, expected)
        return Match("exact", start, end, 100.0)
    needle = normalise(evidence)
    if not needle.text:
        return None
    norm = norm_page if norm_page is not None else normalise(page.joined)
    found = _occurrences(needle.text, norm.text)
    if found:
        spans = [norm.source_span(s, s + len(needle.text)) for s in found]
        start, end = _best_occurrence(spans, page, context, expected)
        return Match("normalised", start, end, 100.0)
    fuzzy = _fuzzy(needle, page, norm, paragraphs, expected, answer, threshold)
    if fuzzy is None:
        return None
    s, e, score = fuzzy
    start, end = norm.source_span(s, e)
    return Match("fuzzy", start, end, round(score, 2))
