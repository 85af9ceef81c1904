"""A tiny export, written by the real export code, that can be stopped at any
file-system step of putting it in place (tests/python/test_export.py).

:func:`stopped_at` makes every file-system step of :mod:`kilt_chunks.export.folder`
(renames, exchanges, tree removals, links) count its calls and raise
:class:`Killed` just before call ``kill_at``: a BaseException, which no
``except Exception`` of the code under test catches, so nothing after the
step runs, as when the process is killed there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from contracts import contract_schema
from kilt_chunks.evaluation.provenance import write_task_files
from kilt_chunks.export import folder as export
from kilt_chunks.export.card import dataset_card
from kilt_chunks.export.folder import (
    EXPORT_TABLES,
    ExportedConfig,
    finish_export,
    start_export,
    write_parquet_files,
)

#: The functions of kilt_chunks.export.folder that change the file system.
STEPS = ("_rename", "_exchange", "_remove_tree", "_link_or_copy")


class Killed(BaseException):
    """The export stopped at a step."""


@contextmanager
def stopped_at(kill_at: int, exchange: bool = True) -> Iterator[list[int]]:
    """Within the block, the export's file-system steps count their calls
    (the yielded list's one item) and raise :class:`Killed` just before call
    ``kill_at`` (-1: never). ``exchange=False`` makes the atomic exchange
    unavailable (the two-rename fallback)."""
    calls = [0]
    with pytest.MonkeyPatch.context() as patch:
        for name in STEPS:
            original = getattr(export, name)

            def step(*args, _original=original, _name=name):
                if calls[0] == kill_at:
                    raise Killed(kill_at)
                calls[0] += 1
                if _name == "_exchange" and not exchange:
                    return False
                return _original(*args)

            patch.setattr(export, name, step)
        yield calls


def _row(schema: pa.Schema, chunk_id: str, order: int) -> dict:
    row: dict = {}
    for field in schema:
        if field.name == "chunk_id":
            row[field.name] = chunk_id
        elif pa.types.is_list(field.type):
            row[field.name] = []
        elif pa.types.is_string(field.type):
            row[field.name] = None if field.nullable else "x"
        elif pa.types.is_boolean(field.type):
            row[field.name] = True
        else:
            row[field.name] = order
    return row


def write_configs(
    partial: Path, batch_of: Callable[[pa.Schema], pa.RecordBatch]
) -> list[ExportedConfig]:
    """Write the configs every build has (the task tables need kilt_tasks)
    into the export being made at ``partial``, each the batch ``batch_of``
    gives for the config's contract schema; return them, in table order."""
    exported = []
    for table in (t for t in EXPORT_TABLES if not t.only_if_rows):
        folder = partial / "data" / table.config
        folder.mkdir(parents=True)
        schema = contract_schema(table.model)
        files = write_parquet_files([batch_of(schema)], schema, folder, 10)
        exported.append(ExportedConfig(table, files, schema))
    return exported


def write_export(root: Path, marker: str, rows: int) -> Path:
    """An export of the two configs every build has, ``rows`` rows each with
    chunk ids ``<marker>-<i>``, with its card, put in place."""
    partial = start_export(str(root))
    exported = write_configs(
        partial,
        lambda schema: pa.RecordBatch.from_pylist(
            [_row(schema, f"{marker}-{i}", i) for i in range(rows)], schema=schema
        ),
    )
    card = dataset_card(
        exported,
        {"kilt_path": "x.jsonl", "chunk_size": "256", "kilt_chunks_version": "0.1"},
        {"lines_read": rows, "chunks_written": rows},
        [],
        [],
    )
    card.save(partial / "README.md")
    return finish_export(partial)


def write_qrels(root: Path, marker: str, rows: int) -> None:
    """The qrels files of task ``t``: ``rows`` chunk qrels ``q<i> 0
    <marker>-<i> 1``, through the real writer."""
    with duckdb.connect() as con:
        chunk_qrels = con.sql(
            "select 't' as task, 'q' || i as query_id, ? || '-' || i as chunk_id,"
            " 1 as relevance from range(?) as r(i)",
            params=[marker, rows],
        )
        page_qrels = con.sql(
            "select 't' as task, 'q' || i as query_id, 'p' || i as wikipedia_id,"
            " 1 as relevance from range(?) as r(i)",
            params=[rows],
        )
        queries = con.sql(
            "select 't' as task, 'q' || i as query_id, 'text' as input"
            " from range(?) as r(i)",
            params=[rows],
        )
        write_task_files(chunk_qrels, page_qrels, queries, ["t"], str(root))
