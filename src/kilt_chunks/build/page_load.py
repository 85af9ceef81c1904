"""Load the KILT pages into a DuckDB table once per build, and reuse a load.

The dbt model ``base_kilt__pages`` (``python_models/staging/kilt/``) calls
:func:`load_pages`: it streams :func:`kilt_chunks.build.loading.read_kilt_pages`
into the table ``kilt_pages`` of the build's scratch database and returns a
one-row record of the load. The input is read only by this step, so
``dbt compile``, ``dbt show``, ``dbt ls`` and ``dbt docs generate`` never read
``kilt_path``.

A load is reused, without reading the input, when the scratch database already
holds a complete load of the same input (same :func:`input_signature`: the
files' paths, sizes and modification times): a build killed later (in
chunking, say) and run again goes on from its stored pages.

The page text is written with DuckDB's ZSTD compression (2.6x smaller on the
benchmark corpus, whose paragraphs repeat, so likely less on real text;
writing it costs little beside parsing), since the pages are a scratch copy
deleted after the build.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kilt_chunks.build.loading import (
    RAW_PAGE_SCHEMA,
    KiltInputError,
    input_signature,
    read_kilt_pages,
)
from kilt_chunks.database import memory_limit_at_most, memory_limit_bytes
from kilt_chunks.progress import Progress
from kilt_chunks.settings import project_path

__all__ = [
    "LOAD_RECORD_SCHEMA",
    "PAGES_TABLE",
    "advised_memory_limit",
    "load_pages",
    "memory_floor_problem",
    "scratch_compression",
]

#: Table of the loaded page rows, beside the load record, in the scratch
#: database (schema :data:`kilt_chunks.build.loading.RAW_PAGE_SCHEMA`).
PAGES_TABLE = "kilt_pages"

#: The build database's memory limit while it stores the loaded pages (bytes).
#: Writing the pages needs little, and the loader's own DuckDB (in this
#: process) needs about 0.5 GB beside it; at the full cap the two together
#: would be the build's peak.
LOAD_MEMORY_LIMIT = 256 * 2**20

#: One row describing the load the scratch database holds.
LOAD_RECORD_SCHEMA = pa.schema(
    [
        ("kilt_path", pa.string()),
        ("input_signature", pa.string()),
        ("lines_read", pa.int64()),
        ("text_bytes", pa.int64()),
        ("load_seconds", pa.float64()),
        ("is_reused", pa.bool_()),
        ("max_window_text_bytes", pa.int64()),
        ("memory_problem", pa.string()),
    ]
)

#: Pages DuckDB holds at once in a SQL step: one vector (2,048 rows).
WINDOW_PAGES = 2048

#: Memory the sections step (``int_sections_assembled``) needs per byte of page
#: text in the longest run of :data:`WINDOW_PAGES` pages: it holds one vector
#: of pages and several copies of their text (joined, split, filtered,
#: unnested) at once, whatever the number of threads or the insertion order.
#: Measured on 257 MB of copies of the bundled sample's long pages (58.3 MB
#: of text per 2,048 pages), with the sections step of issue 21 (no
#: page-wide lambda captures): it fails at 512 MB (8.8 bytes per byte) and
#: completes at 576 MiB (10.4); it was 8.5 before that step.
SECTIONS_MEMORY_PER_TEXT_BYTE = 10.5


class scratch_compression:  # noqa: N801 (used as a context manager, like a function)
    """Write with DuckDB's ZSTD compression inside a ``with`` block.

    DuckDB's ``force_compression`` is a database-wide setting; integer
    columns keep their own (bit packing) where ZSTD does not apply.

    Args:
        con: Connection or cursor of the build database.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def __enter__(self) -> None:
        self.con.execute("set force_compression = 'zstd'")

    def __exit__(self, *exc: object) -> None:
        self.con.execute("reset force_compression")


def _previous_record(
    con: duckdb.DuckDBPyConnection, record_relation: str | None
) -> dict | None:
    if record_relation is None:
        return None
    try:
        rows = con.sql(f"select * from {record_relation}").to_arrow_table()
    except duckdb.CatalogException:
        return None
    if rows.num_rows != 1 or rows.schema.names != LOAD_RECORD_SCHEMA.names:
        return None
    return rows.to_pylist()[0]


