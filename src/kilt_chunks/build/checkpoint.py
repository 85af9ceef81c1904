"""Resumable chunking: commit chunks batch by batch, continue after a kill.

Chunking the full KILT dump takes long enough that a killed build must not start
over. :func:`chunk_sections_resumable` appends each batch's chunks to a
checkpoint table, one insert (one transaction) per batch, through its own
cursor. A rerun with the same sections and settings (same fingerprint, kept in a
one-row state table) resumes after the checkpoint's last row; anything else
starts afresh. Nothing but the insert is written per batch: an UPDATE of the
state row per batch, under the section stream's open read transaction, left
row versions behind that slowed every later update (0.5 s each after ~500
batches at a 128 MiB cap).
Because batches are split in input order and committed in that order, the
committed chunks are always exactly the chunks of a prefix of the sections, so a
resumed build equals an uninterrupted one row for row.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from importlib.metadata import version
from itertools import pairwise

import duckdb
import pyarrow as pa

from kilt_chunks.build.build_info import RECORDED_PACKAGES
from kilt_chunks.build.spans import KILT_SPAN_COLUMNS, kilt_spans
from kilt_chunks.build.splitting import SECTION_CHUNKS_SCHEMA, split_section_pairs
from kilt_chunks.chunking_settings import DEFAULT_CHUNKING, ChunkingSettings
from kilt_chunks.database import memory_limit_at_most, table_exists
from kilt_chunks.defaults import DEFAULT_BATCH_SIZE, DEFAULT_WORKERS

__all__ = [
    "CARRIED_COLUMNS",
    "CHECKPOINT_COLUMNS",
    "CHECKPOINT_TABLE",
    "CHUNKING_MEMORY_LIMIT",
    "SPAN_INPUT_COLUMNS",
    "STATE_TABLE",
    "WINDOW_PAGES",
    "chunk_sections_resumable",
    "sections_fingerprint",
]

#: Table holding committed chunks (one row per section, chunks as lists); kept
#: between builds to allow resuming.
CHECKPOINT_TABLE = "kilt_chunking_checkpoint"
#: One-row table: the fingerprint of the work the checkpoint holds, and its
#: settings (:class:`~kilt_chunks.chunking_settings.ChunkingSettings` as
#: JSON), which the post-hook ``record_chunking_settings`` records.
STATE_TABLE = "kilt_chunking_state"
#: DuckDB memory limit while chunking (bytes), if the build's cap is higher.
#: The step only streams sections out and appends small rows, so DuckDB needs
#: little, and the chunking workers get the rest.
CHUNKING_MEMORY_LIMIT = 128 * 2**20

_COLUMNS_DDL = """
    page_order bigint,
    wikipedia_id varchar,
    section_order integer,
    num_chunks integer,
    chunk_start_chars bigint[],
    chunk_end_chars bigint[],
    chunk_num_tokens integer[],
    chunk_texts varchar[],
    section_text_hash ubigint,
    section_text_bytes bigint,
    start_paragraph_id integer,
    end_paragraph_id integer,
    chunk_start_paragraph_ids integer[],
    chunk_start_characters integer[],
    chunk_end_paragraph_ids integer[],
    chunk_end_characters integer[]
