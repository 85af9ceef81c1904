"""Read KILT knowledge-source pages from any supported input into one shape.

Supported inputs, chosen by ``kilt_path`` alone:

* KILT JSON lines (``kilt_knowledgesource.json``, ``.jsonl``, optionally ``.gz``
  or ``.zst``),
  one file or a directory of shards;
* the Hugging Face ``facebook/kilt_wikipedia`` shape as Parquet (``.parquet``,
  one file or a directory of shards);
* a folder written by ``datasets.Dataset.save_to_disk`` or ``DatasetDict``;
* ``hf://<dataset name>[:<config>[:<split>]]``, loaded with
  ``datasets.load_dataset`` (needs the hub or a local ``datasets`` cache).

Every shape becomes the same raw page rows (:data:`RAW_PAGE_SCHEMA`): one row per
input line or record, numbered in input order (``page_order``: files in name
order, then lines), with a ``reject_reason`` that is NULL for a usable page and
names the problem otherwise, so no line is ever dropped silently. JSON is read
line by line with explicit column types (never sampled), and history integers
become decimal text, so both shapes give identical pages.
"""

from __future__ import annotations

import gzip
import hashlib
import queue
import re
import threading
import zlib
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import duckdb
import numpy as np
import pyarrow as pa

from kilt_chunks.sql_templates import json_lines_macros

__all__ = [
    "InputKind",
    "KiltInputError",
    "LINES_PER_BLOCK",
    "LOADER_ALLOCATOR_SETTINGS",
    "LOADER_MEMORY_LIMIT",
    "MAX_LINE_BYTES",
    "RAW_PAGE_SCHEMA",
    "READ_AHEAD_BATCHES",
    "READ_BYTES",
    "UNREADABLE_INPUT",
    "detect_input_kind",
    "explain_read_error",
    "input_signature",
    "kilt_page_batches",
    "read_kilt_pages",
]

InputKind = Literal["jsonl", "parquet", "mixed", "hf_disk", "hf_hub"]

#: Memory cap of the loader's private DuckDB connection. It uses what the pages
#: of one vector (2,048 lines) need while they are parsed: about 0.5 GB on
#: KILT-sized pages, but 400 pages of 1 MB in a row need more than 1 GB.
LOADER_MEMORY_LIMIT = "1500MB"
#: DuckDB settings of the loader's connection besides threads and memory: give
#: freed memory back to the system early (measured on a 1 GB corpus: peak RSS of
#: the loader 0.56-0.59 GiB instead of 0.60-0.76 GiB, same speed).
LOADER_ALLOCATOR_SETTINGS: dict[str, str | int | float | list[str]] = {
    "allocator_flush_threshold": "32MB",
    "allocator_background_threads": True,
}

#: Largest JSON line accepted (bytes). KILT has pages of tens of MB.
MAX_LINE_BYTES = 64 * 1024 * 1024

#: Columns of the raw page table, in order.
RAW_PAGE_SCHEMA = pa.schema(
    [
        ("page_order", pa.int64()),
        ("source_file", pa.string()),
        ("line_number", pa.int64()),
        ("kilt_id", pa.string()),
        ("wikipedia_id", pa.string()),
        ("wikipedia_title", pa.string()),
        ("text", pa.list_(pa.string())),
        ("categories", pa.string()),
        ("pageid", pa.string()),
        ("parentid", pa.string()),
        ("revid", pa.string()),
        ("timestamp", pa.string()),
        ("url", pa.string()),
        ("wikidata_id", pa.string()),
        ("reject_reason", pa.string()),
    ]
)

_JSON_SUFFIXES = (
    ".json",
    ".jsonl",
    ".json.gz",
    ".jsonl.gz",
    ".json.zst",
    ".jsonl.zst",
    ".ndjson",
)


class KiltInputError(ValueError):
    """The KILT input cannot be read at all (missing path, unknown format)."""


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _json_files(path: Path) -> list[Path]:
    return [p for p in _folder_files(path) if _is_json_name(p)]


def _is_json_name(file: Path) -> bool:
    return file.name.lower().endswith(_JSON_SUFFIXES)


def _is_parquet_name(file: Path) -> bool:
    return file.name.lower().endswith(".parquet")


