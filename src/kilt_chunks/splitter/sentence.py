"""An exact, faster re-implementation of LlamaIndex's ``SentenceSplitter``.

:class:`FastSentenceSplitter` returns, for every input string, exactly the chunks
that ``llama_index.core.node_parser.SentenceSplitter(chunk_size=N,
chunk_overlap=0).split_text`` returns (pinned versions: llama-index-core 0.14.25,
nltk 3.10.4, tiktoken 0.14.0, rs-bpe 0.1.0). It is faster because it

* skips LlamaIndex's per-call callback / instrumentation machinery;
* replaces NLTK's general Punkt sentence tokenizer with a port specialised to the
  *untrained* ``PunktSentenceTokenizer()`` LlamaIndex uses (empty abbreviation,
  collocation, sentence-starter and orthographic tables), working on plain
  strings instead of ``PunktToken`` objects, but with NLTK's own compiled
  regular expressions, so the decisions are the same;
* counts tokens with rs-bpe (Rust bindings of GitHub's ``bpe-openai``), which
  gives tiktoken's exact ``cl100k_base`` counts about twice as fast per byte and
  with a far lower per-call cost, handling special tokens and lone surrogates
  as tiktoken does (:mod:`kilt_chunks.splitter.tokens`);
* counts less (stock encodes about 1.85 times the input, this about 1.1
  times): a text already known to be larger than the chunk size is not counted
  again when it is split further, counting stops once the chunk size is passed,
  the whole text is not counted when a cheap, provable lower bound on its token
  count already exceeds the chunk size, and a text whose UTF-8 length is at
  most the chunk size is not counted at all (a token covers at least one byte);
* derives each chunk's own token count (for the chunk spans) from the counts of
  its pieces instead of counting the chunk again
  (:mod:`kilt_chunks.splitter.chunk_tokens`).

Options (:mod:`kilt_chunks.splitter.options`):

* ``chunk_overlap``: every ``0 <= chunk_overlap < chunk_size`` is reproduced
  (``SentenceSplitter._merge``'s overlap: the trailing pieces of a chunk, as
  many as fit in ``chunk_overlap`` tokens, start the next one, and are dropped
  from its front while the next piece does not fit), with LlamaIndex's
  default separators and secondary chunking regex. With overlap 0 and
  ``cl100k_base`` the merge is the plain greedy packing (no piece counts 0
  tokens there, so the overlap step never carries one).
* ``tokenizer``: ``cl100k_base`` (the default, LlamaIndex's ``get_tokenizer()``
  unless a program installs its own with
  ``llama_index.core.set_global_tokenizer``) is counted by the fast path
  below; any other tokenizer (another tiktoken encoding, a Hugging Face
  ``tokenizer.json``) by the *generic path*: the same split and merge, every
  count a direct ``len(encode(text))`` with the callable stock is given, no
  lower bound, the byte bound only for tiktoken encodings, and the exact
  merge of stock for every overlap (a piece can count 0 tokens then).
* NLTK runs every Punkt regex under a wall-clock timeout
  (``nltk.redos.DEFAULT_TIMEOUT``, 5 s per call) and raises ``TimeoutError``
  beyond it; that needs pathological input many megabytes long, and this
  module has no such limit.
* tiktoken (and so stock) raises ``ValueError`` ("Max stack size exceeded for
  backtracking") on a run of about a million white-space characters followed
  by more text; this splitter splits such text (its chunks are what stock
  would give without that limit).
* There is no fallback to stock: apart from the failure above, no input class
  was found where the fast path differs (see
  ``tests/python/test_splitter_sentence.py``).

The stock splitter stays available as ``get_splitter("llama_index")``
(:mod:`kilt_chunks.splitter.stock`) for differential testing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kilt_chunks.defaults import DEFAULT_CHUNK_SIZE
from kilt_chunks.splitter.chunk_tokens import ChunkTokenCounter
from kilt_chunks.splitter.options import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_TOKENIZER,
    check_chunk_overlap,
    is_tokenizer_file,
    tokenizer_function,
)
from kilt_chunks.splitter.punkt import UntrainedPunkt
from kilt_chunks.splitter.tokens import (
    FunctionTokenCounter,
    bytes_at_most,
    get_token_counter,
    token_lower_bound,
)

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "FastSentenceSplitter",
    "SplitterSettings",
    "check_chunk_size",
    "split_keep_separator",
]


# --- constants copied from llama_index/core/node_parser/text/sentence.py -------
PARAGRAPH_SEP = "\n\n\n"  # DEFAULT_PARAGRAPH_SEP
CHUNKING_RE = re.compile("[^,.;。？！]+[,.;。？！]?|[,.;。？！]")  # CHUNKING_REGEX
WORD_SEP = " "  # SentenceSplitter.separator default


def check_chunk_size(chunk_size: object) -> None:
    """Raise ``ValueError`` unless ``chunk_size`` is a positive ``int`` (not a
    ``bool``), naming the value."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        raise ValueError(f"chunk_size must be an int, got {chunk_size!r}")
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size}")