"""

#: Section columns carried from the sections into the checkpoint beside the
#: chunks (SQL expressions over the section relation), so that the models
#: after ``kilt_chunks`` need no table holding section text:
#: ``section_text_hash`` (DuckDB's ``hash(section_text)``, which
#: ``kilt_chunks`` checks when it pairs sections with their offsets),
#: ``section_text_bytes`` (for the audit) and the section's KILT paragraph
#: range.
CARRIED_COLUMNS = {
    "section_text_hash": "hash(section_text)",
    "section_text_bytes": "strlen(section_text)",
    "start_paragraph_id": "start_paragraph_id",
    "end_paragraph_id": "end_paragraph_id",
}

#: Section columns read with the sections to give each chunk its KILT span
#: (:func:`kilt_chunks.build.spans.kilt_spans`), and not stored.
SPAN_INPUT_COLUMNS = ("paragraph_text_lengths", "paragraph_start_characters")

#: Columns of the checkpoint (and of ``int_sections_chunked``): the chunk
#: lists of :data:`~kilt_chunks.build.splitting.SECTION_CHUNKS_SCHEMA`, then
#: :data:`CARRIED_COLUMNS`, then each chunk's KILT span
#: (:data:`~kilt_chunks.build.spans.KILT_SPAN_COLUMNS`), which ``kilt_chunk_spans``
#: only unnests.
CHECKPOINT_COLUMNS = (
    *SECTION_CHUNKS_SCHEMA.names,
    *CARRIED_COLUMNS,
    *KILT_SPAN_COLUMNS,
)


def sections_fingerprint(
    sections: duckdb.DuckDBPyRelation, settings: ChunkingSettings
) -> tuple[str, int, int]:
    """Identify the chunking work: the sections' content and the settings.

    Args:
        sections: Relation with page_order, section_order, section_text (and
            optionally paragraph_text_lengths).
        settings: The chunking settings, every field
            (:meth:`~kilt_chunks.chunking_settings.ChunkingSettings.fingerprint`:
            a tokenizer file enters with its content digest).

    Returns:
        ``(fingerprint, num_sections, total_bytes)``; the fingerprint is an
        order-independent digest of every (page_order, section_order,
        wikipedia_id, text, paragraph lengths) plus the settings, package
        versions and output columns, so a changed input (a changed page id,
        or texts moved between sections, too), setting, splitter version or
        schema never resumes.

    Each section's fields are joined into one string and that string hashed:
    DuckDB's ``hash`` of several values (or of a struct, list or row) combines
    the last with a plain XOR, so an XOR over sections of
    ``hash(key..., text)`` stays the same when two sections swap texts.
    """
    # The paragraph lengths (where given) decide the KILT spans stored too.
    lengths = (
        " || ':' || coalesce(paragraph_text_lengths::varchar, '')"
        if "paragraph_text_lengths" in sections.columns
        else ""
    )
    num_sections, digest, total_bytes = sections.aggregate(
        "count(*),"
        " bit_xor(hash(page_order::varchar || ':' || section_order::varchar"
        " || ':' || coalesce(wikipedia_id, '') || ':' || hash(section_text)::varchar"
        f"{lengths})),"
        " coalesce(sum(strlen(section_text)), 0)"
    ).fetchall()[0]
    versions = ":".join(version(p) for p in RECORDED_PACKAGES)
    columns = ",".join(CHECKPOINT_COLUMNS)
    fingerprint = (
        f"{settings.fingerprint()}:{versions}:{columns}:"
        f"{num_sections}:{digest}:{total_bytes}"
    )
    return fingerprint, int(num_sections), int(total_bytes)


def _prepare(
    cursor: duckdb.DuckDBPyConnection,
    fingerprint: str,
    settings: ChunkingSettings,
    restart: bool,
) -> tuple[int, int]:
    """Start afresh or resume; return the last (page_order, section_order) done.

    The checkpoint is appended in input order, so its largest key is the last
    section committed ((-1, -1) when empty or restarted).
    """
    cursor.execute(f"create table if not exists {STATE_TABLE} (fingerprint varchar)")
    state = cursor.execute(f"select fingerprint from {STATE_TABLE}").fetchall()
    has_checkpoint = table_exists(cursor, CHECKPOINT_TABLE)
    if restart or state != [(fingerprint,)] or not has_checkpoint:
        cursor.execute("begin transaction")
        # Recreated, not emptied: an older build may have had other columns.
        cursor.execute(f"create or replace table {CHECKPOINT_TABLE} ({_COLUMNS_DDL})")
        cursor.execute(
            f"create or replace table {STATE_TABLE}"
            " (fingerprint varchar, settings varchar)"
        )
        cursor.execute(
            f"insert into {STATE_TABLE} values (?, ?)",
            [fingerprint, settings.model_dump_json()],
        )
        cursor.execute("commit")
        return -1, -1
    last = cursor.execute(
        f"select page_order, section_order from {CHECKPOINT_TABLE}"
        " order by page_order desc, section_order desc limit 1"
    ).fetchall()
    return (int(last[0][0]), int(last[0][1])) if last else (-1, -1)


def _checked_order(
    batches: Iterator[pa.RecordBatch], after: tuple[int, int]
) -> Iterator[pa.RecordBatch]:
    previous = after
    for batch in batches:
        if batch.num_rows == 0:
            continue
        keys = list(
            zip(
                batch.column("page_order").to_pylist(),
                batch.column("section_order").to_pylist(),
                strict=True,
            )
        )
        if keys[0] <= previous or any(a >= b for a, b in pairwise(keys)):
            raise ValueError(
                "sections are not in (page_order, section_order) order after "
                f"{previous}: int_sections_assembled is stored in the order DuckDB "
                "keeps through a one-table select, and this DuckDB did not keep "
                "it (is the staging model still a one-table select?)"
            )
        previous = keys[-1]
        yield batch


#: Pages per query of the sections (see :func:`_windowed`): about 60 MB of
#: section text on KILT's pages, held in memory while it is chunked.
WINDOW_PAGES = 25_000


def _windowed(
    sections: duckdb.DuckDBPyRelation, batch_size: int
) -> Iterator[pa.RecordBatch]:
    """Read ``sections`` in page_order windows of :data:`WINDOW_PAGES`, one
    query each, fetched whole, in order.

    One streaming query over all sections would hold its read transaction
    open for the whole chunking step, and while a read is open DuckDB cannot
    checkpoint the appended checkpoint rows: they pile up in memory until a
    commit fails ("failed to pin block", seen after 11 M sections at the
    128 MiB cap on the full dump; after 344,000 at 16 MiB on the 1 GB
    benchmark corpus). Each window's query ends before its chunks are
    appended, so the appends are checkpointed as the step goes. The table is
    stored in page order, so each window reads only its own row groups (zone
    maps).
    """
    bounds = sections.aggregate("min(page_order), max(page_order)").fetchall()[0]
    if bounds[0] is None:
        return
    for low in range(int(bounds[0]), int(bounds[1]) + 1, WINDOW_PAGES):
        window = sections.filter(
            f"page_order >= {low} and page_order < {low + WINDOW_PAGES}"
        )
        # Fetched whole, so the query (and its transaction) ends here, before
        # any of these sections' chunks is appended.
        yield from window.to_arrow_table().to_batches(batch_size)


def _keeping_carried(
    batches: Iterator[pa.RecordBatch], carried: deque[dict[str, pa.Array]]
) -> Iterator[pa.RecordBatch]:
    """Yield the batches, queueing each one's :data:`CARRIED_COLUMNS` and
    :data:`SPAN_INPUT_COLUMNS` (by name)."""
    for batch in batches:
        carried.append(
            {
                name: batch.column(name)
                for name in (*CARRIED_COLUMNS, *SPAN_INPUT_COLUMNS)
            }
        )
        yield batch


def _chunk_into_checkpoint(
    cursor: duckdb.DuckDBPyConnection,
    sections: duckdb.DuckDBPyRelation,
    *,
    settings: ChunkingSettings,
    workers: int,
    batch_size: int,
    progress_seconds: float,
    restart: bool,
) -> None:
    """Chunk the sections not yet in the checkpoint, committing per batch."""
    fingerprint, _, total_bytes = sections_fingerprint(sections, settings)
    last_page, last_section = _prepare(cursor, fingerprint, settings, restart)
    todo = sections.filter(
        f"page_order > {int(last_page)} or "
        f"(page_order = {int(last_page)} and section_order > {int(last_section)})"
    )
    # Only a resumed build has work done already (for the progress ETA); a
    # fresh one need not scan the section text a second time.
    done_bytes = 0
    if last_page >= 0:
        done_bytes = (
            sections.filter(
                f"page_order < {int(last_page)} or (page_order = {int(last_page)}"
                f" and section_order <= {int(last_section)})"
            )
            .aggregate("coalesce(sum(strlen(section_text)), 0)")
            .fetchall()[0][0]
        )
    carried: deque[dict[str, pa.Array]] = deque()
    batches = _keeping_carried(
        _checked_order(_windowed(todo, batch_size), (last_page, last_section)),
        carried,
    )
    pairs = split_section_pairs(
        batches,
        settings=settings,
        workers=workers,
        total_bytes=total_bytes,
        done_bytes=int(done_bytes),
        progress_seconds=progress_seconds,
        by_section=True,
    )
    for _, chunk_batch in pairs:
        # Pairs come back in input order: the oldest carried columns are this
        # batch's.
        section = carried.popleft()
        spans = kilt_spans(
            chunk_batch.column("chunk_start_chars"),
            chunk_batch.column("chunk_end_chars"),
            section["start_paragraph_id"],
            section["paragraph_text_lengths"],
            section["paragraph_start_characters"],
            chunk_batch.column("wikipedia_id"),
            chunk_batch.column("section_order"),
        )
        rows = pa.RecordBatch.from_arrays(
            [
                *chunk_batch.columns,
                *(section[name] for name in CARRIED_COLUMNS),
                *spans,
            ],
            names=list(CHECKPOINT_COLUMNS),
        )
        # One statement: the batch is committed whole or not at all.
        cursor.register("kilt_chunk_batch", pa.Table.from_batches([rows]))
        cursor.execute(f"insert into {CHECKPOINT_TABLE} select * from kilt_chunk_batch")
        cursor.unregister("kilt_chunk_batch")


def chunk_sections_resumable(
    con: duckdb.DuckDBPyConnection,
    sections: duckdb.DuckDBPyRelation,
    *,
    settings: ChunkingSettings = DEFAULT_CHUNKING,
    workers: int = DEFAULT_WORKERS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress_seconds: float = 0,
    restart: bool = False,
) -> duckdb.DuckDBPyRelation:
    """Chunk every section, committing per batch, and return all chunks.

    Args:
        con: Connection of the database that holds ``sections``.
        sections: Relation with page_order, wikipedia_id, section_order,
            section_text and, in the dbt project, start_paragraph_id,
            end_paragraph_id, paragraph_text_lengths and
            paragraph_start_characters (see
            :func:`kilt_chunks.build.spans.kilt_spans`), stored in
            (page_order, section_order) order.
        settings: The chunking settings (built once by the caller: in the
            dbt project, :meth:`ChunkingSettings.for_build`).
        workers: Worker processes (0 = one per core).
        batch_size: Sections per batch (and per commit).
        progress_seconds: Seconds between progress lines; 0 is quiet.
        restart: Discard any checkpoint (``dbt build --full-refresh``).

    Returns:
        A relation over the checkpoint table (:data:`CHECKPOINT_COLUMNS`: one
        row per section, its chunks' offsets and token counts as lists, no
        text, and the :data:`CARRIED_COLUMNS` of its section),
        scanning in (page_order, section_order) order, the order of
        ``sections``.

    Raises:
        ValueError: If the sections are not stored in order, or a section gives
            no chunk.
    """
    # Outside dbt, sections without paragraph ranges or lengths carry NULLs
    # there (and get no KILT spans).
    missing = {
        "start_paragraph_id": "null::integer",
        "end_paragraph_id": "null::integer",
        "paragraph_text_lengths": "null::integer[]",
        "paragraph_start_characters": "null::integer[]",
    }
    read = {
        name: missing[name] if name in missing and name not in sections.columns else sql
        for name, sql in {
            **CARRIED_COLUMNS,
            **{name: name for name in SPAN_INPUT_COLUMNS},
        }.items()
    }
    sections = sections.select(
        "page_order, wikipedia_id, section_order, section_text, "
        + ", ".join(f"{sql} as {name}" for name, sql in read.items())
    )
    cursor = con.cursor()
    # The fingerprint scan and the streaming need no more: DuckDB then keeps
    # few cached pages beside the workers.
    with memory_limit_at_most(cursor, CHUNKING_MEMORY_LIMIT):
        _chunk_into_checkpoint(
            cursor,
            sections,
            settings=settings,
            workers=workers,
            batch_size=batch_size,
            progress_seconds=progress_seconds,
            restart=restart,
        )
    cursor.close()
    columns = ", ".join(CHECKPOINT_COLUMNS)
    # Committed in input order, so a scan returns (page, section) order.
    return con.sql(f"select {columns} from {CHECKPOINT_TABLE}")