def _folder_files(path: Path) -> list[Path]:
    """The shards of a folder in name order: every visible entry that is a
    JSON lines or Parquet file (a folder may mix both).

    Raises:
        KiltInputError: If the folder holds any other visible entry (a file of
            another kind, a subfolder), naming each one, so that no part of the
            input is skipped without a word. Names starting with ``.`` are
            ignored (hidden files, editors' and tools' own files).
    """
    entries = sorted(p for p in path.iterdir() if not p.name.startswith("."))
    unreadable = [
        p.name + ("/" if p.is_dir() else "")
        for p in entries
        if not (p.is_file() and (_is_json_name(p) or _is_parquet_name(p)))
    ]
    if unreadable:
        shown = ", ".join(unreadable[:5]) + (
            f" and {len(unreadable) - 5:,} more" if len(unreadable) > 5 else ""
        )
        raise KiltInputError(
            f"kilt_path {str(path)!r}: cannot read {shown}: a folder of shards "
            "must hold only .json/.jsonl/.ndjson(.gz) and .parquet files "
            "(move the others out, or point kilt_path at one file)"
        )
    return entries


def detect_input_kind(kilt_path: str) -> InputKind:
    """Tell which reader a ``kilt_path`` needs.

    Args:
        kilt_path: A file, a directory of shards, a ``save_to_disk`` folder, or
            ``hf://<name>``.

    Returns:
        ``"jsonl"``, ``"parquet"``, ``"mixed"`` (a folder of JSON lines and
        Parquet shards, each file read by its own reader, in name order),
        ``"hf_disk"`` or ``"hf_hub"``.

    Raises:
        KiltInputError: If the path does not exist, is a file or directory
            with no recognised KILT content, or a folder of shards holding
            anything else besides them (see :func:`_folder_files`).
    """
    if kilt_path.startswith("hf://"):
        return "hf_hub"
    path = Path(kilt_path)
    if not path.exists():
        raise KiltInputError(f"kilt_path {kilt_path!r}: no such file or directory")
    if path.is_dir():
        if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
            return "hf_disk"
        files = _folder_files(path)
        has_json = any(_is_json_name(p) for p in files)
        has_parquet = any(_is_parquet_name(p) for p in files)
        if has_json and has_parquet:
            return "mixed"
        if has_json:
            return "jsonl"
        if has_parquet:
            return "parquet"
        raise KiltInputError(
            f"kilt_path {kilt_path!r}: directory holds no .json/.jsonl(.gz), "
            ".parquet or datasets save_to_disk files"
        )
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(_JSON_SUFFIXES) or name.endswith(".gz"):
        return "jsonl"
    with path.open("rb") as f:
        head = f.read(4)
    if head == b"PAR1":
        return "parquet"
    if (
        head[:2] == b"\x1f\x8b"
        or head == _ZSTD_MAGIC
        or head[:1] in (b"{", b"", _BOM[:1])
    ):
        return "jsonl"
    raise KiltInputError(
        f"kilt_path {kilt_path!r}: not KILT JSON lines or Parquet "
        "(expected .json, .jsonl, .gz or .parquet)"
    )


def _input_files(kilt_path: str, kind: InputKind) -> list[Path]:
    """The files of a ``jsonl``, ``parquet`` or ``mixed`` input, in read order."""
    path = Path(kilt_path)
    if not path.is_dir():
        return [path]
    return _folder_files(path)


def _is_parquet_file(file: Path, kind: InputKind) -> bool:
    """Whether ``file`` of an input of ``kind`` is read as Parquet."""
    return kind == "parquet" or (kind == "mixed" and _is_parquet_name(file))


#: Lines read per block by the JSON lines reader (and parsed by one query).
LINES_PER_BLOCK = 2048

#: Name under which each block of lines is registered for :func:`_jsonl_query`.
_LINES_RELATION = "kilt_line_block"

_LINE_BLOCK_SCHEMA = pa.schema([("line", pa.string()), ("read_error", pa.string())])


#: Bytes read at a time by the JSON lines reader.
READ_BYTES = 8 * 2**20


#: The UTF-8 byte order mark; one at the very start of a file is skipped.
_BOM = b"\xef\xbb\xbf"


