"""Sentence splitters that give LlamaIndex's ``SentenceSplitter`` chunks.

One entry point, :func:`get_splitter`, returns a :class:`Splitter`: the fast,
exact re-implementation (``"fast"``, :mod:`.sentence`) or stock LlamaIndex
(``"llama_index"``, :mod:`.stock`). Both give the same chunks for every text.

Modules, as LlamaIndex and chonkie split theirs:

* :mod:`.options`: the overlap and tokenizer settings and their defaults;
* :mod:`.tokens`: exact cl100k_base token counts (rs-bpe; tiktoken as the
  reference) and the cheap bounds that let the splitter skip counting;
* :mod:`.punkt`: NLTK's untrained Punkt sentence tokenizer, ported;
* :mod:`.sentence`: the split cascade and greedy merge of ``SentenceSplitter``;
* :mod:`.chunk_tokens`: a chunk's token count derived from its pieces' counts;
* :mod:`.stock`: the stock splitter, the reference.

Example::

    >>> from kilt_chunks.splitter import get_splitter
    >>> get_splitter("fast", 256).split_text("Albedo is a ratio. It is 0.3.")
    ['Albedo is a ratio. It is 0.3.']
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Protocol

from kilt_chunks.splitter.options import DEFAULT_CHUNK_OVERLAP, DEFAULT_TOKENIZER
from kilt_chunks.splitter.sentence import DEFAULT_CHUNK_SIZE, FastSentenceSplitter
from kilt_chunks.splitter.stock import StockSentenceSplitter
from kilt_chunks.splitter.tokens import count_tokens

if TYPE_CHECKING:
    from kilt_chunks.chunking_settings import ChunkingSettings

__all__ = [
    "DEFAULT_CHUNK_OVERLAP",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_TOKENIZER",
    "SPLITTER_NAMES",
    "FastSentenceSplitter",
    "Splitter",
    "StockSentenceSplitter",
    "count_tokens",
    "get_splitter",
]

#: Names accepted by :func:`get_splitter`.
SPLITTER_NAMES: tuple[str, ...] = ("fast", "llama_index")


class Splitter(Protocol):
    """What the pipeline calls on a splitter."""

    chunk_size: int
    chunk_overlap: int
    tokenizer: str

    def split_text(self, text: str) -> list[str]:
        """The chunks of ``text``, stripped, in text order."""
        ...

    def split_text_with_token_counts(self, text: str) -> list[tuple[str, int]]:
        """The chunks of ``text``, each with its exact token count."""
        ...

    def split_text_with_spans(self, text: str) -> list[tuple[str, int, int, int]]:
        """``(chunk, num_tokens, start, end)`` per chunk, ``text[start:end]``
        the chunk; ``[]`` for empty or white-space text."""
        ...


def get_splitter(
    name: str | ChunkingSettings = "fast",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    tokenizer: str = DEFAULT_TOKENIZER,
) -> Splitter:
    """The process's splitter called ``name`` for these settings (cached).

    Args:
        name: ``"fast"`` (:class:`FastSentenceSplitter`) or ``"llama_index"``
            (:class:`StockSentenceSplitter`); both give identical chunks. Or
            a whole :class:`~kilt_chunks.chunking_settings.ChunkingSettings`
            (how the build calls it), whose fields replace the arguments.
        chunk_size: Chunk size in tokens (> 0). As in LlamaIndex, a
            chunk can come out a few tokens larger (pieces are counted
            separately; SPEC rule 6).
        chunk_overlap: SentenceSplitter's overlap in tokens,
            ``0 <= chunk_overlap < chunk_size``.
        tokenizer: ``"cl100k_base"``, another tiktoken encoding in the local
            cache, or a ``tokenizer.json`` path
            (:mod:`kilt_chunks.splitter.options`).

    Returns:
        An object with ``split_text(text) -> list[str]`` and
        ``split_text_with_token_counts(text) -> list[(chunk, num_tokens)]``.

    Raises:
        ValueError: ``name`` is not one of :data:`SPLITTER_NAMES`,
            ``chunk_size`` is not a positive integer, ``chunk_overlap`` is out
            of range, or the tokenizer cannot be loaded.

    Source: LlamaIndex ``SentenceSplitter(chunk_size, chunk_overlap,
    tokenizer=...)``.
    """
    if not isinstance(name, str):
        settings = name
        name, chunk_size = settings.splitter, settings.chunk_size
        chunk_overlap, tokenizer = settings.chunk_overlap, settings.tokenizer
    if name not in SPLITTER_NAMES:
        allowed = ", ".join(repr(n) for n in SPLITTER_NAMES)
        raise ValueError(f"unknown splitter {name!r}; allowed names: {allowed}")
    return _splitter(name, chunk_size, chunk_overlap, tokenizer)


@functools.lru_cache(maxsize=8)
def _splitter(
    name: str, chunk_size: int, chunk_overlap: int, tokenizer: str
) -> Splitter:
    """One splitter per (name, settings) and process."""
    if name == "fast":
        return FastSentenceSplitter(chunk_size, chunk_overlap, tokenizer)
    return StockSentenceSplitter(chunk_size, chunk_overlap, tokenizer)