def split_keep_separator(text: str, sep: str) -> list[str]:
    """Source: ``llama_index.core.node_parser.text.utils.split_text_keep_separator``."""
    parts = text.split(sep)
    result = [sep + s if i > 0 else s for i, s in enumerate(parts)]
    return [s for s in result if s]


def _never(text: str, limit: int) -> bool:
    """The byte bound of a tokenizer without one: never decides."""
    return False


class _DirectChunkCounter:
    """A chunk's token count, counted directly (the generic path)."""

    def __init__(self, count: Callable[[str], int]) -> None:
        self.count = count

    def count_chunk(self, pieces: list[tuple[str, int]], joined: str) -> int:
        return self.count(joined.strip())


def piece_offsets(text: str, pieces: list[tuple[str, int]]) -> list[int]:
    """Where each piece of ``text``'s split starts in ``text`` (code points).

    The pieces are substrings of ``text`` in order and do not overlap; where
    Punkt leaves out white space before a sentence, the next piece starts
    with a non-white-space character, so the first occurrence from the end of
    the previous piece is the piece's own.

    Raises:
        ValueError: A piece is not found (the split is not of ``text``).
    """
    offsets = []
    position = 0
    for piece, _ in pieces:
        if not text.startswith(piece, position):
            found = text.find(piece, position)
            if found < 0:
                raise ValueError(
                    f"piece {piece[:40]!r} not found after character {position}"
                )
            position = found
        offsets.append(position)
        position += len(piece)
    return offsets


class SplitterSettings:
    """The three settings of a splitter, checked and kept; a splitter pickles
    as its constructor call with them (worker processes rebuild the
    tokenizer hooks instead of pickling them).

    Args:
        chunk_size: Chunk size in tokens (> 0).
        chunk_overlap: Tokens of overlap, ``0 <= chunk_overlap < chunk_size``.
        tokenizer: Tokenizer name or ``tokenizer.json`` path.

    Raises:
        ValueError: ``chunk_size`` or ``chunk_overlap`` is out of range.
    """

    def __init__(self, chunk_size: int, chunk_overlap: int, tokenizer: str) -> None:
        check_chunk_size(chunk_size)
        check_chunk_overlap(chunk_overlap, chunk_size)
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.tokenizer = tokenizer

    def __reduce__(self) -> tuple[type[SplitterSettings], tuple[int, int, str]]:
        """Pickle as the constructor call of this splitter's class."""
        return (type(self), (self.chunk_size, self.chunk_overlap, self.tokenizer))


