"""Where every chunk lies in its section text, and how many tokens it has.

A chunk is a substring of its section's text (SPEC rules 3 and 6: the splitter
cuts the text and strips white space at the cuts, nothing else). The chunking
workers (:func:`kilt_chunks.splitting.split_batch`) call this module right after
splitting a section, so each chunk is found by scanning forward from the end of
the previous one, in parallel with the splitting. (Token counts come with the
chunks from the fast splitter; :func:`get_token_counter` counts the stock
splitter's chunks.) The SQL model ``kilt_chunk_spans`` then maps these section
offsets to KILT's own (paragraph_id, character) coordinates, and ``kilt_chunks``
cuts each chunk's text at them.

Offsets are Python ``str`` indexes (Unicode code points, the unit of DuckDB's
``length`` and string slicing), 0-based, end exclusive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache


def locate_chunks(
    section_text: str,
    chunks: Sequence[str],
    *,
    wikipedia_id: str = "?",
    section_order: int = -1,
) -> list[tuple[int, int]]:
    """Find each chunk of one section in the section text.

    Args:
        section_text: The section's text (SPEC rule 3).
        chunks: The section's chunks in order (SPEC rule 6).
        wikipedia_id: Page id, for error messages.
        section_order: Section rank, for error messages.

    Returns:
        One ``(start, end)`` pair per chunk: code point offsets into
        ``section_text``, end exclusive, so ``section_text[start:end] == chunk``.
        Each chunk is searched from the previous chunk's end, so the pairs are
        increasing and never overlap.

    Raises:
        ValueError: If a chunk does not occur after the previous one, naming the
            page, section and chunk.
    """
    spans = []
    scanner = _SectionScanner(wikipedia_id, section_order, section_text)
    for chunk_order, chunk in enumerate(chunks):
        spans.append(scanner.find(chunk_order, chunk))
    return spans


@lru_cache(maxsize=1)
def get_token_counter() -> Callable[[Sequence[str]], list[int]]:
    """Return a function counting the tokens of many texts.

    Returns:
        A callable ``list[str] -> list[int]``: for each text,
        ``len(tokenizer(text))`` with LlamaIndex's default tokenizer
        (``llama_index.core.utils.get_tokenizer()``: tiktoken ``cl100k_base``,
        ``allowed_special="all"``, the BPE file shipped with llama-index-core),
        the count SentenceSplitter uses for its 256-token budget. Counts are
        recorded as they are, never clipped. Uses the splitter's direct counter
        (:func:`kilt_chunks.fast_splitter.token_counter`: rs-bpe, with special
        tokens and lone surrogates handled as tiktoken handles them).
    """
    from kilt_chunks.fast_splitter import token_counter

    count_one = token_counter()

    def count(texts: Sequence[str]) -> list[int]:
        return [count_one(text) for text in texts]

    return count


class _SectionScanner:
    """Scan one section's text forward, chunk by chunk."""

    def __init__(self, wikipedia_id: str, section_order: int, text: str) -> None:
        self.wikipedia_id = wikipedia_id
        self.section_order = section_order
        self.text = text
        self.position = 0
        self.next_chunk = 0

    def find(self, chunk_order: int, chunk: str) -> tuple[int, int]:
        where = f"page {self.wikipedia_id}: section {self.section_order}"
        if chunk_order != self.next_chunk:
            raise ValueError(
                f"{where}: chunk {chunk_order} arrived where chunk "
                f"{self.next_chunk} was expected; chunks must come in "
                "(page_order, section_order, chunk_order) order"
            )
        start = self.text.find(chunk, self.position) if chunk else -1
        if start < 0:
            raise ValueError(
                f"{where}: chunk {chunk_order}: chunk text {chunk[:60]!r} not found "
                f"in the section text after character {self.position} "
                f"(section length {len(self.text)})"
            )
        self.position = start + len(chunk)
        self.next_chunk += 1
        return start, self.position