def _line_blocks(file: Path) -> Generator[pa.Table, None, None]:
    """The lines of a JSON lines file (plain or gzip), at most
    :data:`LINES_PER_BLOCK` at a time: columns ``line`` and ``read_error``.

    Lines are split at LF only and keep their line end (LF or CRLF: white
    space to JSON; any other CR, or NUL, stays in its line, where the JSON
    check rejects it). A UTF-8 byte order mark at the start of the file is
    skipped (editors on Windows write one). A line that is not UTF-8 is kept
    as a NULL line with ``read_error`` "invalid UTF-8 bytes", one longer than
    :data:`MAX_LINE_BYTES` as "line longer than ... bytes": each is one
    rejected row, and the lines after it keep their numbers. A line is never
    held whole beyond that limit: once :data:`MAX_LINE_BYTES` of it are read
    without its end, the rest is skipped as it is read, so memory stays
    within about ``MAX_LINE_BYTES + READ_BYTES`` whatever the line. The lines
    are found with NumPy and become an Arrow string array over the bytes read
    (no copy); Arrow checks the UTF-8, and only a block holding a bad line is
    decoded line by line.

    Raises:
        OSError, EOFError, zlib.error: If the file cannot be read (a truncated
            gzip file).
    """
    with _open_lines(file) as f:
        rest = b""
        skipping = False  # inside a line already longer than MAX_LINE_BYTES
        first = True
        while chunk := f.read(READ_BYTES):
            if first:
                first = False
                if chunk.startswith(_BOM):
                    chunk = chunk[len(_BOM) :]
            data = rest + chunk if rest else chunk
            ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1
            if skipping:
                if len(ends) == 0:
                    rest = b""
                    continue
                skipping = False
                yield _too_long_block()
                data = data[int(ends[0]) :]
                ends = ends[1:] - ends[0]
            if len(ends) == 0:
                if len(data) > MAX_LINE_BYTES:
                    skipping, rest = True, b""
                else:
                    rest = data
                continue
            rest = data[int(ends[-1]) :]
            yield from _blocks(data, ends)
            if len(rest) > MAX_LINE_BYTES:
                skipping, rest = True, b""
        if skipping:
            yield _too_long_block()
        elif rest:
            yield from _blocks(rest, np.array([len(rest)]))


_TOO_LONG = f"line longer than {MAX_LINE_BYTES:,} bytes"


def _too_long_block() -> pa.Table:
    """The one rejected row that stands for a line over :data:`MAX_LINE_BYTES`."""
    return pa.table([[None], [_TOO_LONG]], schema=_LINE_BLOCK_SCHEMA)


def _blocks(data: bytes, ends: np.ndarray) -> Iterator[pa.Table]:
    """Lines ``data[ends[k-1]:ends[k]]`` (``ends[-1]`` at most ``len(data)``)
    as blocks of :data:`LINES_PER_BLOCK`, bad lines marked."""
    offsets = np.concatenate([[0], ends]).astype(np.int32)
    lines = pa.StringArray.from_buffers(
        len(ends), pa.py_buffer(offsets), pa.py_buffer(data)
    )
    too_long = bool((np.diff(offsets) > MAX_LINE_BYTES).any())
    for start in range(0, len(ends), LINES_PER_BLOCK):
        block = lines.slice(start, LINES_PER_BLOCK)
        errors = pa.nulls(len(block), pa.string())
        if not too_long:
            try:
                block.validate(full=True)
                yield pa.table([block, errors], schema=_LINE_BLOCK_SCHEMA)
                continue
            except pa.ArrowInvalid:
                pass  # some line is not UTF-8: find it below
        yield _decoded_block(block.cast(pa.binary()).to_pylist())


def _decoded_block(lines: list[bytes]) -> pa.Table:
    """A block holding a bad line, decoded line by line (see _line_blocks)."""
    texts: list[str | None] = []
    reasons: list[str | None] = []
    for line in lines:
        if len(line) > MAX_LINE_BYTES:
            texts.append(None)
            reasons.append(_TOO_LONG)
            continue
        try:
            texts.append(line.decode("utf-8"))
            reasons.append(None)
        except UnicodeDecodeError:
            texts.append(None)
            reasons.append("invalid UTF-8 bytes")
    return pa.table([texts, reasons], schema=_LINE_BLOCK_SCHEMA)