class FastSentenceSplitter(SplitterSettings):
    """Byte-identical, faster ``SentenceSplitter(chunk_size, chunk_overlap,
    tokenizer)``.

    Source: ``llama_index/core/node_parser/text/sentence.py`` (``_split_text``,
    ``_split``, ``_get_splits_by_fns``, ``_merge``, ``_postprocess_chunks``) and
    ``.../text/utils.py`` (the split functions), with NLTK Punkt reproduced by
    :class:`~kilt_chunks.splitter.punkt.UntrainedPunkt` and token counts from
    tiktoken ``cl100k_base`` (or the tokenizer given).

    Args:
        chunk_size: Maximum chunk size in tokens (as in LlamaIndex, chunks
            can come out a few tokens larger, because pieces are counted
            separately). Must be > 0.
        chunk_overlap: SentenceSplitter's ``chunk_overlap`` in tokens,
            ``0 <= chunk_overlap < chunk_size``.
        tokenizer: A tokenizer name or ``tokenizer.json`` path
            (:mod:`kilt_chunks.splitter.options`).

    Attributes:
        counting: Which counting path runs: ``"fast"`` (rs-bpe
            ``cl100k_base`` with bounds) or ``"generic"`` (direct counts).

    Raises:
        ValueError: ``chunk_size`` is not a positive integer, ``chunk_overlap``
            not in range, or the tokenizer cannot be loaded.
    """

    #: Decides, without counting, that a text fits (a token covers >= 1 byte).
    _fits_in_bytes: Callable[[str, int], bool] = staticmethod(bytes_at_most)

    def __init__(
        self,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
        tokenizer: str = DEFAULT_TOKENIZER,
    ) -> None:
        super().__init__(chunk_size, chunk_overlap, tokenizer)
        self._punkt = UntrainedPunkt()
        if tokenizer == DEFAULT_TOKENIZER:
            counter = get_token_counter()
            self._count = counter.count
            self._count_upto = counter.count_upto
            self._chunk_counter: ChunkTokenCounter | _DirectChunkCounter = (
                ChunkTokenCounter(self._count)
            )
            self.counting = "fast"
            if chunk_overlap:
                self._merge = self._merge_overlapping  # type: ignore[method-assign]
            return
        encode = tokenizer_function(tokenizer)
        assert encode is not None
        generic = FunctionTokenCounter(
            encode, bytes_bound=not is_tokenizer_file(tokenizer)
        )
        self._count = generic.count
        self._count_upto = generic.count_upto
        self._chunk_counter = _DirectChunkCounter(self._count)
        self.counting = "generic"
        if not generic.bytes_bound:
            self._fits_in_bytes = _never
        self._fit_size = self._fit_size_generic  # type: ignore[method-assign]
        # A piece can count 0 tokens (white space under WordPiece): stock's
        # overlap step then carries it even with overlap 0.
        self._merge = self._merge_overlapping  # type: ignore[method-assign]

    def split_text(self, text: str) -> list[str]:
        """Split ``text`` into chunks of at most about ``chunk_size`` tokens.

        Args:
            text: Any string.

        Returns:
            The chunk strings, stripped, in text order; ``[""]`` for ``""`` and
            ``[]`` for whitespace-only text (both as LlamaIndex does).

        Raises:
            ValueError: "Single token exceeded chunk size", when one indivisible
                piece has more than ``chunk_size`` tokens (as LlamaIndex raises).

        Source: ``SentenceSplitter.split_text`` / ``_split_text``.
        """
        if text == "":
            return [text]
        chunk_size = self.chunk_size
        if self._fits_in_bytes(text, chunk_size) or self._fit_size(text) >= 0:
            stripped = text.strip()
            return [stripped] if stripped else []
        out = []
        for pieces in self._merge(self._split(text)):
            stripped = "".join(piece for piece, _ in pieces).strip()
            if stripped:
                out.append(stripped)
        return out

    def split_text_with_token_counts(self, text: str) -> list[tuple[str, int]]:
        """:meth:`split_text`, with each chunk's exact token count.

        Args:
            text: Any string.

        Returns:
            ``(chunk, n)`` pairs: the chunks of :meth:`split_text` and, for each,
            ``n = len(get_tokenizer()(chunk))`` (tiktoken ``cl100k_base``, all
            special tokens allowed; or the tokenizer given, counted directly),
            the same number a direct count gives, but for ``cl100k_base``
            mostly derived from the counts the splitter already made of the
            chunk's pieces (see
            :class:`~kilt_chunks.splitter.chunk_tokens.ChunkTokenCounter`), so
            the chunk text is not encoded a second time.

        Raises:
            ValueError: As :meth:`split_text`.
        """
        if text == "":
            return [(text, 0)]
        chunk_size = self.chunk_size
        counter = self._chunk_counter
        if self._fits_in_bytes(text, chunk_size):
            stripped = text.strip()
            return [(stripped, counter.count(stripped))] if stripped else []
        n = self._fit_size(text)
        if n >= 0:
            stripped = text.strip()
            if not stripped:
                return []
            return [(stripped, counter.count_chunk([(text, n)], text))]
        out = []
        for pieces in self._merge(self._split(text)):
            joined = "".join([piece for piece, _ in pieces])
            stripped = joined.strip()
            if stripped:
                out.append((stripped, counter.count_chunk(pieces, joined)))
        return out

    # -- internals ----------------------------------------------------------------

    def _fit_size(self, text: str) -> int:
        """Exact token count of ``text`` if it is <= chunk_size, else -1."""
        chunk_size = self.chunk_size
        # The bound counts about one pre-token per 5 characters of English, so
        # it rarely passes chunk_size below ~5 characters per token of the
        # limit; this length test only decides whether trying it is worth the
        # time (the result is exact either way).
        if len(text) > 5 * chunk_size and token_lower_bound(text, chunk_size) > (
            chunk_size
        ):
            return -1
        return self._count_upto(text, chunk_size)

    def _fit_size_generic(self, text: str) -> int:
        """:meth:`_fit_size` of the generic path: a direct count."""
        return self._count_upto(text, self.chunk_size)

    def _splits_by_fns(self, text: str) -> list[str]:
        """Source: ``SentenceSplitter._get_splits_by_fns`` (``is_sentence`` is not
        needed: ``_merge`` reads it only where it decides nothing, see
        :meth:`_merge_ranges`)."""
        if PARAGRAPH_SEP in text:
            splits = split_keep_separator(text, PARAGRAPH_SEP)
            if len(splits) > 1:
                return splits
        splits = self._punkt.sentences(text)
        if len(splits) > 1:
            return splits
        splits = CHUNKING_RE.findall(text)
        if len(splits) > 1:
            return splits
        splits = split_keep_separator(text, WORD_SEP)
        if len(splits) > 1:
            return splits
        return list(text)

    def _split(self, text: str) -> list[tuple[str, int]]:
        """Source: ``SentenceSplitter._split`` for a text already known to exceed
        chunk_size; returns ``(split text, token count)`` pairs."""
        splits = self._splits_by_fns(text)
        out: list[tuple[str, int]] = []
        single = len(splits) == 1
        for piece in splits:
            n = self._fit_size(piece)
            if n >= 0:
                out.append((piece, n))
            elif single:
                # Indivisible and oversized: _merge raises, as LlamaIndex does.
                out.append((piece, self._count(piece)))
            else:
                out.extend(self._split(piece))
        return out

    def _merge(self, splits: list[tuple[str, int]]) -> list[list[tuple[str, int]]]:
        """Source: ``SentenceSplitter._merge`` with ``chunk_overlap=0`` (greedy
        packing; ``is_sentence`` has no effect then). Returns each chunk as its
        ``(piece, token count)`` list; the caller joins and strips it and drops
        blank chunks (``_postprocess_chunks``)."""
        chunk_size = self.chunk_size
        chunks: list[list[tuple[str, int]]] = []
        cur: list[tuple[str, int]] = []
        cur_len = 0
        for split in splits:
            n = split[1]
            if n > chunk_size:
                raise ValueError("Single token exceeded chunk size")
            if cur and cur_len + n > chunk_size:
                chunks.append(cur)
                cur = []
                cur_len = 0
            cur.append(split)
            cur_len += n
        if cur:
            chunks.append(cur)
        return chunks

    def _merge_ranges(self, splits: list[tuple[str, int]]) -> list[tuple[int, int]]:
        """Source: ``SentenceSplitter._merge`` with any ``chunk_overlap``, on
        indexes: each chunk as the range ``[i, j)`` of ``splits`` it joins.

        When a chunk closes, its trailing splits, walked back from its end while
        their total stays within ``chunk_overlap`` (stopping at the first that
        does not fit), start the next chunk; before the next split is added,
        splits are dropped from that chunk's front while the split does not
        fit. A chunk always takes at least one new split. (``is_sentence``
        decides nothing: its test is reached only when the split fits or the
        chunk is new.)

        Raises:
            ValueError: "Single token exceeded chunk size", as LlamaIndex.
        """
        chunk_size = self.chunk_size
        overlap = self.chunk_overlap
        ranges: list[tuple[int, int]] = []
        start = 0  # first split of the current chunk; it ends at ``index``
        cur_len = 0
        new_chunk = True
        index = 0
        while index < len(splits):
            n = splits[index][1]
            if n > chunk_size:
                raise ValueError("Single token exceeded chunk size")
            if cur_len + n > chunk_size and not new_chunk:
                ranges.append((start, index))
                cur_len = 0
                first = index
                while first > start and cur_len + splits[first - 1][1] <= overlap:
                    first -= 1
                    cur_len += splits[first][1]
                start = first
                new_chunk = True
                continue
            if new_chunk:
                while start < index and cur_len + n > chunk_size:
                    cur_len -= splits[start][1]
                    start += 1
            cur_len += n
            index += 1
            new_chunk = False
        if not new_chunk:
            ranges.append((start, index))
        return ranges

    def _merge_overlapping(
        self, splits: list[tuple[str, int]]
    ) -> list[list[tuple[str, int]]]:
        """:meth:`_merge` for any overlap: :meth:`_merge_ranges` as piece lists."""
        return [splits[i:j] for i, j in self._merge_ranges(splits)]

    def split_text_with_spans(self, text: str) -> list[tuple[str, int, int, int]]:
        """:meth:`split_text_with_token_counts`, with where each chunk lies.

        Args:
            text: Any string.

        Returns:
            ``(chunk, num_tokens, start, end)`` per chunk: ``text[start:end] ==
            chunk`` (code points, end exclusive), found from the split itself,
            not by searching the chunk text, so it is exact when chunks overlap
            or repeat; ``[]`` for empty or white-space text.

        Raises:
            ValueError: As :meth:`split_text`, or (never seen) a chunk that is
                not one stretch of ``text``.
        """
        if not text or text.isspace():
            return []
        counter = self._chunk_counter
        if self._fits_in_bytes(text, self.chunk_size) or self._fit_size(text) >= 0:
            stripped = text.strip()
            start = len(text) - len(text.lstrip())
            n = counter.count(stripped)
            return [(stripped, n, start, start + len(stripped))]
        splits = self._split(text)
        offsets = piece_offsets(text, splits)
        out: list[tuple[str, int, int, int]] = []
        for i, j in self._merge_ranges(splits):
            pieces = splits[i:j]
            joined = "".join([piece for piece, _ in pieces])
            stripped = joined.strip()
            if not stripped:
                continue
            start = offsets[i] + len(joined) - len(joined.lstrip())
            end = start + len(stripped)
            if text[start:end] != stripped:
                raise ValueError(
                    f"chunk {len(out)} is not one stretch of the text "
                    f"(pieces {i}..{j - 1})"
                )
            out.append((stripped, counter.count_chunk(pieces, joined), start, end))
        return out
