"""Write the export folder of a build: Parquet configs, figures, dataset card.

The Python end of the model ``kilt_export`` (:func:`export_dataset`); the
layout and the file writing are in :mod:`kilt_chunks.export.folder`, the card in
:mod:`kilt_chunks.export.card`, the figures in :mod:`kilt_chunks.export.figures`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from kilt_chunks.build.records import claim_export, export_lock
from kilt_chunks.build.replacing import input_identity
from kilt_chunks.defaults import DEFAULT_TOKENIZER
from kilt_chunks.export.folder import (
    CARD_FILE,
    DATA_DIR,
    EXPORT_FILES_SCHEMA,
    EXPORT_TABLES,
    FETCH_ROWS,
    FIGURES_DIR,
    SPLIT,
    TASK_SPLITS,
    ExportTable,
    config_files,
    export_root,
    file_names,
    files_table,
    finish_export,
    start_export,
    task_split,
    write_config,
)
from kilt_chunks.progress import Progress, emit_warning
from kilt_chunks.settings import project_path

__all__ = [
    "Relation",
    "export_dataset",
    "rows_of",
]


class Relation(Protocol):
    """What the export needs of a table: a DuckDB relation (``dbt.ref``)."""

    columns: list[str]

    def fetchall(self) -> list[tuple]: ...

    def to_arrow_reader(self, batch_size: int) -> pa.RecordBatchReader: ...

    def unique(self, columns: str) -> Relation: ...

    def filter(self, condition: str) -> Relation: ...


def rows_of(relation: Relation) -> list[dict[str, Any]]:
    """All rows of a (small) relation as dicts, in its order."""
    columns = list(relation.columns)
    return [dict(zip(columns, row, strict=True)) for row in relation.fetchall()]


def export_dataset(
    tables: Mapping[str, Relation],
    *,
    schemas: Mapping[str, pa.Schema],
    build_info: Relation,
    audit: Relation,
    stats: Relation,
    histograms: Relation,
    depth_stats: Relation,
    export_dir: str,
    rows_per_file: int,
    progress_seconds: float = 0,
    database: str = "",
    build: str = "",
    descriptions: Mapping[str, Mapping[str, str]] | None = None,
) -> pa.Table:
    """Export the build as a Hugging Face dataset folder in ``export_dir``.

    Writes, into a staging folder beside ``export_dir``
    (:func:`kilt_chunks.export.folder.start_export`), one config per entry of
    :data:`kilt_chunks.export.folder.EXPORT_TABLES` (its model's rows streamed in
    table order, :data:`FETCH_ROWS` at a time, never the whole table in
    memory), the figures and the card; checks the card; then moves the parts
    into place (:func:`kilt_chunks.export.folder.finish_export`).

    Args:
        tables: Relation of each exported model, by model name.
        schemas: The Arrow schema of each exported model, by model name
            (:func:`kilt_chunks.export.folder.export_schemas`: from the built
            tables, so from their contracts).
        build_info: ``kilt_build_info`` (one row; also every file's key/value
            metadata).
        audit: ``kilt_load_audit`` (one row).
        stats: ``kilt_corpus_stats``.
        histograms: ``kilt_corpus_histograms``.
        depth_stats: ``kilt_section_depth_stats``.
        export_dir: The folder; ``""`` exports nothing.
        rows_per_file: Most rows per Parquet file.
        progress_seconds: Seconds between progress lines (rows and MB of
            each config written); 0 is quiet.
        database: Path of the build's DuckDB file: the export records it and
            refuses a folder another database exported to
            (:func:`kilt_chunks.build.records.claim_export`); ``""`` checks nothing.
        build: Identity of the build (recorded beside the database).
        descriptions: Column descriptions by model and column, for the card
            (:func:`kilt_chunks.export.folder.column_descriptions`).

    Returns:
        One row per file of the export (``config``, ``path`` relative to
        ``export_dir``, ``num_rows``, ``num_bytes``); no rows when
        ``export_dir`` is ``""``.

    Raises:
        KeyError: If an exported model is missing from ``tables`` or
            ``schemas``.
        NotADirectoryError: If ``export_dir`` is a file, or below one.
        kilt_chunks.build.records.ExportOwnerError: If another database's export
            is in ``export_dir`` (nothing is written then).
        ValueError: If a table's columns are not its schema's (nothing is
            written then), or a NOT NULL column holds NULL (nothing is moved
            into place then).
    """
    # Relative to the dbt project folder, whatever the current folder.
    export_dir = project_path(export_dir)
    if not export_dir:
        return EXPORT_FILES_SCHEMA.empty_table()
    missing = [
        table.model
        for table in EXPORT_TABLES
        if table.model not in tables or table.model not in schemas
    ]
    if missing:
        raise KeyError(f"export: no relation or schema given for {', '.join(missing)}")
    for table in EXPORT_TABLES:
        columns, declared = list(tables[table.model].columns), schemas[table.model]
        if columns != declared.names:
            raise ValueError(
                f"export {table.config}: the relation's columns {columns} are not "
                f"the table's {declared.names}"
            )
    info = {key: str(value) for key, value in rows_of(build_info)[0].items()}
    audit_row = rows_of(audit)[0]
    stats_rows = rows_of(stats)
    histogram_rows = rows_of(histograms)
    depth_rows = rows_of(depth_stats)
    with export_lock(export_dir):
        before = [
            table.config
            for table in EXPORT_TABLES
            if config_files(export_root(export_dir), table.config)
        ]
        partial = start_export(export_dir)
        if database:
            claim_export(
                partial,
                export_dir,
                database,
                build,
                input_identity(info.get("kilt_path", "")),
            )
        written = _write_export(
            partial,
            tables,
            schemas,
            info,
            audit_row,
            stats_rows,
            (histogram_rows, depth_rows),
            rows_per_file,
            progress_seconds,
            descriptions or {},
        )
        dropped = sorted(set(before) - set(written.column("config").to_pylist()))
        if dropped:
            emit_warning(
                f"export: the configs {', '.join(dropped)} of the previous export "
                f"in {export_root(export_dir)} are dropped: this build has no rows "
                "for them (a build without kilt_tasks has no queries or qrels); "
                "pass the same kilt_tasks again to keep them"
            )
        return written


def _write_export(
    partial: Path,
    tables: Mapping[str, Relation],
    schemas: Mapping[str, pa.Schema],
    info: dict[str, str],
    audit_row: dict[str, Any],
    stats_rows: list[dict[str, Any]],
    figure_rows: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    rows_per_file: int,
    progress_seconds: float,
    descriptions: Mapping[str, Mapping[str, str]],
) -> pa.Table:
    """Write the configs, figures and card into ``partial``, then put it in
    place of the export folder."""
    # Imported here: datasets and huggingface_hub take a second or two to
    # import, which a build without export should not pay.
    from kilt_chunks.export.card import check_card, dataset_card, published_build_info
    from kilt_chunks.export.figures import draw_figures

    # What is published holds no path of this machine: the build info without
    # export_dir and with file names (card and Parquet metadata), and a
    # source_file column as file names.
    published = published_build_info(info)
    exported = [
        write_config(
            table,
            schemas[table.model],
            _reported(
                file_names(relation).to_arrow_reader(FETCH_ROWS),
                Progress(
                    f"export {table.config}"
                    + (f" {split}" if table.split_by_task else ""),
                    interval=progress_seconds,
                    unit="rows",
                ),
            ),
            partial / DATA_DIR,
            rows_per_file,
            published,
            split,
        )
        for table in EXPORT_TABLES
        if not table.only_if_rows or _has_rows(tables[table.model])
        for split, relation in _splits(table, tables[table.model])
    ]
    (partial / FIGURES_DIR).mkdir()
    figures = draw_figures(
        *figure_rows,
        partial / FIGURES_DIR,
        chunk_size=int(info["chunk_size"]) if "chunk_size" in info else None,
        tokenizer=info.get("tokenizer", DEFAULT_TOKENIZER),
    )
    card = dataset_card(
        exported,
        info,
        audit_row,
        stats_rows,
        [path.relative_to(partial).as_posix() for path in figures],
        descriptions,
    )
    card.save(partial / CARD_FILE)
    check_card(partial / CARD_FILE)
    root = finish_export(partial)
    return files_table(root, exported)


def _reported(
    batches: Iterable[pa.RecordBatch], progress: Progress
) -> Iterator[pa.RecordBatch]:
    """Yield ``batches``, reporting their rows and Arrow bytes to ``progress``."""
    try:
        for batch in batches:
            progress.update(batch.nbytes, batch.num_rows)
            yield batch
    finally:
        progress.close()


def _splits(table: ExportTable, relation: Relation) -> list[tuple[str, Relation]]:
    """``(split, rows)`` of a config: :data:`SPLIT` and all rows, or for a
    config split by task (:attr:`ExportTable.split_by_task`) each split its
    tasks name (:func:`kilt_chunks.export.folder.task_split`), in
    :data:`TASK_SPLITS` order, with its rows in table order."""
    if not table.split_by_task:
        return [(SPLIT, relation)]
    tasks = [row[0] for row in relation.unique("task").fetchall()]
    by_split: dict[str, list[str]] = {}
    for task in sorted(tasks):
        by_split.setdefault(task_split(task), []).append(task)
    order = list(dict.fromkeys([*TASK_SPLITS.values(), SPLIT]))
    return [
        (split, relation.filter(_task_in(by_split[split])))
        for split in sorted(by_split, key=order.index)
    ]


def _task_in(tasks: list[str]) -> str:
    """A SQL condition: ``task`` is one of ``tasks`` (quoted literals)."""
    quoted = ", ".join("'" + task.replace("'", "''") + "'" for task in tasks)
    return f"task in ({quoted})"


def _has_rows(relation: Relation) -> bool:
    """Whether the relation holds at least one row."""
    reader = relation.to_arrow_reader(1)
    return any(batch.num_rows for batch in reader)
