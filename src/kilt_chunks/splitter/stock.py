"""Stock LlamaIndex ``SentenceSplitter``: the reference the fast splitter matches.

Selected as ``get_splitter("llama_index")``. Slow (it imports llama-index-core,
runs its callbacks and NLTK's Punkt, and counts every chunk again for its token
count), but it is the definition of the output: the identity tests and the
benchmark compare :class:`~kilt_chunks.splitter.sentence.FastSentenceSplitter`
with it.
"""

from __future__ import annotations

from typing import Any

from kilt_chunks.splitter.sentence import check_chunk_size
from kilt_chunks.splitter.tokens import get_token_counter

__all__ = ["StockSentenceSplitter"]


class StockSentenceSplitter:
    """``SentenceSplitter(chunk_size=chunk_size, chunk_overlap=0)`` of LlamaIndex.

    Source: ``llama_index.core.node_parser.SentenceSplitter`` (llama-index-core
    0.14.25) with its default tokenizer (``get_tokenizer()``) and NLTK Punkt.

    Args:
        chunk_size: Chunk size in cl100k tokens (> 0).

    Raises:
        ValueError: ``chunk_size`` is not a positive integer.
    """

    def __init__(self, chunk_size: int = 256) -> None:
        from llama_index.core.node_parser import SentenceSplitter

        check_chunk_size(chunk_size)
        self.chunk_size = chunk_size
        self._splitter: Any = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=0)

    def __reduce__(self) -> tuple[type[StockSentenceSplitter], tuple[int]]:
        """Pickle as the constructor call."""
        return (StockSentenceSplitter, (self.chunk_size,))

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
        """:meth:`split_text`, each chunk paired with its exact cl100k_base token
        count (a direct count of the chunk,
        :attr:`~kilt_chunks.splitter.tokens.TokenCounter.count`).

        Raises:
            ValueError: As :meth:`split_text`.
        """
        count = get_token_counter().count
        return [(chunk, count(chunk)) for chunk in self.split_text(text)]