def _is_gzip(file: Path) -> bool:
    with file.open("rb") as f:
        return f.read(2) == b"\x1f\x8b"


#: The magic number of a Zstandard frame.
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _open_lines(file: Path) -> Any:
    """``file`` opened for binary reads, decompressed when it is gzip or
    Zstandard (by its first bytes; Zstandard through pyarrow's codec)."""
    with file.open("rb") as f:
        head = f.read(4)
    if head[:2] == b"\x1f\x8b":
        return gzip.open(file, "rb")
    if head == _ZSTD_MAGIC:
        return pa.input_stream(str(file), compression="zstd")
    return file.open("rb")


def _jsonl_batches(
    con: duckdb.DuckDBPyConnection, file: Path, batch_size: int
) -> Iterator[pa.RecordBatch]:
    """Raw page rows of one JSON lines file, parsed block by block.

    Raises:
        KiltInputError: If the file cannot be read on (a truncated or corrupt
            gzip file), naming the file and the line reached.
    """
    query = _jsonl_query(file)
    # Read and split in a thread of their own, a few blocks ahead of parsing.
    blocks = _read_ahead(_line_blocks(file))
    lines_done = 0
    while True:
        try:
            block = next(blocks, None)
        except (OSError, EOFError, zlib.error) as exc:
            problem = (
                "truncated or corrupt gzip file (a partial download?): "
                if _is_gzip(file)
                else ""
            )
            raise KiltInputError(
                f"file {file}, after line {lines_done:,}: {problem}{exc}"
            ) from exc
        if block is None:
            break
        lines_done += block.num_rows
        con.register(_LINES_RELATION, block)
        yield from con.sql(query).to_arrow_table().to_batches(batch_size)
    con.unregister(_LINES_RELATION)


def _jsonl_query(file: Path) -> str:
    """The parse of one block of ``file``'s lines (registered as
    :data:`_LINES_RELATION`): the macro ``page_lines_parsed`` of
    ``sql/json_lines.sql`` (:mod:`kilt_chunks.sql_templates`)."""
    return str(
        json_lines_macros().page_lines_parsed(_sql_str(str(file)), _LINES_RELATION)
    )


def _hf_shape_query(relation: str) -> str:
    """Normalise rows of the ``facebook/kilt_wikipedia`` shape to raw pages
    (the macro ``hf_pages_parsed`` of ``sql/json_lines.sql``)."""
    return str(json_lines_macros().hf_pages_parsed(relation))


def _parquet_query(file: Path) -> str:
    return _hf_shape_query(
        f"(select *, {_sql_str(str(file))} as source_file"
        f" from read_parquet({_sql_str(str(file))}))"
    )


def _load_hf_dataset(kilt_path: str) -> pa.Table:
    import datasets

    if kilt_path.startswith("hf://"):
        name, _, rest = kilt_path[len("hf://") :].partition(":")
        config, _, split = rest.partition(":")
        ds = datasets.load_dataset(name, config or None, split=split or "full")
    else:
        ds = datasets.load_from_disk(kilt_path)
    if isinstance(ds, datasets.DatasetDict):
        split = "full" if "full" in ds else next(iter(ds))
        ds = ds[split]
    return ds.with_format("arrow")[:]


def kilt_page_batches(
    con: duckdb.DuckDBPyConnection, kilt_path: str, batch_size: int = 2048
) -> Iterator[Iterator[pa.RecordBatch]]:
    """Raw page rows of ``kilt_path`` as Arrow batches, one iterator per file.

    Args:
        con: Connection that runs the parsing queries.
        kilt_path: Input path (see module docstring).
        batch_size: Most rows per batch.

    Yields:
        Per input file (in name order), an iterator of batches with the
        columns of :data:`RAW_PAGE_SCHEMA` except ``page_order`` and
        ``line_number``: one row per input line (JSON) or record (Parquet,
        datasets), in input order.

    Raises:
        KiltInputError: If the path is missing or not a KILT input.
    """
    kind = detect_input_kind(kilt_path)
    if kind in ("jsonl", "parquet", "mixed"):
        for file in _input_files(kilt_path, kind):
            if _is_parquet_file(file, kind):
                yield iter(con.sql(_parquet_query(file)).to_arrow_reader(batch_size))
            else:
                yield _jsonl_batches(con, file, batch_size)
        return
    table = _load_hf_dataset(kilt_path)
    con.register("kilt_hf_pages", table)
    yield iter(
        con.sql(
            _hf_shape_query(
                f"(select *, {_sql_str(kilt_path)} as source_file from kilt_hf_pages)"
            )
        ).to_arrow_reader(batch_size)
    )


