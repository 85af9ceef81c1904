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

Scope and known differences:

* Only ``chunk_overlap=0`` (the only setting this project uses) is reproduced,
  with LlamaIndex's default separators and secondary chunking regex.
* The tokenizer is always tiktoken ``cl100k_base``, which is what LlamaIndex's
  ``get_tokenizer()`` gives unless a program installs its own with
  ``llama_index.core.set_global_tokenizer``; then stock follows that one.
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
  ``tests/python/test_fast_splitter.py``).

The stock splitter stays available as ``get_splitter("llama_index")``
(:mod:`kilt_chunks.splitter.stock`) for differential testing.
"""

from __future__ import annotations

import re

from kilt_chunks.splitter.chunk_tokens import ChunkTokenCounter
from kilt_chunks.splitter.punkt import UntrainedPunkt
from kilt_chunks.splitter.tokens import (
    bytes_at_most,
    get_token_counter,
    token_lower_bound,
)

__all__ = ["FastSentenceSplitter", "check_chunk_size", "split_keep_separator"]

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


class FastSentenceSplitter:
    """Byte-identical, faster ``SentenceSplitter(chunk_size, chunk_overlap=0)``.

    Source: ``llama_index/core/node_parser/text/sentence.py`` (``_split_text``,
    ``_split``, ``_get_splits_by_fns``, ``_merge``, ``_postprocess_chunks``) and
    ``.../text/utils.py`` (the split functions), with NLTK Punkt reproduced by
    :class:`~kilt_chunks.splitter.punkt.UntrainedPunkt` and token counts from
    tiktoken ``cl100k_base``.

    Args:
        chunk_size: Maximum chunk size in cl100k tokens (as in LlamaIndex, chunks
            can come out a few tokens larger, because pieces are counted
            separately). Must be > 0.

    Raises:
        ValueError: ``chunk_size`` is not a positive integer.
    """

    def __init__(self, chunk_size: int = 256) -> None:
        check_chunk_size(chunk_size)
        self.chunk_size = chunk_size
        counter = get_token_counter()
        self._count = counter.count
        self._count_upto = counter.count_upto
        self._punkt = UntrainedPunkt()
        self._chunk_counter = ChunkTokenCounter(self._count)

    def __reduce__(self) -> tuple[type[FastSentenceSplitter], tuple[int]]:
        """Pickle as the constructor call (the tokenizer hooks are rebuilt)."""
        return (FastSentenceSplitter, (self.chunk_size,))

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
        if bytes_at_most(text, chunk_size) or self._fit_size(text) >= 0:
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
            special tokens allowed), the same number a direct count gives, but
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
        if bytes_at_most(text, chunk_size):
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

    def _splits_by_fns(self, text: str) -> list[str]:
        """Source: ``SentenceSplitter._get_splits_by_fns`` (``is_sentence`` is not
        needed: with ``chunk_overlap=0`` ``_merge`` never reads it)."""
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
