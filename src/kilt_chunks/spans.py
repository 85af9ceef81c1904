"""Where every chunk lies in its section text, and how many tokens it has.

A chunk is a substring of its section's text (SPEC rules 3 and 6: the splitter
cuts the text and strips white space at the cuts, nothing else). The dbt Python
model ``int_chunks_located`` streams the chunks of every section, in order, with
the section text, and this module finds each chunk by scanning forward from the
end of the previous one. The SQL model ``kilt_chunk_spans`` then maps these
section offsets to KILT's own (paragraph_id, character) coordinates.

Offsets are Python ``str`` indexes (Unicode code points, the unit of DuckDB's
``length`` and string slicing), 0-based, end exclusive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import duckdb
import pyarrow as pa

#: Rows (chunks) per Arrow batch read from DuckDB.
DEFAULT_BATCH_ROWS = 10_000

#: Columns the locating step reads, one row per chunk in (page, section, chunk)
#: order; ``section_text`` is set on the first chunk of a section only.
CHUNK_ROW_COLUMNS = (
    "page_order",
    "wikipedia_id",
    "section_order",
    "chunk_order",
    "text",
    "section_text",
)

#: One row per chunk: its place in the section text and its token count.
LOCATED_SCHEMA = pa.schema(
    [
        ("page_order", pa.int64()),
        ("wikipedia_id", pa.string()),
        ("section_order", pa.int32()),
        ("chunk_order", pa.int32()),
        ("section_start_char", pa.int64()),
        ("section_end_char", pa.int64()),
        ("num_tokens", pa.int32()),
    ]
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


def get_token_counter() -> Callable[[Sequence[str]], list[int]]:
    """Return a function counting the tokens of many texts.

    Returns:
        A callable ``list[str] -> list[int]``: for each text,
        ``len(tokenizer(text))`` with LlamaIndex's default tokenizer
        (``llama_index.core.utils.get_tokenizer()``: tiktoken ``cl100k_base``,
        ``allowed_special="all"``, the BPE file shipped with llama-index-core),
        the count SentenceSplitter uses for its 256-token budget. Counts are
        recorded as they are, never clipped. About 13 MB of text per second on
        one core (threads do not help: measured slower).
    """
    from llama_index.core.utils import get_tokenizer

    tokenizer = get_tokenizer()

    def count(texts: Sequence[str]) -> list[int]:
        return [len(tokenizer(text)) for text in texts]

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


def chunk_section_rows(
    chunks: duckdb.DuckDBPyRelation, sections: duckdb.DuckDBPyRelation
) -> duckdb.DuckDBPyRelation:
    """Join chunks with their section text, in (page, section, chunk) order.

    Args:
        chunks: ``int_sections_chunked``: page_order, wikipedia_id,
            section_order, chunk_order, text; one row per chunk.
        sections: ``int_sections_assembled``: wikipedia_id, section_order,
            section_text; one row per kept section.

    Returns:
        A relation with :data:`CHUNK_ROW_COLUMNS`, ordered by page_order,
        section_order, chunk_order. ``section_text`` is carried on each
        section's chunk 0 only (NULL on the others), so each section's text
        crosses into Python once.
    """
    c = chunks.set_alias("c")
    s = sections.set_alias("s")
    return (
        c.join(
            s, "c.wikipedia_id = s.wikipedia_id and c.section_order = s.section_order"
        )
        .select(
            "c.page_order::bigint as page_order, "
            "c.wikipedia_id::varchar as wikipedia_id, "
            "c.section_order::integer as section_order, "
            "c.chunk_order::integer as chunk_order, "
            "c.text::varchar as text, "
            "case when c.chunk_order = 0 then s.section_text end::varchar"
            " as section_text"
        )
        .order("page_order, section_order, chunk_order")
    )


def locate_chunk_batches(
    rows: Iterable[pa.RecordBatch],
    count_tokens: Callable[[Sequence[str]], list[int]] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Locate a stream of chunks in their section texts.

    Args:
        rows: Batches with :data:`CHUNK_ROW_COLUMNS`, one row per chunk in
            (page_order, section_order, chunk_order) order; ``section_text``
            must be set on every chunk 0 (other rows are ignored). A section may
            continue across batches.
        count_tokens: Token counter, :func:`get_token_counter` by default.

    Yields:
        :data:`LOCATED_SCHEMA` batches, one row per input row, same order. Only
        the current section's text is held between rows.

    Raises:
        ValueError: If a chunk is not found after the previous one in its
            section, chunks come out of order, or a chunk 0 has no section text;
            the message names the page, section and chunk.
    """
    count_tokens = count_tokens or get_token_counter()
    scanner: _SectionScanner | None = None
    for batch in rows:
        columns = {name: batch.column(name).to_pylist() for name in CHUNK_ROW_COLUMNS}
        starts: list[int] = []
        ends: list[int] = []
        for wikipedia_id, section_order, chunk_order, text, section_text in zip(
            columns["wikipedia_id"],
            columns["section_order"],
            columns["chunk_order"],
            columns["text"],
            columns["section_text"],
            strict=True,
        ):
            if chunk_order == 0:
                if section_text is None:
                    raise ValueError(
                        f"page {wikipedia_id}: section {section_order}: chunk 0 "
                        "has no section text"
                    )
                scanner = _SectionScanner(wikipedia_id, section_order, section_text)
            elif scanner is None or (scanner.wikipedia_id, scanner.section_order) != (
                wikipedia_id,
                section_order,
            ):
                raise ValueError(
                    f"page {wikipedia_id}: section {section_order}: chunk "
                    f"{chunk_order} arrived without the section's chunk 0 before it"
                )
            start, end = scanner.find(chunk_order, text)
            starts.append(start)
            ends.append(end)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(columns["page_order"], pa.int64()),
                pa.array(columns["wikipedia_id"], pa.string()),
                pa.array(columns["section_order"], pa.int32()),
                pa.array(columns["chunk_order"], pa.int32()),
                pa.array(starts, pa.int64()),
                pa.array(ends, pa.int64()),
                pa.array(count_tokens(columns["text"]), pa.int32()),
            ],
            schema=LOCATED_SCHEMA,
        )


def locate_chunks_reader(
    chunks: duckdb.DuckDBPyRelation,
    sections: duckdb.DuckDBPyRelation,
    batch_size: int = DEFAULT_BATCH_ROWS,
) -> pa.RecordBatchReader:
    """Stream every chunk's section span and token count (the dbt model's body).

    Args:
        chunks: ``int_sections_chunked`` (see :func:`chunk_section_rows`).
        sections: ``int_sections_assembled``.
        batch_size: Chunks per Arrow batch.

    Returns:
        A reader with :data:`LOCATED_SCHEMA`, one row per chunk in (page_order,
        section_order, chunk_order) order; batches are produced lazily, so
        memory holds one batch and one section text at a time.

    Raises:
        ValueError: While reading, see :func:`locate_chunk_batches`.
    """
    rows = chunk_section_rows(chunks, sections).to_arrow_reader(batch_size)
    return pa.RecordBatchReader.from_batches(LOCATED_SCHEMA, locate_chunk_batches(rows))
