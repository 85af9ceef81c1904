"""Split kept sections into chunks (SPEC rules 6-7), streaming and in parallel.

The dbt Python model ``int_sections_chunked`` (through
:mod:`kilt_chunks.build.checkpoint`) streams Arrow batches of sections into
:func:`split_section_pairs` and commits the chunk batches it yields; nothing
holds all sections or all chunks in memory. Batches are split in a pool of
worker processes (spawn start method) and yielded in input order, so the output
is identical whatever the worker count.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kilt_chunks.build.spans import locate_chunks
from kilt_chunks.chunking_settings import DEFAULT_CHUNKING, ChunkingSettings
from kilt_chunks.defaults import DEFAULT_SPLITTER, DEFAULT_WORKERS
from kilt_chunks.progress import Progress
from kilt_chunks.splitter import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_TOKENIZER,
    get_splitter,
)

__all__ = [
    "CHUNK_SCHEMA",
    "LARGE_SECTION_CHARS",
    "PARENT_CHECK_SECONDS",
    "SECTION_CHUNKS_SCHEMA",
    "SECTION_COLUMNS",
    "compacted_batch",
    "resolve_workers",
    "split_batch",
    "split_section",
    "split_section_batches",
    "split_section_pairs",
]

#: Section columns read by the chunking step.
SECTION_COLUMNS = ("page_order", "wikipedia_id", "section_order", "section_text")

#: One row per chunk, in section order then chunk order, with where the chunk
#: lies in its section text (code points, end exclusive) and its token count.
CHUNK_SCHEMA = pa.schema(
    [
        ("page_order", pa.int64()),
        ("wikipedia_id", pa.string()),
        ("section_order", pa.int32()),
        ("chunk_order", pa.int32()),
        ("num_chunks", pa.int32()),
        ("text", pa.string()),
        ("section_start_char", pa.int64()),
        ("section_end_char", pa.int64()),
        ("num_tokens", pa.int32()),
    ]
)

#: One row per section, in input order, with its chunks as lists (chunk order):
#: what the dbt build stores. Chunk k is
#: ``section_text[chunk_start_chars[k]:chunk_end_chars[k]]`` (code points, end
#: exclusive; the model ``kilt_chunks`` cuts it there), so the text is not
#: written to disk twice, and one row per section lets ``kilt_chunks`` pair
#: these rows with ``int_sections_assembled`` by position instead of a join.
SECTION_CHUNKS_SCHEMA = pa.schema(
    [
        ("page_order", pa.int64()),
        ("wikipedia_id", pa.string()),
        ("section_order", pa.int32()),
        ("num_chunks", pa.int32()),
        ("chunk_start_chars", pa.list_(pa.int64())),
        ("chunk_end_chars", pa.list_(pa.int64())),
        ("chunk_num_tokens", pa.list_(pa.int32())),
        ("chunk_texts", pa.list_(pa.string())),
    ]
)

#: Sections longer than this (code points) also carry their chunks' text
#: (``chunk_texts``; NULL for every other section). ``kilt_chunks`` cuts a
#: chunk with DuckDB's ``substring``, which counts code points from the start
#: of the text, so cutting every chunk of a section of n code points costs
#: about n^2 / 2,000 steps: nothing below this size (a few ms), but hours for
#: a 40 MB section. Wikipedia's sections stay far below it (the bundled
#: sample's longest holds 31,000), so the text is stored twice only for
#: pathological input.
LARGE_SECTION_CHARS = 2**18


def split_section(
    text: str,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    splitter: str = DEFAULT_SPLITTER,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    tokenizer: str = DEFAULT_TOKENIZER,
) -> list[str]:
    """Split one section's text into chunks.

    Args:
        text: Section text, paragraphs joined in page order.
        chunk_size: Max chunk length in tokens.
        splitter: ``"fast"`` or ``"llama_index"``; both give the same strings.
        chunk_overlap: Tokens of overlap (SentenceSplitter's meaning).
        tokenizer: Tokenizer name or ``tokenizer.json`` path.

    Returns:
        Chunks in order; empty for blank text (a blank section is dropped).

    Raises:
        ValueError: If chunk_size is below 1 or the splitter is unknown.

    Source: LlamaIndex SentenceSplitter.split_text (SPEC rule 6: overlap 0).
    """
    if not text or text.isspace():
        return []
    return get_splitter(splitter, chunk_size, chunk_overlap, tokenizer).split_text(text)


def split_batch(
    sections: pa.RecordBatch,
    settings: ChunkingSettings = DEFAULT_CHUNKING,
    by_section: bool = False,
) -> pa.RecordBatch:
    """Split a batch of sections into chunk rows (the worker function).

    Args:
        sections: Columns :data:`SECTION_COLUMNS`, one row per kept section.
        settings: The chunking settings (splitter, chunk size, overlap,
            tokenizer: :func:`kilt_chunks.splitter.get_splitter`). With an
            overlap above 0, or another tokenizer than the default, chunks can
            share characters, and their offsets come from the splitter
            (``split_text_with_spans``) instead of a forward search.
        by_section: Return one row per section with its chunks' offsets and
            token counts as lists (:data:`SECTION_CHUNKS_SCHEMA`, no text: the
            offsets give it back, except for a section over
            :data:`LARGE_SECTION_CHARS`) instead of one row per chunk.

    Returns:
        A batch with schema :data:`CHUNK_SCHEMA` (or
        :data:`SECTION_CHUNKS_SCHEMA`): every chunk of every section, in input
        order, located in its section text and with its token count
        (:mod:`kilt_chunks.build.spans`).

    Raises:
        ValueError: If a section gives no chunk (it should have been dropped as
            blank) or the splitter fails on it (e.g. stock tiktoken on a run of
            about a million white-space characters), naming the page and
            section.
    """
    chosen = get_splitter(settings)
    split = chosen.split_text_with_token_counts
    # Chunks that may share characters are located by the splitter itself.
    with_spans = (
        chosen.split_text_with_spans
        if settings.chunk_overlap or settings.tokenizer != DEFAULT_TOKENIZER
        else None
    )
    page_orders = sections.column("page_order").to_pylist()
    ids = sections.column("wikipedia_id").to_pylist()
    orders = sections.column("section_order").to_pylist()
    texts = sections.column("section_text").to_pylist()
    schema = SECTION_CHUNKS_SCHEMA if by_section else CHUNK_SCHEMA
    out: dict[str, list] = {name: [] for name in schema.names}
    for page_order, wikipedia_id, section_order, text in zip(
        page_orders, ids, orders, texts, strict=True
    ):
        try:
            if with_spans is not None:
                located = with_spans(text) if text else []
                counted = [(chunk, n) for chunk, n, _, _ in located]
            else:
                counted = split(text) if text else []
        except ValueError as exc:
            raise ValueError(
                f"page {wikipedia_id}: section {section_order}: the "
                f"{settings.splitter} "
                f"splitter failed: {exc}"
            ) from exc
        if not counted or counted[0][0] == "":
            raise ValueError(
                f"page {wikipedia_id}: section {section_order}: splitter returned "
                "no chunk for a kept section"
            )
        chunks = [chunk for chunk, _ in counted]
        if with_spans is not None:
            spans = [(start, end) for _, _, start, end in located]
        else:
            spans = locate_chunks(
                text, chunks, wikipedia_id=wikipedia_id, section_order=section_order
            )
        n = len(chunks)
        if by_section:
            out["page_order"].append(page_order)
            out["wikipedia_id"].append(wikipedia_id)
            out["section_order"].append(section_order)
            out["num_chunks"].append(n)
            out["chunk_start_chars"].append([start for start, _ in spans])
            out["chunk_end_chars"].append([end for _, end in spans])
            out["chunk_num_tokens"].append([tokens for _, tokens in counted])
            out["chunk_texts"].append(
                chunks if len(text) > LARGE_SECTION_CHARS else None
            )
            continue
        out["page_order"] += [page_order] * n
        out["wikipedia_id"] += [wikipedia_id] * n
        out["section_order"] += [section_order] * n
        out["chunk_order"] += range(n)
        out["num_chunks"] += [n] * n
        out["text"] += chunks
        out["section_start_char"] += [start for start, _ in spans]
        out["section_end_char"] += [end for _, end in spans]
        out["num_tokens"] += [n for _, n in counted]
    return pa.RecordBatch.from_pydict(out, schema=schema)


class _Progress:
    """Chunking progress (section bytes, sections, MB/s, ETA): see
    :class:`kilt_chunks.progress.Progress`."""

    def __init__(
        self, total_bytes: int | None, done_bytes: int, interval: float
    ) -> None:
        self.progress = Progress(
            "chunking",
            total_bytes=total_bytes,
            done_bytes=done_bytes,
            interval=interval,
            unit="sections",
        )

    def update(self, batch: pa.RecordBatch) -> None:
        if self.progress.interval <= 0:
            return
        nbytes = pc.sum(pc.binary_length(batch.column("section_text"))).as_py() or 0
        self.progress.update(nbytes, batch.num_rows)

    def close(self) -> None:
        self.progress.close()


#: Seconds between a worker's checks that the process that started it lives.
PARENT_CHECK_SECONDS = 1.0


def _start_worker(settings: ChunkingSettings, parent_pid: int) -> None:
    """Initializer of a chunking worker: build the splitter, watch the parent.

    A worker whose parent dies without shutting the pool down (SIGKILL, the
    OOM killer) would otherwise live on, orphaned, holding its memory. A
    daemon thread ends the worker once its parent process is gone (the worker
    has then been re-parented, so ``os.getppid()`` changes).
    """
    get_splitter(settings)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="kilt-parent-watch", daemon=True).start()


def compacted_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with buffers of its own size, for pickling to a worker.

    A slice (e.g. from ``Table.to_batches``) pickles its parent's whole
    buffers; taking its rows copies just the slice.
    """
    if batch.get_total_buffer_size() > 2 * batch.nbytes + 65536:
        return batch.take(pa.array(range(batch.num_rows), pa.int64()))
    return batch


def resolve_workers(workers: int) -> int:
    """Number of worker processes: ``workers`` if positive, else one per core."""
    return workers if workers > 0 else (os.cpu_count() or 1)


def split_section_pairs(
    sections: Iterable[pa.RecordBatch],
    *,
    settings: ChunkingSettings | None = None,
    workers: int = DEFAULT_WORKERS,
    total_bytes: int | None = None,
    done_bytes: int = 0,
    progress_seconds: float = 0,
    by_section: bool = False,
    **setting_values: Any,
) -> Iterator[tuple[pa.RecordBatch, pa.RecordBatch]]:
    """Split a stream of section batches, yielding each with its chunks.

    Args:
        sections: Batches with at least the columns :data:`SECTION_COLUMNS`.
        settings: The chunking settings, passed whole to the workers.
        workers: Worker processes; 1 splits in this process, 0 uses one per core.
        total_bytes: UTF-8 bytes of all section text, for the ETA (optional).
        done_bytes: Bytes already done before this stream (a resumed build).
        progress_seconds: Seconds between progress lines; 0 disables them.
        by_section: One row per section, chunks as lists
            (:data:`SECTION_CHUNKS_SCHEMA`), as :func:`split_batch`.
        **setting_values: Without ``settings``: fields of
            :class:`~kilt_chunks.chunking_settings.ChunkingSettings`
            (``splitter="llama_index"``, ``chunk_size=128``, ...), the others
            at their defaults.

    Yields:
        ``(section_batch, chunk_batch)`` pairs in input order, the chunk batch
        with schema :data:`CHUNK_SCHEMA` (or :data:`SECTION_CHUNKS_SCHEMA`);
        identical for any ``workers``. At most ``2 * workers`` batches are in
        flight, so memory stays bounded.

    Raises:
        ValueError: From :func:`split_batch` for a section with no chunk, or
            a bad setting (before any batch is read: a
            :class:`~kilt_chunks.chunking_settings.ChunkingSettingsError`
            naming it, or the splitter's).
    """
    if settings is None:
        settings = ChunkingSettings.checked(setting_values)
    elif setting_values:
        raise TypeError(f"give settings or {sorted(setting_values)}, not both")
    # Fail fast on a setting the splitter refuses.
    get_splitter(settings)
    n_workers = resolve_workers(workers)
    progress = _Progress(total_bytes, done_bytes, progress_seconds)
    batches = (b.select(list(SECTION_COLUMNS)) for b in sections)
    if n_workers > 1:
        batches = (compacted_batch(b) for b in batches)
    try:
        if n_workers == 1:
            for batch in batches:
                yield batch, split_batch(batch, settings, by_section)
                progress.update(batch)
            return
        with ProcessPoolExecutor(
            n_workers,
            mp_context=get_context("spawn"),
            # Import and build the splitter in each worker up front, while
            # this process reads the first batches.
            initializer=_start_worker,
            initargs=(settings, os.getpid()),
        ) as pool:
            pending: deque[tuple[pa.RecordBatch, Future]] = deque()
            for batch in batches:
                pending.append(
                    (
                        batch,
                        pool.submit(split_batch, batch, settings, by_section),
                    )
                )
                if len(pending) >= 2 * n_workers:
                    done_batch, future = pending.popleft()
                    yield done_batch, future.result()
                    progress.update(done_batch)
            while pending:
                done_batch, future = pending.popleft()
                yield done_batch, future.result()
                progress.update(done_batch)
    finally:
        progress.close()


def split_section_batches(
    sections: Iterable[pa.RecordBatch], **options: Any
) -> Iterator[pa.RecordBatch]:
    """Split a stream of section batches into a stream of chunk batches.

    Args:
        sections: Batches with at least the columns :data:`SECTION_COLUMNS`.
        **options: Keyword arguments of :func:`split_section_pairs` (the
            settings as one ``settings=ChunkingSettings(...)``, or as its
            fields: ``chunk_size=128``).

    Yields:
        :data:`CHUNK_SCHEMA` batches in input order, identical for any worker
        count.
    """
    for _, chunks in split_section_pairs(sections, **options):
        yield chunks