def explain_read_error(kilt_path: str, exc: Exception) -> KiltInputError:
    """Turn a DuckDB read error (Parquet, ``datasets``) into a short message
    naming the input and the problem (JSON lines files are read and their
    errors named by :func:`_jsonl_batches`).

    Args:
        kilt_path: The input being read.
        exc: The error DuckDB raised while reading it.

    Returns:
        A :class:`KiltInputError` to raise (the original is kept as its cause).
    """
    message = str(exc)
    file_match = re.search(r"file = (.+)", message)
    where = f"kilt_path {kilt_path!r}"
    if file_match:
        where += f": file {file_match.group(1).strip()}"
    return KiltInputError(f"{where}: {message.splitlines()[0]}")


def _check_not_empty(kilt_path: str, kind: InputKind) -> None:
    if kind not in ("jsonl", "mixed"):
        return
    files = _input_files(kilt_path, kind)
    if any(_is_parquet_file(file, kind) for file in files):
        return  # Parquet shards: read (and numbered) record by record
    for file in files:
        if _is_gzip(file):
            with gzip.open(file, "rb") as f:
                try:
                    if f.read(1):
                        return
                except (OSError, EOFError):
                    return  # corrupt: the reader reports it with its file name
        elif file.stat().st_size > 0:
            return
    raise KiltInputError(f"kilt_path {kilt_path!r}: input is empty (no lines to read)")


def input_signature(kilt_path: str) -> str:
    """A short digest of what ``kilt_path`` holds now, without reading it.

    Args:
        kilt_path: Input path (see module docstring).

    Returns:
        16 hex digits over every input file's path, size and modification
        time (a ``datasets`` folder: every file below it; ``hf://``: the name
        itself). The load step (:func:`kilt_chunks.build.page_load.load_pages`)
        records it, and reuses a stored load only when it is unchanged.

    Raises:
        KiltInputError: If the path is missing or not a KILT input.
    """
    kind = detect_input_kind(kilt_path)
    if kind == "hf_hub":
        files: list[Path] = []
    elif kind == "hf_disk":
        files = sorted(p for p in Path(kilt_path).rglob("*") if p.is_file())
    else:
        files = _input_files(kilt_path, kind)
    # Paths resolved: the same file spelt another way is the same input.
    where = kilt_path if kind == "hf_hub" else str(Path(kilt_path).resolve())
    digest = hashlib.sha256(where.encode("utf-8", "surrogatepass"))
    for file in files:
        stat = file.stat()
        digest.update(
            f"\n{file.resolve()}\t{stat.st_size}\t{stat.st_mtime_ns}".encode(
                "utf-8", "surrogatepass"
            )
        )
    return digest.hexdigest()[:16]


#: Prefix of the reject reason of the row that marks an unreadable input, pages
#: or task files (the macro ``unreadable_input_marker`` of
#: ``sql/json_lines.sql``, which the build's post-hooks look for).
UNREADABLE_INPUT = str(json_lines_macros().unreadable_input_marker())


