"""A chunk's exact token count, derived from the counts of its pieces.

The splitter has counted every piece it packs into a chunk; the chunk spans
need each chunk's own count. :class:`ChunkTokenCounter` derives it from the
piece counts, encoding only the short windows where pieces meet, instead of
encoding the chunk text a second time.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kilt_chunks.splitter.tokens import encodes_as_utf8

__all__ = ["ChunkTokenCounter"]

# A position ``a`` of a text is a *safe cut* when the character before it is an
# ASCII letter and the character at it is an ASCII non-letter (class below).
# The cl100k pre-tokenizer then always ends a pre-token at ``a``, and the text on
# either side pre-tokenizes as it does inside the whole (see ChunkTokenCounter).
_ASCII_NON_LETTER = r"[\x00-\x40\x5b-\x60\x7b-\x7f]"
_FIRST_SAFE_CUT = re.compile(r"[A-Za-z](?=" + _ASCII_NON_LETTER + ")")
_LAST_SAFE_CUT = re.compile(r"(?s:.*)[A-Za-z](?=" + _ASCII_NON_LETTER + ")")
# Counts of short strings (words, sentence joints) are cached up to this length
# and this many entries.
_CACHED_LENGTH = 24
_CACHE_ENTRIES = 500_000


class ChunkTokenCounter:
    r"""Exact token count of a chunk from the counts of the pieces it joins.

    A chunk is ``"".join(pieces).strip()``, and the splitter already counted
    every piece on its own. Counts do not simply add up, because pre-tokens
    change where pieces meet (``"end. "`` + ``"Next"``: ``" "`` is a pre-token of
    the first piece alone, ``" Next"`` one of the joined text). They add up
    across *safe cuts*: positions whose left character is an ASCII letter and
    whose right character is an ASCII non-letter.

    Why. tiktoken counts a text (no special token in it) as the sum, over the
    pre-tokens the cl100k regex finds, of each pre-token's BPE length. The
    regex is::

        '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
        ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s

    Its alternatives cover every character, so pre-tokens tile the text. The
    only ones that can hold a letter end with a letter and stop at the first
    non-letter (the contraction and the possessive letter run), so a pre-token
    ends at every safe cut. Matching at a pre-token start depends only on the
    text from there on (no look-behind, and ``$`` is the end of the text), so
    the part after a cut pre-tokenizes alone as inside the whole. The part
    before it does too: its last pre-token is a letter run ending at the cut,
    and no alternative looks past the end of a letter run. Hence
    ``count(x[:a] + x[a:]) == count(x[:a]) + count(x[a:])`` at every safe cut
    ``a``.

    So each piece's count splits into head (up to its first safe cut), middle
    and tail (from its last safe cut); the middle is exact as counted, and only
    the short windows from one piece's last cut to the next piece's first cut
    (and the chunk's stripped ends) are encoded, with a cache. Texts holding
    ``"<|"`` (special tokens, counted as such) or lone surrogates are counted
    directly.

    Args:
        count: The direct counter (:attr:`TokenCounter.count
            <kilt_chunks.splitter.tokens.TokenCounter>`).
    """

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        """Token count of ``text``; short texts come from a cache."""
        if len(text) > _CACHED_LENGTH:
            return self._count(text)
        n = self._cache.get(text)
        if n is None:
            if len(self._cache) >= _CACHE_ENTRIES:
                self._cache.clear()
            n = self._cache[text] = self._count(text)
        return n

    def count_chunk(self, pieces: list[tuple[str, int]], joined: str) -> int:
        """Token count of ``joined.strip()``, where ``joined = "".join(pieces)``.

        Args:
            pieces: ``(piece, count)`` pairs, each count that of the piece alone.
            joined: The pieces joined (the caller has it already).

        Returns:
            The exact cl100k_base token count of ``joined.strip()``.
        """
        if "<|" in joined or not encodes_as_utf8(joined):
            return self._count(joined.strip())
        count = self.count
        start = len(joined) - len(joined.lstrip())
        end = len(joined.rstrip())
        if len(pieces) == 1 and start == 0 and end == len(joined):
            return pieces[0][1]
        first_cut = _FIRST_SAFE_CUT.search
        last_cut = _LAST_SAFE_CUT.match
        # Sum of the piece counts, corrected window by window: a window runs
        # from the previous piece's last cut (or the chunk's start) to the next
        # piece's first cut (or the chunk's end) and replaces the tail and head
        # fragments (and any cut-less pieces) it covers, as counted alone.
        total = 0
        window_start = start
        window_alone = 0  # counts, as counted alone, of what the window covers
        window_is_tail = False  # the window is exactly the last piece's tail
        offset = 0
        for piece, n in pieces:
            first = first_cut(piece)
            if first is None:
                total += n
                window_alone += n
                window_is_tail = False
            else:
                head_end = first.end()
                # A first safe cut exists, so a last one does.
                tail_start = last_cut(piece).end()  # type: ignore[union-attr]
                total += n
                if window_start != 0 or offset != 0:
                    # (At the chunk's unstripped start the window is the head.)
                    total += count(joined[window_start : offset + head_end]) - (
                        window_alone + count(piece[:head_end])
                    )
                window_start = offset + tail_start
                window_alone = count(piece[tail_start:])
                window_is_tail = True
            offset += len(piece)
        if not (window_is_tail and end == offset):
            total += count(joined[window_start:end]) - window_alone
        return total