def _counted(
    batches: Iterator[pa.RecordBatch], progress: Progress, totals: dict[str, int]
) -> Iterator[pa.RecordBatch]:
    window_bytes = 0  # text bytes of the current window of WINDOW_PAGES pages
    for batch in batches:
        text = batch.column("text")
        paragraph_bytes = pc.binary_length(pc.list_flatten(text)).to_numpy(
            zero_copy_only=False
        )
        row_bytes = np.bincount(
            pc.list_parent_indices(text).to_numpy(zero_copy_only=False),
            weights=paragraph_bytes,
            minlength=batch.num_rows,
        ).astype(np.int64)
        size = int(row_bytes.sum())
        # Windows of WINDOW_PAGES rows in input order, as DuckDB's vectors.
        windows = (totals["rows"] + np.arange(batch.num_rows)) // WINDOW_PAGES
        first = totals["rows"] // WINDOW_PAGES
        sums = np.bincount(windows - first, weights=row_bytes).astype(np.int64)
        if len(sums):
            sums[0] += window_bytes
            totals["max_window_bytes"] = max(
                totals["max_window_bytes"], int(sums.max())
            )
            window_bytes = int(sums[-1])
        totals["rows"] += batch.num_rows
        if totals["rows"] % WINDOW_PAGES == 0:
            window_bytes = 0  # the next batch starts a window
        totals["bytes"] += size
        progress.update(size, batch.num_rows)
        yield batch


def advised_memory_limit(floor_bytes: int) -> str:
    """The memory limit to advise for a need of ``floor_bytes``: the next
    power of two in binary units (``512MiB``, ``2GiB``), which DuckDB reads
    as exactly that many bytes, so a build given it passes the floor check
    (``512MB`` would be 488 MiB: decimal megabytes).

    Args:
        floor_bytes: The memory needed, in bytes.

    Returns:
        A ``KILT_CHUNKS_MEMORY_LIMIT`` value of at least ``floor_bytes``.
    """
    mib = 2 ** math.ceil(math.log2(max(floor_bytes, 2**20) / 2**20))
    return f"{mib // 1024}GiB" if mib >= 1024 else f"{mib}MiB"


def memory_floor_problem(
    max_window_text_bytes: int, limit_bytes: int, *, default_limit: bool = False
) -> str | None:
    """Say why the build's memory limit is too low for this input, if it is.

    Args:
        max_window_text_bytes: UTF-8 bytes of page text of the longest run of
            :data:`WINDOW_PAGES` pages of the input, as loaded.
        limit_bytes: The build's DuckDB memory limit.
        default_limit: ``KILT_CHUNKS_MEMORY_LIMIT`` is unset, so the limit is
            the default share of the machine's memory
            (:func:`kilt_chunks.dbt_plugin.default_memory_limit`): the
            message then says the machine is too small at that share.

    Returns:
        None when ``limit_bytes`` is at least the measured need
        (:data:`SECTIONS_MEMORY_PER_TEXT_BYTE` per byte of that text); else
        one line naming ``KILT_CHUNKS_MEMORY_LIMIT``, the floor for this input
        and why, so the build stops before the sections step fails with
        DuckDB's own out-of-memory error.
    """
    floor = int(max_window_text_bytes * SECTIONS_MEMORY_PER_TEXT_BYTE)
    if limit_bytes >= floor:
        return None
    suggested = advised_memory_limit(floor)
    return (
        f"KILT_CHUNKS_MEMORY_LIMIT ({limit_bytes / 2**20:,.0f} MiB) is below the "
        f"{floor / 2**20:,.0f} MiB this input needs: its longest run of "
        f"{WINDOW_PAGES:,} pages holds {max_window_text_bytes / 1e6:,.1f} MB of "
        f"text, which the sections step holds about "
        f"{SECTIONS_MEMORY_PER_TEXT_BYTE:g} times over; set "
        f"KILT_CHUNKS_MEMORY_LIMIT={suggested} or more (the loaded pages are "
        "kept: the next build does not read the input again)"
        + (
            "; KILT_CHUNKS_MEMORY_LIMIT is unset, so the limit was half of this "
            "machine's memory: the machine is small for this input"
            if default_limit
            else ""
        )
    )


def _default_memory_limit() -> bool:
    """Whether the build runs at the default memory limit
    (``KILT_CHUNKS_MEMORY_LIMIT`` unset or empty, as ``profiles.yml`` reads
    it)."""
    return not os.environ.get("KILT_CHUNKS_MEMORY_LIMIT", "").strip()