def read_kilt_pages(
    kilt_path: str, batch_size: int = 2048, *, on_error: str = "raise"
) -> pa.RecordBatchReader:
    """Stream raw page rows of ``kilt_path`` as Arrow record batches.

    Runs on a private in-memory DuckDB connection, so it works inside a dbt
    Python model, a notebook or a test alike.

    Args:
        kilt_path: Input path (see module docstring).
        batch_size: Rows per Arrow batch.
        on_error: ``"raise"`` raises :class:`KiltInputError` when a file turns
            out unreadable mid-stream; ``"row"`` ends the stream with one row
            whose ``reject_reason`` starts with :data:`UNREADABLE_INPUT` (the
            load step uses it, and a post-hook stops the build on it with the
            plain message instead of a traceback through DuckDB's Arrow scan).

    Returns:
        A reader with schema :data:`RAW_PAGE_SCHEMA`.

    Raises:
        KiltInputError: With ``on_error="raise"``, if the path is missing,
            empty or not a KILT input, or a file cannot be read on (a
            truncated gzip file; the message names the file, the line reached,
            and the problem).
    """
    try:
        _check_not_empty(kilt_path, detect_input_kind(kilt_path))
    except KiltInputError as error:
        if on_error != "row":
            raise
        return pa.RecordBatchReader.from_batches(
            RAW_PAGE_SCHEMA, iter([_unreadable_row(kilt_path, 1, error)])
        )
    # One thread: the scan then streams lines in order without buffering ahead
    # of the consumer (a parallel order-preserving scan would hold results).
    con = duckdb.connect(
        config={
            "threads": 1,
            "memory_limit": LOADER_MEMORY_LIMIT,
            **LOADER_ALLOCATOR_SETTINGS,
        }
    )
    # Parsed in a background thread, a few batches ahead, so parsing overlaps
    # with whatever the consumer does with each batch (the load step compresses
    # and writes it to the scratch database).
    return pa.RecordBatchReader.from_batches(
        RAW_PAGE_SCHEMA,
        _read_ahead(_numbered_batches(kilt_path, con, batch_size, on_error)),
    )


#: Batches parsed ahead of the consumer (bounds the loader's extra memory).
READ_AHEAD_BATCHES = 4

T = TypeVar("T")


def _read_ahead(
    batches: Generator[T, None, None], depth: int = READ_AHEAD_BATCHES
) -> Iterator[T]:
    """Yield ``batches``, produced by a background thread ``depth`` items ahead.

    Errors raised by ``batches`` are re-raised here, in order. If the consumer
    stops early, the thread stops at its next batch.
    """
    buffer: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(item: tuple) -> bool:
        """Hand one item over; False once the consumer has gone."""
        while not stop.is_set():
            try:
                buffer.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for batch in batches:
                if not put((batch, None)):
                    return
            put((done, None))
        except BaseException as exc:  # handed to the consumer, raised there
            put((done, exc))
        finally:
            batches.close()

    thread = threading.Thread(target=produce, name="kilt-reader", daemon=True)
    thread.start()
    try:
        while True:
            item, error = buffer.get()
            if item is done:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        thread.join()


def _unreadable_row(
    kilt_path: str, page_order: int, error: Exception
) -> pa.RecordBatch:
    """The one row that ends a stream whose input cannot be read (on_error="row")."""
    row: dict[str, list] = {name: [None] for name in RAW_PAGE_SCHEMA.names}
    row["page_order"] = [page_order]
    row["source_file"] = [kilt_path]
    row["reject_reason"] = [UNREADABLE_INPUT + str(error)]
    return pa.RecordBatch.from_pydict(row, schema=RAW_PAGE_SCHEMA)


def _numbered_batches(
    kilt_path: str, con: duckdb.DuckDBPyConnection, batch_size: int, on_error: str
) -> Generator[pa.RecordBatch, None, None]:
    page_order = 0
    try:
        for batches in kilt_page_batches(con, kilt_path, batch_size):
            line_number = 0
            for batch in batches:
                n = batch.num_rows
                orders = pa.array(range(page_order + 1, page_order + n + 1), pa.int64())
                lines = pa.array(
                    range(line_number + 1, line_number + n + 1), pa.int64()
                )
                page_order += n
                line_number += n
                columns = dict(zip(batch.schema.names, batch.columns, strict=True))
                columns.update(page_order=orders, line_number=lines)
                yield pa.RecordBatch.from_arrays(
                    [columns[name] for name in RAW_PAGE_SCHEMA.names],
                    names=RAW_PAGE_SCHEMA.names,
                ).cast(RAW_PAGE_SCHEMA)
    except (duckdb.Error, OSError, KiltInputError) as exc:
        # DuckDB's errors (Parquet), and a JSON lines file that cannot be
        # read on (KiltInputError from _jsonl_batches).
        error = (
            KiltInputError(f"kilt_path {kilt_path!r}: {exc}")
            if isinstance(exc, KiltInputError)
            else explain_read_error(kilt_path, exc)
        )
        if on_error != "row":
            raise error from exc
        yield _unreadable_row(kilt_path, page_order + 1, error)
    finally:
        con.close()
