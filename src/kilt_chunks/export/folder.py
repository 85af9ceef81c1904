"""The export: a Hugging Face dataset folder of the built tables.

Layout of ``export_dir`` (a dataset repository, uploadable as it is)::

    README.md                                   dataset card (export.card)
    figures/<name>.png                          corpus figures (export.figures)
    data/<config>/train-00000-of-000NN.parquet  one folder per config

One config per entry of :data:`EXPORT_TABLES`, in table order across file
names (zero-padded, so name order is row order). Every file of a config has
the config's explicit Arrow schema, whatever the data, so the files of two
builds concatenate: the schema of its built table (:func:`table_schema`),
whose enforced dbt contract (``models/marts/**/*.yml``: types, and
``not_null`` constraints where SPEC says never NULL) is the only declaration
of an exported table's columns.

The new export is written whole into a sibling staging folder,
``<parent>/.<name>.partial/``; the files of ``export_dir`` the export does not
write (the qrels, a user's notes) are linked into it; then the two folders are
exchanged in one atomic step (:func:`replace_folder`). At every instant
``export_dir`` is one whole export, the previous or the new one: a failed or
killed export leaves the previous one whole, and the next run removes what it
left behind. ``.kilt_chunks_export.json`` in the folder names the database
that wrote it (:mod:`kilt_chunks.ownership`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kilt_chunks.settings import export_dir_problem

__all__ = [
    "CARD_FILE",
    "ARROW_TYPES",
    "DATA_DIR",
    "EXPORT_FILES_SCHEMA",
    "EXPORT_TABLES",
    "ExportSchemaError",
    "ExportTable",
    "ExportedConfig",
    "FETCH_ROWS",
    "FIGURES_DIR",
    "MAX_FILE_BYTES",
    "OWNER_FILE",
    "PARTIAL_DIR",
    "ROW_GROUP_ROWS",
    "SPLIT",
    "TASK_SPLITS",
    "ZSTD_LEVEL",
    "EXPORT_ENTRIES",
    "arrow_type",
    "carry_over",
    "column_descriptions",
    "config_files",
    "task_split",
    "export_root",
    "export_schemas",
    "files_table",
    "finish_export",
    "parquet_file_name",
    "file_names",
    "prepare_export_dir",
    "remove_leftovers",
    "replace_folder",
    "staging_folder",
    "start_export",
    "table_schema",
    "write_config",
    "write_parquet_files",
]

_TEXT = pa.string()

#: DuckDB's name of each column type an exported table may have (as
#: ``duckdb_columns().data_type`` spells it) and its Arrow type: the export's
#: one type mapping. A list type ``T[]`` is a list of T's Arrow type
#: (:func:`arrow_type`).
ARROW_TYPES: dict[str, pa.DataType] = {
    "VARCHAR": _TEXT,
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "BOOLEAN": pa.bool_(),
    "DOUBLE": pa.float64(),
}


class ExportSchemaError(ValueError):
    """A column of an exported table has a type without an Arrow type."""


def arrow_type(duckdb_type: str, nullable: bool) -> pa.DataType:
    """The Arrow type of a DuckDB column type (:data:`ARROW_TYPES`).

    A list ``T[]`` (any depth) is an Arrow list of T's type whose elements
    take the column's nullability, which DuckDB cannot declare for list
    elements: a NOT NULL list (``kilt_chunks.section``) holds no NULL
    element (child ``element``, Parquet's name for it), a nullable one may
    (child ``item``, Arrow's default), as the export has always written them.

    Args:
        duckdb_type: DuckDB's type name, e.g. ``VARCHAR`` or ``VARCHAR[][]``.
        nullable: Whether the column may be NULL.

    Raises:
        KeyError: If the type (or the list's element type) has no mapping.
    """
    if duckdb_type.endswith("[]"):
        element = arrow_type(duckdb_type[:-2], nullable)
        if nullable:
            return pa.list_(element)
        return pa.list_(pa.field("element", element, nullable=False))
    return ARROW_TYPES[duckdb_type]


def table_schema(
    con: duckdb.DuckDBPyConnection,
    table: str,
    *,
    database: str | None = None,
    schema: str | None = None,
) -> pa.Schema:
    """The Arrow schema of a built table, from DuckDB's catalog: its columns
    in order, each :func:`arrow_type` of its type, NOT NULL where the table
    declares it (the ``not_null`` constraints of the model's enforced dbt
    contract).

    Args:
        con: A connection that sees the table.
        table: Table name.
        database: Its database (default: the connection's current one).
        schema: Its schema (default: the current one).

    Raises:
        LookupError: If there is no such table.
        ExportSchemaError: If a column's type has no Arrow type; the message
            names the table, every such column and its type.
    """
    columns = con.execute(
        "select column_name, data_type, is_nullable from duckdb_columns()"
        " where table_name = $table"
        " and database_name = coalesce($database, current_database())"
        " and schema_name = coalesce($schema, current_schema())"
        " order by column_index",
        {"table": table, "database": database, "schema": schema},
    ).fetchall()
    if not columns:
        raise LookupError(f"export: no table {table} in {database or 'the'} database")
    fields, unmapped = [], []
    for name, type_, nullable in columns:
        try:
            fields.append(pa.field(name, arrow_type(type_, nullable), nullable))
        except KeyError:
            unmapped.append(f"{name} ({type_})")
    if unmapped:
        raise ExportSchemaError(
            f"export: table {table} has columns of a type with no Arrow type: "
            f"{', '.join(unmapped)} (add the type to"
            " kilt_chunks.export.folder.ARROW_TYPES"
            " or cast the column in the model)"
        )
    return pa.schema(fields)


@dataclass(frozen=True)
class ExportTable:
    """One config of the dataset: a dbt model written as Parquet files.

    Attributes:
        config: Config name (``load_dataset(export_dir, config)``) and folder
            ``data/<config>/``.
        model: The dbt model (table) whose rows are exported, in table order;
            its enforced contract is the config's schema (:func:`table_schema`).
        description: One line for the dataset card.
        only_if_rows: Export the config only when the table has rows (the
            task tables: a build without ``kilt_tasks`` has none).
        split_by_task: Rows go to the split their task file names
            (:func:`task_split` of the ``task`` column: KILT's dev files are
            ``validation``), each split its own files; else one split,
            :data:`SPLIT`.
    """

    config: str
    model: str
    description: str
    only_if_rows: bool = False
    split_by_task: bool = False


#: The exported configs, in the card's order; the first is the default config
#: (``load_dataset(export_dir)``). To export another table, give its model an
#: enforced contract, add an entry here and a ``dbt.ref`` of the model in
#: ``python_models/marts/kilt_export.py``.
EXPORT_TABLES: tuple[ExportTable, ...] = (
    ExportTable(
        "chunks",
        "kilt_chunks",
        "one row per chunk: its text, heading path, section position and page "
        "metadata (19 columns, described below)",
    ),
    ExportTable(
        "chunk_spans",
        "kilt_chunk_spans",
        "one row per chunk, same order: its KILT span (paragraph, character; end "
        "exclusive), its offsets in the section text and its token count under "
        "the build's tokenizer",
    ),
    ExportTable(
        "queries",
        "kilt_queries",
        "one row per query of the KILT task files the build read (kilt_tasks): "
        "input, answers, evidence sets, whether any evidence maps to a chunk",
        only_if_rows=True,
        split_by_task=True,
    ),
    ExportTable(
        "qrels_pages",
        "kilt_qrels_pages",
        "page-level relevance per query (wikipedia_id; KILT's R-precision unit)",
        only_if_rows=True,
        split_by_task=True,
    ),
    ExportTable(
        "qrels_chunks",
        "kilt_qrels_chunks",
        "graded chunk-level relevance per query (2: the chunk holds a whole "
        "span; 1: part of one, at least min_overlap)",
        only_if_rows=True,
        split_by_task=True,
    ),
)


def export_schemas(
    con: duckdb.DuckDBPyConnection,
    *,
    database: str | None = None,
    schema: str | None = None,
) -> dict[str, pa.Schema]:
    """The Arrow schema of every exported table (:func:`table_schema`), by
    model name: what the export checks before it writes anything.

    Args:
        con: A connection that sees the tables.
        database: Their database (default: the current one).
        schema: Their schema (default: the current one).

    Raises:
        LookupError: If a table is missing.
        ExportSchemaError: If any column of any of them has a type with no
            Arrow type (one message naming every such table and column).
    """
    schemas, problems = {}, []
    for table in EXPORT_TABLES:
        try:
            schemas[table.model] = table_schema(
                con, table.model, database=database, schema=schema
            )
        except ExportSchemaError as error:
            problems.append(str(error))
    if problems:
        raise ExportSchemaError("; ".join(problems))
    return schemas


def column_descriptions(
    con: duckdb.DuckDBPyConnection,
    *,
    database: str | None = None,
    schema: str | None = None,
) -> dict[str, dict[str, str]]:
    """The column descriptions of every exported table, by model and column:
    the descriptions of the models' dbt docs (``models/marts/**/*.yml``),
    which dbt writes as DuckDB column comments (``persist_docs`` in
    ``dbt_project.yml``); the card shows them. A column without comment is
    left out."""
    rows = con.execute(
        "select table_name, column_name, comment from duckdb_columns()"
        " where database_name = coalesce($database, current_database())"
        " and schema_name = coalesce($schema, current_schema())"
        " and comment is not null and comment <> ''",
        {"database": database, "schema": schema},
    ).fetchall()
    models = {table.model for table in EXPORT_TABLES}
    found: dict[str, dict[str, str]] = {}
    for table, column, comment in rows:
        if table in models:
            found.setdefault(table, {})[column] = comment
    return found


#: Name of the single split of every config but the task configs, whose
#: rows go to the split their task file names (:func:`task_split`).
SPLIT = "train"

#: The split of each split part of a KILT task file name
#: (``<dataset>-<split>-kilt``), as the Hub names splits.
TASK_SPLITS = {"train": "train", "dev": "validation", "test": "test"}


def task_split(task: str) -> str:
    """The split a task's rows are exported under, named by its file.

    KILT names its files ``<dataset>-<split>-kilt.jsonl`` with ``<split>``
    ``train``, ``dev`` or ``test`` (``test_without_answers`` too); the split
    is :data:`TASK_SPLITS` of it (``nq-dev-kilt`` -> ``validation``,
    ``fever-train-kilt`` -> ``train``, ``nq-test_without_answers-kilt`` ->
    ``test``). Any other name: :data:`SPLIT`.
    """
    stem = task.removesuffix("-kilt")
    if stem == task or "-" not in stem:
        return SPLIT
    part = stem.rsplit("-", 1)[1]
    for prefix, split in TASK_SPLITS.items():
        if part == prefix or part.startswith(prefix + "_"):
            return split
    return SPLIT


#: Files are also cut at this many bytes (after the row group that reaches it).
MAX_FILE_BYTES = 256 * 2**20

#: zstd level of the files: DuckDB's default, which the export used before
#: (Arrow's default, 1, is faster and gives larger files).
ZSTD_LEVEL = 3

#: Rows per row group (fewer when ``rows_per_file`` is smaller).
ROW_GROUP_ROWS = 100_000

#: Rows fetched from DuckDB at a time: small batches keep the reader's memory
#: low (measured: 16,384 rows peak at 0.85 GB where 100,000 take 1.1 GB).
FETCH_ROWS = 16_384

#: String columns written without dictionary encoding (unique per row: a
#: dictionary would only be tried and dropped). Numbers and flags are never
#: dictionary-encoded: plain zstd pages of them are smaller (measured on
#: 500,000 rows of chunk spans: 1.5 MB plain, 2.7 MB with dictionaries).
_NO_DICTIONARY = {"chunk_id", "text"}

#: The staging folder of earlier versions, below ``export_dir`` (removed
#: when found); the staging folder is now a sibling (:func:`staging_folder`).
PARTIAL_DIR = ".export.partial"

#: Sub-folders of ``export_dir`` that the export replaces as a whole.
DATA_DIR = "data"
FIGURES_DIR = "figures"
CARD_FILE = "README.md"
#: The database that wrote the export (:mod:`kilt_chunks.build.records`).
OWNER_FILE = ".kilt_chunks_export.json"

#: One row per file an export wrote (the ``kilt_export`` table).
EXPORT_FILES_SCHEMA = pa.schema(
    [
        pa.field("config", _TEXT),
        pa.field("path", _TEXT, nullable=False),
        pa.field("num_rows", pa.int64()),
        pa.field("num_bytes", pa.int64(), nullable=False),
    ]
)


def parquet_file_name(index: int, total: int, split: str = SPLIT) -> str:
    """Hugging Face's shard name: ``train-00003-of-00012.parquet``.

    Args:
        index: 0-based file number.
        total: Number of files of the config's split.
        split: The split (the name's first part).

    Raises:
        ValueError: If ``index`` is not in ``range(total)``.
    """
    if not 0 <= index < total:
        raise ValueError(f"file {index} is not one of {total} files")
    return f"{split}-{index:05d}-of-{total:05d}.parquet"


def _cast(batch: pa.RecordBatch, schema: pa.Schema, config: str) -> pa.RecordBatch:
    names = batch.schema.names
    if names != schema.names:
        raise ValueError(
            f"export {config}: the table's columns {names} are not the declared "
            f"{schema.names}"
        )
    for field, column in zip(schema, batch.columns, strict=True):
        nulls = _nulls(column, field.type) if not field.nullable else 0
        if nulls:
            raise ValueError(
                f"export {config}: column {field.name} has {nulls} NULL "
                "values but is declared NOT NULL"
            )
    return batch.cast(schema)


def _nulls(column: pa.Array, type_: pa.DataType) -> int:
    """NULL values of a NOT NULL column of Arrow type ``type_``, its list
    elements included where they are NOT NULL (a cast does not check them)."""
    nulls = column.null_count
    if pa.types.is_list(type_) and not type_.value_field.nullable:
        nulls += _nulls(pc.list_flatten(column), type_.value_type)
    return nulls


def write_parquet_files(
    batches: Iterable[pa.RecordBatch],
    schema: pa.Schema,
    folder: Path,
    rows_per_file: int,
    *,
    config: str = "",
    max_file_bytes: int = MAX_FILE_BYTES,
    split: str = SPLIT,
) -> list[tuple[Path, int]]:
    """Stream record batches into numbered Parquet files of one schema.

    Holds at most one row group (``min(rows_per_file, ROW_GROUP_ROWS)`` rows)
    in memory. Files are zstd-compressed and cut after ``rows_per_file`` rows
    or once they pass ``max_file_bytes``; they are named
    :func:`parquet_file_name` in row order. A table without rows gives one
    file without rows (so every config has a file to read its schema from).

    Args:
        batches: The table's rows in order, columns named as ``schema``.
        schema: Schema of every file (its metadata becomes the files'
            key/value metadata).
        folder: Existing folder to write into.
        rows_per_file: Most rows per file (>= 1).
        config: Config name for error messages.
        max_file_bytes: Size after which a file is closed.

    Returns:
        ``(path, rows)`` per file, in order.

    Raises:
        ValueError: If a batch has other columns, or NULL in a NOT NULL column.
    """
    row_group_rows = max(1, min(ROW_GROUP_ROWS, rows_per_file))
    dictionary = [
        field.name
        for field in schema
        if field.name not in _NO_DICTIONARY
        and (pa.types.is_string(field.type) or pa.types.is_list(field.type))
    ]
    written: list[tuple[Path, int]] = []
    writer: pq.ParquetWriter | None = None
    sink: pa.OSFile | None = None
    file_rows = 0
    pending: list[pa.RecordBatch] = []
    pending_rows = 0

    def open_file() -> None:
        nonlocal writer, sink, file_rows
        path = folder / f"part-{len(written):05d}.parquet"
        sink = pa.OSFile(str(path), "wb")
        writer = pq.ParquetWriter(
            sink,
            schema,
            compression="zstd",
            compression_level=ZSTD_LEVEL,
            use_dictionary=dictionary,
            write_statistics=True,
        )
        written.append((path, 0))
        file_rows = 0

    def close_file() -> None:
        nonlocal writer, sink
        assert writer is not None and sink is not None
        writer.close()
        sink.close()
        written[-1] = (written[-1][0], file_rows)
        writer = sink = None

    def flush() -> None:
        nonlocal pending, pending_rows, file_rows
        table = pa.Table.from_batches(pending, schema=schema)
        pending, pending_rows = [], 0
        while table.num_rows:
            if writer is None:
                open_file()
            assert writer is not None and sink is not None
            take = min(table.num_rows, rows_per_file - file_rows)
            writer.write_table(table.slice(0, take), row_group_size=row_group_rows)
            file_rows += take
            table = table.slice(take)
            if file_rows >= rows_per_file or sink.tell() >= max_file_bytes:
                close_file()

    for batch in batches:
        batch = _cast(batch, schema, config)
        while batch.num_rows:
            take = min(batch.num_rows, row_group_rows - pending_rows)
            pending.append(batch.slice(0, take))
            pending_rows += take
            batch = batch.slice(take)
            if pending_rows == row_group_rows:
                flush()
    if pending_rows:
        flush()
    if writer is not None:
        close_file()
    if not written:
        open_file()
        close_file()
    total = len(written)
    named = []
    for index, (path, rows) in enumerate(written):
        final = path.with_name(parquet_file_name(index, total, split))
        path.rename(final)
        named.append((final, rows))
    return named


@dataclass(frozen=True)
class ExportedConfig:
    """What :func:`write_config` wrote for one config."""

    table: ExportTable
    files: list[tuple[Path, int]]
    #: The files' Arrow schema (without the build's key/value metadata).
    schema: pa.Schema
    #: The split these files hold (a config may have several: the task
    #: configs, :attr:`ExportTable.split_by_task`).
    split: str = SPLIT

    @property
    def num_rows(self) -> int:
        """Rows over all files."""
        return sum(rows for _, rows in self.files)

    @property
    def num_bytes(self) -> int:
        """Bytes of the files on disk."""
        return sum(path.stat().st_size for path, _ in self.files)

    @property
    def uncompressed_bytes(self) -> int:
        """Bytes of the data uncompressed (the row groups' total sizes, from
        the files' footers): the split's ``num_bytes`` on the card."""
        total = 0
        for path, _ in self.files:
            metadata = pq.read_metadata(path)
            total += sum(
                metadata.row_group(i).total_byte_size
                for i in range(metadata.num_row_groups)
            )
        return total


def write_config(
    table: ExportTable,
    schema: pa.Schema,
    batches: Iterable[pa.RecordBatch],
    data_dir: Path,
    rows_per_file: int,
    metadata: Mapping[str, str],
    split: str = SPLIT,
) -> ExportedConfig:
    """Write one split of a config, its files ``<split>-*.parquet``, into
    ``data_dir/<config>/`` (created).

    Args:
        table: The config.
        schema: Its files' schema (:func:`table_schema` of its model).
        batches: Its rows in table order.
        data_dir: The ``data`` folder of the staging export.
        rows_per_file: Most rows per file.
        metadata: Key/value metadata of every file (the build info).
        split: The split's name.
    """
    folder = data_dir / table.config
    folder.mkdir(parents=True, exist_ok=True)
    files = write_parquet_files(
        batches,
        schema.with_metadata(dict(metadata)),
        folder,
        rows_per_file,
        config=table.config,
        split=split,
    )
    return ExportedConfig(table, files, schema, split)


def file_names(relation: Any) -> Any:
    """``relation`` with its ``source_file`` column, if it has one, cut to the
    file name: what the export publishes (the dataset configs and the task
    files in ``qrels/``) holds no path of the machine that built it.

    Args:
        relation: A table to export (a DuckDB relation, e.g. ``dbt.ref``).

    Returns:
        The same rows and columns, ``source_file`` as DuckDB's
        ``parse_filename`` of it.
    """
    if "source_file" not in relation.columns:
        return relation
    return relation.project("* replace (parse_filename(source_file) as source_file)")


def prepare_export_dir(export_dir: str) -> Path | None:
    """Create the export folder (parents included).

    Args:
        export_dir: The ``export_dir`` variable; ``""`` means no export. A
            leading ``~`` is the home folder.

    Returns:
        The folder, or None when the export is disabled.

    Raises:
        NotADirectoryError: If ``export_dir`` exists and is not a folder.
    """
    if not export_dir:
        return None
    problem = export_dir_problem(export_dir)
    if problem:
        raise NotADirectoryError(f"export_dir {export_dir!r} {problem}")
    root = Path(export_dir).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    return root


def staging_folder(target: Path) -> Path:
    """The staging folder of ``target``: ``<parent>/.<name>.partial``, on the
    same file system, so that it can take ``target``'s place atomically."""
    return target.with_name(f".{target.name}.partial")


def _old_folder(target: Path) -> Path:
    return target.with_name(f".{target.name}.old")


# The file-system steps of putting a folder in place, one function each, so
# that a test can stop the export between any two of them.


def _rename(source: Path, target: Path) -> None:
    os.rename(source, target)


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path)


def _link_or_copy(source: str, target: str) -> None:
    """A hard link of ``source`` at ``target``, or a copy where the file
    system has none."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


_RENAME_EXCHANGE = 2  # renameat2 flag (Linux 3.15+)
_RENAME_SWAP = 2  # renamex_np flag (macOS 10.12+)
_AT_FDCWD = -100


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name, use_errno=True)
    except OSError:  # pragma: no cover - every POSIX system has a libc
        return None


def _exchange(first: Path, second: Path) -> bool:
    """Exchange two existing folders (or files) atomically: Linux
    ``renameat2`` with ``RENAME_EXCHANGE``, macOS ``renamex_np`` with
    ``RENAME_SWAP`` (Python has neither, hence ctypes).

    Returns:
        False when the system or file system cannot (nothing changed then).

    Raises:
        OSError: Any other failure.
    """
    libc = _libc()
    a, b = os.fsencode(first), os.fsencode(second)
    if libc is not None and sys.platform.startswith("linux"):
        function = getattr(libc, "renameat2", None)
        if function is None:
            return False
        result = function(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)
    elif libc is not None and sys.platform == "darwin":
        function = getattr(libc, "renamex_np", None)
        if function is None:
            return False
        result = function(a, b, _RENAME_SWAP)
    else:
        return False
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(first))


def remove_leftovers(target: Path) -> None:
    """Clean up after an earlier :func:`replace_folder` of ``target`` that was
    killed: its staging folder is removed; when ``target`` is missing but the
    previous folder was set aside (the two-rename fallback), it is put back."""
    old = _old_folder(target)
    if old.exists():
        if target.exists():
            _remove_tree(old)
        else:
            _rename(old, target)
    partial = staging_folder(target)
    if partial.exists():
        _remove_tree(partial)


def replace_folder(partial: Path, target: Path) -> None:
    """Move the finished folder ``partial`` to ``target``, replacing it.

    When ``target`` exists the two are exchanged atomically
    (:func:`_exchange`), then the previous folder, now at ``partial``,
    is deleted: at every instant ``target`` is the whole old or the whole new
    folder. Where the system cannot exchange folders (not Linux or macOS, or
    a file system without it), the previous folder is renamed aside first
    (``.<name>.old``), a moment without ``target`` that
    :func:`remove_leftovers` repairs.

    Raises:
        FileNotFoundError: If ``partial`` does not exist.
    """
    if not partial.is_dir():
        raise FileNotFoundError(f"{partial}: no finished export to move into place")
    if not target.exists():
        _rename(partial, target)
        return
    if _exchange(partial, target):
        _remove_tree(partial)
        return
    old = _old_folder(target)
    if old.exists():
        _remove_tree(old)
    _rename(target, old)
    _rename(partial, target)
    _remove_tree(old)


def carry_over(source: Path, partial: Path, written: Iterable[str]) -> None:
    """Link every entry of ``source`` but those named in ``written`` (and
    hidden staging folders) into ``partial``, so that replacing ``source`` by
    ``partial`` keeps them (the qrels, a user's notes). Hard links: no data is
    copied where the file system has them."""
    if not source.is_dir():
        return
    skip = set(written)
    for entry in sorted(source.iterdir()):
        if entry.name in skip or entry.name.endswith((".partial", ".old")):
            continue
        destination = partial / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, destination, copy_function=_link_or_copy)
        elif entry.is_symlink():
            os.symlink(os.readlink(entry), destination)
        else:
            _link_or_copy(str(entry), str(destination))


def export_root(export_dir: str) -> Path:
    """The export folder as a real path (a symbolic link to a folder is
    followed, so that the swap replaces the folder and keeps the link)."""
    return Path(os.path.realpath(Path(export_dir).expanduser()))


def start_export(export_dir: str) -> Path:
    """Make ``export_dir``'s parent folders and an empty staging folder beside
    it; remove what a killed export left (:func:`remove_leftovers`, and the
    staging folder inside ``export_dir`` of earlier versions).

    Returns:
        ``<parent>/.<name>.partial``, empty.

    Raises:
        NotADirectoryError: If ``export_dir`` is a file, or below one.
    """
    if not export_dir:
        raise ValueError("start_export: no export_dir")
    problem = export_dir_problem(export_dir)
    if problem:
        raise NotADirectoryError(f"export_dir {export_dir!r} {problem}")
    root = export_root(export_dir)
    root.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(root)
    if (root / PARTIAL_DIR).exists():
        _remove_tree(root / PARTIAL_DIR)
    partial = staging_folder(root)
    partial.mkdir()
    return partial


#: What an export writes at the top of ``export_dir``: everything else there
#: is carried over to the new export.
EXPORT_ENTRIES = (DATA_DIR, FIGURES_DIR, CARD_FILE, OWNER_FILE)


def finish_export(partial: Path) -> Path:
    """Put a complete staging folder in place of the export folder.

    Links the other files of the export folder into it (:func:`carry_over`:
    the qrels, a user's files), then exchanges it with the export folder in
    one step (:func:`replace_folder`) and deletes the previous export.

    Returns:
        The export folder.

    Raises:
        FileNotFoundError: If the staging folder has no ``data`` or card.
    """
    if not (partial / DATA_DIR).is_dir() or not (partial / CARD_FILE).is_file():
        raise FileNotFoundError(f"{partial}: no finished export to move into place")
    root = partial.with_name(partial.name.removeprefix(".").removesuffix(".partial"))
    carry_over(root, partial, EXPORT_ENTRIES)
    replace_folder(partial, root)
    return root


def config_files(export_dir: str | Path, config: str) -> list[Path]:
    """The Parquet files of one config of an export, every split's, in name
    order (each split's files in row order); empty when there are none."""
    folder = Path(export_dir).expanduser() / DATA_DIR / config
    return sorted(folder.glob("*-of-*.parquet"))


def files_table(export_dir: Path, exported: list[ExportedConfig]) -> pa.Table:
    """The ``kilt_export`` table: one row per file now in ``export_dir``
    (Parquet files with their config and rows, the figures and the card),
    paths relative to ``export_dir``."""
    rows: dict[str, list] = {name: [] for name in EXPORT_FILES_SCHEMA.names}
    for config in exported:
        for written, count in config.files:
            path = Path(DATA_DIR) / config.table.config / written.name
            rows["config"].append(config.table.config)
            rows["path"].append(path.as_posix())
            rows["num_rows"].append(count)
            rows["num_bytes"].append((export_dir / path).stat().st_size)
    extra = sorted((export_dir / FIGURES_DIR).glob("*.png")) + [export_dir / CARD_FILE]
    for path in extra:
        rows["config"].append(None)
        rows["path"].append(path.relative_to(export_dir).as_posix())
        rows["num_rows"].append(None)
        rows["num_bytes"].append(path.stat().st_size)
    return pa.table(rows, schema=EXPORT_FILES_SCHEMA)