def load_pages(
    con: duckdb.DuckDBPyConnection,
    kilt_path: str,
    pages_table: str,
    *,
    record_relation: str | None = None,
    batch_size: int = 2048,
    progress_seconds: float = 0,
) -> pa.Table:
    """Load ``kilt_path`` into ``pages_table``, or reuse the load it holds.

    Args:
        con: Connection of the build database.
        kilt_path: Input path (see :mod:`kilt_chunks.build.loading`); a relative
            path is resolved against the dbt project folder
            (:func:`kilt_chunks.settings.project_path`).
        pages_table: Qualified name of the table to (re)create, e.g.
            ``kilt_scratch.main.kilt_pages``.
        record_relation: The record of the previous load (the dbt model's own
            relation), or None: when it names this same input and
            ``pages_table`` holds all its rows, nothing is read.
        batch_size: Rows per Arrow batch of the loader.
        progress_seconds: Seconds between progress lines; 0 is quiet.

    Returns:
        One row, :data:`LOAD_RECORD_SCHEMA`: the resolved input path, its
        signature, the lines read, the UTF-8 bytes of page text, the load's
        seconds and whether an earlier load was reused.

    An input that cannot be read (missing, empty, not KILT, a truncated
    gzip file) gives a table whose last row's ``reject_reason`` says why (see
    :func:`~kilt_chunks.build.loading.read_kilt_pages`, ``on_error="row"``); the
    model's post-hook stops the build with that message.
    """
    # Relative to the dbt project folder, whatever the current folder.
    kilt_path = project_path(kilt_path)
    try:
        signature = input_signature(kilt_path)
    except KiltInputError:
        signature = ""  # not readable: the reader gives one row saying why
    where = (
        kilt_path if kilt_path.startswith("hf://") else str(Path(kilt_path).resolve())
    )
    previous = _previous_record(con, record_relation)
    if previous is not None and previous["input_signature"] == signature:
        try:
            stored = con.execute(f"select count(*) from {pages_table}").fetchall()[0][0]
        except duckdb.CatalogException:
            stored = -1
        if stored == previous["lines_read"]:
            Progress.note(
                f"load: reusing the {stored:,} pages already loaded from {where}"
                " (same files, sizes and modification times)"
            )
            problem = memory_floor_problem(
                previous["max_window_text_bytes"],
                memory_limit_bytes(con),
                default_limit=_default_memory_limit(),
            )
            return pa.Table.from_pylist(
                [{**previous, "is_reused": True, "memory_problem": problem}],
                schema=LOAD_RECORD_SCHEMA,
            )
    start = time.monotonic()
    reader = read_kilt_pages(kilt_path, batch_size=batch_size, on_error="row")
    totals = {"rows": 0, "bytes": 0, "max_window_bytes": 0}
    progress = Progress("load", interval=progress_seconds, unit="pages")
    cursor = con.cursor()
    try:
        with (
            memory_limit_at_most(cursor, LOAD_MEMORY_LIMIT),
            scratch_compression(cursor),
        ):
            # The columns and types of RAW_PAGE_SCHEMA, from an empty table.
            cursor.register("kilt_page_columns", RAW_PAGE_SCHEMA.empty_table())
            cursor.execute(
                f"create or replace table {pages_table}"
                " as select * from kilt_page_columns"
            )
            cursor.unregister("kilt_page_columns")
            stream = pa.RecordBatchReader.from_batches(
                RAW_PAGE_SCHEMA, _counted(reader, progress, totals)
            )
            cursor.register("kilt_page_stream", stream)
            cursor.execute(f"insert into {pages_table} select * from kilt_page_stream")
            cursor.unregister("kilt_page_stream")
    finally:
        progress.close()
        cursor.close()
    record = {
        "kilt_path": where,
        "input_signature": signature,
        "lines_read": totals["rows"],
        "text_bytes": totals["bytes"],
        "load_seconds": time.monotonic() - start,
        "is_reused": False,
        "max_window_text_bytes": totals["max_window_bytes"],
        "memory_problem": memory_floor_problem(
            totals["max_window_bytes"],
            memory_limit_bytes(con),
            default_limit=_default_memory_limit(),
        ),
    }
    return pa.Table.from_pylist([record], schema=LOAD_RECORD_SCHEMA)
