"""Stock LlamaIndex ``SentenceSplitter``: the reference the fast splitter matches.

Selected as ``get_splitter("llama_index")``. Slow (it imports llama-index-core,
runs its callbacks and NLTK's Punkt, and counts every chunk again for its token
count), but it is the definition of the output: the identity tests and the
benchmark compare :class:`~kilt_chunks.splitter.sentence.FastSentenceSplitter`
with it.
"""

from __future__ import annotations

from typing import Any

from kilt_chunks.splitter.options import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_TOKENIZER,
    tokenizer_function,
)
from kilt_chunks.splitter.sentence import DEFAULT_CHUNK_SIZE, SplitterSettings
from kilt_chunks.splitter.tokens import get_token_counter

__all__ = ["StockSentenceSplitter", "locate_overlapping_chunks"]


def locate_overlapping_chunks(text: str, chunks: list[str]) -> list[tuple[int, int]]:
    """Where each of a section's chunks lies when chunks may overlap.

    Chunk ``k + 1`` starts where chunk ``k`` starts or later and ends where it
    ends or later (it repeats a tail of chunk ``k``'s pieces and adds at least
    one new piece), so each chunk is taken at its first occurrence from the
    previous chunk's start that ends at or after the previous chunk's end.
    That is a search: on text that repeats itself it can pick an earlier copy
    of the same characters (same chunk text, other offsets). The fast
    splitter gives its offsets from the split itself
    (:meth:`~kilt_chunks.splitter.sentence.FastSentenceSplitter.split_text_with_spans`).

    Raises:
        ValueError: A chunk is not found there, naming the chunk.
    """
    spans = []
    prev_start, prev_end = 0, 0
    for k, chunk in enumerate(chunks):
        position = prev_start
        while True:
            start = text.find(chunk, position) if chunk else -1
            if start < 0:
                raise ValueError(
                    f"chunk {k}: chunk text {chunk[:60]!r} not found in the "
                    f"section text from character {prev_start}"
                )
            if start + len(chunk) >= prev_end:
                break
            position = start + 1
        prev_start, prev_end = start, start + len(chunk)
        spans.append((prev_start, prev_end))
    return spans


class StockSentenceSplitter(SplitterSettings):
    """``SentenceSplitter(chunk_size, chunk_overlap, tokenizer)`` of LlamaIndex.

    Source: ``llama_index.core.node_parser.SentenceSplitter`` (llama-index-core
    0.14.25) with its default tokenizer (``get_tokenizer()``), or the callable
    :func:`~kilt_chunks.splitter.options.tokenizer_function` gives, and NLTK
    Punkt.

    Args:
        chunk_size: Chunk size in tokens (> 0).
        chunk_overlap: Tokens of overlap, ``0 <= chunk_overlap < chunk_size``.
        tokenizer: Tokenizer name or ``tokenizer.json`` path.

    Raises:
        ValueError: A setting is out of range or the tokenizer cannot be loaded.
    """

    def __init__(
        self,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
        tokenizer: str = DEFAULT_TOKENIZER,
    ) -> None:
        from llama_index.core.node_parser import SentenceSplitter

        super().__init__(chunk_size, chunk_overlap, tokenizer)
        encode = tokenizer_function(tokenizer)
        self._splitter: Any = SentenceSplitter(
            chunk_size=chunk_size, chunk_overlap=chunk_overlap, tokenizer=encode
        )
        if encode is None:
            self._count = get_token_counter().count
        else:
            self._count = lambda text: len(encode(text))

    def split_text(self, text: str) -> list[str]:
        """LlamaIndex's ``split_text(text)``: the chunk strings, stripped, in text
        order (``[""]`` for ``""``, ``[]`` for white space).

        Raises:
            ValueError: As LlamaIndex raises it (e.g. "Single token exceeded
                chunk size", or tiktoken's "Max stack size exceeded for
                backtracking" on a run of about a million white-space
                characters followed by more text).
        """
        chunks: list[str] = self._splitter.split_text(text)
        return chunks

    def split_text_with_token_counts(self, text: str) -> list[tuple[str, int]]:
        """:meth:`split_text`, each chunk paired with its exact token count (a
        direct count of the chunk: for ``cl100k_base``
        :attr:`~kilt_chunks.splitter.tokens.TokenCounter.count`).

        Raises:
            ValueError: As :meth:`split_text`.
        """
        count = self._count
        return [(chunk, count(chunk)) for chunk in self.split_text(text)]

    def split_text_with_spans(self, text: str) -> list[tuple[str, int, int, int]]:
        """``(chunk, num_tokens, start, end)`` per chunk, the offsets found by
        :func:`locate_overlapping_chunks`; ``[]`` for empty or white-space text.

        Raises:
            ValueError: As :meth:`split_text`, or a chunk not found.
        """
        if not text or text.isspace():
            return []
        counted = self.split_text_with_token_counts(text)
        spans = locate_overlapping_chunks(text, [chunk for chunk, _ in counted])
        return [
            (chunk, n, start, end)
            for (chunk, n), (start, end) in zip(counted, spans, strict=True)
        ]
