"""Where every chunk lies in its section text, and how many tokens it has.

A chunk is a substring of its section's text (SPEC rules 3 and 6: the splitter
cuts the text and strips white space at the cuts, nothing else). The chunking
workers (:func:`kilt_chunks.build.splitting.split_batch`) call this module right after
splitting a section, so each chunk is found by scanning forward from the end of
the previous one, in parallel with the splitting (token counts come with the
chunks from the splitter). :func:`kilt_spans` then maps a batch's section offsets to
KILT's own (paragraph_id, character) coordinates, vectorised, as the chunks
are committed (so ``kilt_chunk_spans`` only unnests them: no join, no sort),
and ``kilt_chunks`` cuts each chunk's text at the section offsets.

Offsets are Python ``str`` indexes (Unicode code points, the unit of DuckDB's
``length`` and string slicing), 0-based, end exclusive.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "KILT_SPAN_COLUMNS",
    "kilt_spans",
    "locate_chunks",
]

#: Columns :func:`kilt_spans` returns, each a list per section (one item per
#: chunk), in this order.
KILT_SPAN_COLUMNS = (
    "chunk_start_paragraph_ids",
    "chunk_start_characters",
    "chunk_end_paragraph_ids",
    "chunk_end_characters",
)


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


def kilt_spans(
    chunk_start_chars: pa.ListArray,
    chunk_end_chars: pa.ListArray,
    start_paragraph_ids: pa.Array,
    paragraph_text_lengths: pa.ListArray,
    paragraph_start_characters: pa.ListArray,
    wikipedia_ids: pa.Array,
    section_orders: pa.Array,
) -> list[pa.ListArray]:
    """Map chunks' section offsets to KILT spans, for a batch of sections.

    A section's text is its paragraphs ``start_paragraph_ids[i]``,
    ``start_paragraph_ids[i] + 1``, ... concatenated, each paragraph's text
    starting at character ``paragraph_start_characters[i][j]`` of the KILT
    paragraph (10 after a ``BULLET::::`` marker, else 0) and
    ``paragraph_text_lengths[i][j]`` code points long (SPEC rules 1-3). A chunk
    ``[s, e)`` of the section starts in the paragraph holding character ``s``
    and ends in the one holding ``e - 1``: the last paragraph starting at or
    before that character, so empty paragraphs are never chosen. One
    ``searchsorted`` over the whole batch does it, each section's offsets
    shifted into a range of its own.

    Args:
        chunk_start_chars, chunk_end_chars: Per section, each chunk's start
            and (exclusive) end in the section text, code points.
        start_paragraph_ids: Per section, the KILT id of its first paragraph.
        paragraph_text_lengths, paragraph_start_characters: Per section, one
            item per paragraph from the first to the last.
        wikipedia_ids, section_orders: Per section, for error messages.

    Returns:
        The :data:`KILT_SPAN_COLUMNS` as int32 lists, one item per chunk:
        the first character is ``text[start_paragraph_id][start_character]``
        of the KILT page and the span ends just before
        ``text[end_paragraph_id][end_character]`` (end exclusive, KILT's
        convention). All NULL when the paragraph lengths are NULL (sections
        made outside the dbt project).

    Raises:
        ValueError: If a chunk ends past its section's paragraphs (offsets cut
            from other text), naming the page and section.
    """
    num_sections = len(chunk_start_chars)
    if paragraph_text_lengths.null_count == num_sections:
        return [pa.nulls(num_sections, pa.list_(pa.int32()))] * len(KILT_SPAN_COLUMNS)
    if paragraph_text_lengths.null_count or start_paragraph_ids.null_count:
        raise ValueError("kilt_spans: some sections have no paragraph lengths")
    lengths = _values(paragraph_text_lengths.flatten())
    starts = _values(paragraph_start_characters.flatten())
    counts = _values(pc.list_value_length(paragraph_text_lengths))
    first_ids = _values(start_paragraph_ids)
    paragraph_section = np.repeat(np.arange(num_sections), counts)
    first_item = np.concatenate(([0], np.cumsum(counts)[:-1]))
    totals = np.bincount(paragraph_section, lengths, num_sections).astype(np.int64)
    section_base = np.concatenate(([0], np.cumsum(totals)[:-1]))
    offsets = np.cumsum(lengths) - lengths - section_base[paragraph_section]
    # Every section gets a key range of its own, so one sorted array serves all.
    stride = int(totals.max(initial=0)) + 1
    keys = paragraph_section * stride + offsets
    chunk_counts = _values(pc.list_value_length(chunk_start_chars))
    chunk_section = np.repeat(np.arange(num_sections), chunk_counts)
    first_chars = _values(chunk_start_chars.flatten())
    last_chars = _values(chunk_end_chars.flatten()) - 1
    beyond = last_chars >= totals[chunk_section]
    if beyond.any():
        section = int(chunk_section[np.argmax(beyond)])
        raise ValueError(
            f"page {wikipedia_ids[section].as_py()}: section "
            f"{section_orders[section].as_py()}: a "
            f"chunk ends at character {int(last_chars[np.argmax(beyond)]) + 1}, "
            f"past the section's {int(totals[section])} characters of paragraph "
            "text: the offsets were cut from other text"
        )
    columns = []
    for chars, shift in ((first_chars, 0), (last_chars, 1)):
        item = np.searchsorted(keys, chunk_section * stride + chars, side="right") - 1
        paragraph_ids = first_ids[chunk_section] + item - first_item[chunk_section]
        characters = chars - offsets[item] + starts[item] + shift
        columns += [paragraph_ids, characters]
    list_offsets = pa.array(np.concatenate(([0], np.cumsum(chunk_counts))), pa.int32())
    return [
        pa.ListArray.from_arrays(list_offsets, pa.array(values.astype(np.int32)))
        for values in columns
    ]


def _values(array: pa.Array) -> np.ndarray:
    """An Arrow integer array (no NULLs) as int64 NumPy values."""
    return array.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


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
