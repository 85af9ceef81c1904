"""KILT task files in, TREC qrels out: the Python ends of the provenance models.

A KILT task file (``nq-dev-kilt.jsonl``, ...) holds one query per line: ``id``,
``input`` and ``output``, a list of answers each with a ``provenance`` list of
Wikipedia spans (``wikipedia_id``, ``start_paragraph_id``, ``start_character``,
``end_paragraph_id``, ``end_character``; characters are offsets into
``text[paragraph_id]`` of the KILT page, end exclusive as KILT's
``match_answer`` computes them). :func:`read_task_provenance` reads them with
DuckDB's ``read_json`` and explicit types (never sampled); the SQL models match
the spans to chunks; :func:`write_qrels` writes one qrels file per task.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable
from pathlib import Path

import duckdb
import pyarrow as pa

#: File names taken from a folder given as ``kilt_tasks``.
TASK_FILE_PATTERN = re.compile(r"^(?P<task>.+?)\.jsonl?(\.gz|\.zst)?$")

#: Explicit ``read_json`` types of a task line; other keys (``meta``, ...) are
#: ignored.
TASK_LINE_COLUMNS = {
    "id": "VARCHAR",
    "output": "STRUCT(provenance STRUCT("
    "wikipedia_id VARCHAR, title VARCHAR, section VARCHAR, "
    "start_paragraph_id BIGINT, start_character BIGINT, "
    "end_paragraph_id BIGINT, end_character BIGINT, bleu_score DOUBLE)[])[]",
}

#: Columns of :func:`read_task_provenance`, one row per provenance entry.
PROVENANCE_COLUMNS = {
    "task": "VARCHAR",
    "source_file": "VARCHAR",
    "query_id": "VARCHAR",
    "output_index": "INTEGER",
    "provenance_index": "INTEGER",
    "wikipedia_id": "VARCHAR",
    "title": "VARCHAR",
    "section": "VARCHAR",
    "start_paragraph_id": "BIGINT",
    "start_character": "BIGINT",
    "end_paragraph_id": "BIGINT",
    "end_character": "BIGINT",
    "bleu_score": "DOUBLE",
}

#: One row per qrels file written by :func:`write_qrels`.
QRELS_SCHEMA = pa.schema(
    [
        ("task", pa.string()),
        ("qrels_path", pa.string()),
        ("num_queries", pa.int64()),
        ("num_lines", pa.int64()),
    ]
)


def task_name(path: str | Path) -> str:
    """Task name of a task file: its name without ``.jsonl``/``.json`` (and .gz).

    Args:
        path: A task file, e.g. ``/data/nq-dev-kilt.jsonl``.

    Returns:
        E.g. ``"nq-dev-kilt"``; the plain stem for any other suffix.
    """
    name = Path(path).name
    match = TASK_FILE_PATTERN.match(name)
    return match.group("task") if match else Path(name).stem


def resolve_task_files(spec: str) -> list[tuple[str, Path]]:
    """Find the task files named by the ``kilt_tasks`` variable.

    Args:
        spec: ``""`` (no tasks), a file, a folder (its ``*.jsonl``/``*.json``
            files, optionally ``.gz``/``.zst``; not recursive) or a glob.

    Returns:
        ``(task, path)`` pairs sorted by path; empty for ``""``.

    Raises:
        FileNotFoundError: If a non-empty ``spec`` names no file.
        ValueError: If two files give the same task name.
    """
    spec = (spec or "").strip()
    if not spec:
        return []
    path = Path(spec)
    if path.is_dir():
        files = [f for f in path.iterdir() if f.is_file()]
        files = [f for f in files if TASK_FILE_PATTERN.match(f.name)]
    elif path.is_file():
        files = [path]
    else:
        files = [Path(f) for f in glob.glob(spec) if Path(f).is_file()]
    if not files:
        raise FileNotFoundError(
            f"kilt_tasks {spec!r}: no KILT task file there (a .jsonl/.json file, "
            "a folder of them, or a glob)"
        )
    tasks: dict[str, Path] = {}
    for file in sorted(files):
        task = task_name(file)
        if task in tasks:
            raise ValueError(
                f"kilt_tasks {spec!r}: {tasks[task]} and {file} both give task "
                f"{task!r}; task names (file names without .jsonl) must be unique"
            )
        tasks[task] = file
    return [(task, file) for task, file in tasks.items()]


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _read_lines_sql(task: str, file: Path) -> str:
    columns = ", ".join(
        f"{_quote(k)}: {_quote(v)}" for k, v in TASK_LINE_COLUMNS.items()
    )
    return (
        f"select {_quote(task)} as task, {_quote(str(file))} as source_file, "
        "id as query_id, output "
        f"from read_json({_quote(str(file.resolve()))}, "
        f"format = 'newline_delimited', columns = {{{columns}}})"
    )


def provenance_sql(files: Iterable[tuple[str, Path]]) -> str:
    """SQL flattening task files into one row per provenance entry.

    Args:
        files: ``(task, path)`` pairs from :func:`resolve_task_files`.

    Returns:
        A query with :data:`PROVENANCE_COLUMNS`: one row per provenance entry
        (``output_index``, ``provenance_index``: 0-based positions in ``output``
        and its ``provenance``), plus one row with NULL entry columns for a query
        that has no provenance at all, so every query is counted. No files give
        an empty result with the same columns.
    """
    selects = [_read_lines_sql(task, file) for task, file in files]
    if not selects:
        typed = ", ".join(f"null::{t} as {c}" for c, t in PROVENANCE_COLUMNS.items())
        return f"select {typed} where false"
    lines = "\n    union all\n    ".join(selects)
    return f"""
with

lines as (

    {lines}

),

outputs as (

    select
        lines.task,
        lines.source_file,
        lines.query_id,
        answers.output_index,
        answers.answer_output

    from lines

    cross join lateral (
        select
            unnest(lines.output) as answer_output,
            unnest(range(len(lines.output)))::integer as output_index
    ) as answers

),

entries as (

    select
        outputs.task,
        outputs.source_file,
        outputs.query_id,
        outputs.output_index,
        spans.provenance_index,
        spans.span.wikipedia_id as wikipedia_id,
        spans.span.title as title,
        spans.span.section as section,
        spans.span.start_paragraph_id as start_paragraph_id,
        spans.span.start_character as start_character,
        spans.span.end_paragraph_id as end_paragraph_id,
        spans.span.end_character as end_character,
        spans.span.bleu_score as bleu_score

    from outputs

    cross join lateral (
        select
            unnest(outputs.answer_output.provenance) as span,
            unnest(range(len(outputs.answer_output.provenance)))::integer
                as provenance_index
    ) as spans

),

queries_without_provenance as (

    select
        lines.task,
        lines.source_file,
        lines.query_id

    from lines

    anti join entries
        on lines.task = entries.task
        and lines.query_id is not distinct from entries.query_id

)

select * from entries

union all by name

select * from queries_without_provenance
"""


def read_task_provenance(
    con: duckdb.DuckDBPyConnection, kilt_tasks: str
) -> duckdb.DuckDBPyRelation:
    """Read every provenance entry of the task files named by ``kilt_tasks``.

    Args:
        con: DuckDB connection.
        kilt_tasks: See :func:`resolve_task_files`; ``""`` reads nothing.

    Returns:
        A relation with :data:`PROVENANCE_COLUMNS` (see :func:`provenance_sql`);
        task = file name without ``.jsonl``.

    Raises:
        FileNotFoundError, ValueError: From :func:`resolve_task_files`.
        duckdb.Error: If a line is not JSON or a field has an unusable type
            (DuckDB names the file).
    """
    columns = ", ".join(f"{c}::{t} as {c}" for c, t in PROVENANCE_COLUMNS.items())
    sql = provenance_sql(resolve_task_files(kilt_tasks))
    return con.sql(f"select {columns} from ({sql})")


def write_qrels(
    matches: duckdb.DuckDBPyRelation,
    tasks: Iterable[str],
    export_dir: str,
) -> pa.Table:
    """Write one TREC qrels file per task: ``<export_dir>/qrels/<task>.qrels``.

    Args:
        matches: ``kilt_provenance_chunks``: task, query_id, wikipedia_id,
            section_order, chunk_order, chunk_id; one row per (span, chunk).
        tasks: Every task read; a task without any match gets an empty file.
        export_dir: Folder of the Parquet export; ``""`` writes nothing. The
            ``qrels`` folder is created if needed (with its parents) and its
            old ``*.qrels`` files are removed first, so a rebuild with fewer
            tasks, or none, leaves no stale file.

    Returns:
        :data:`QRELS_SCHEMA` table, one row per file written: lines are
        ``query_id 0 chunk_id 1``, one per distinct (query, chunk), ordered by
        query_id, then page and chunk order.

    Raises:
        ValueError: If a query id contains white space (it would break the
            space-separated format), naming the task and query.
    """
    tasks = sorted(set(tasks))
    if not export_dir:
        return QRELS_SCHEMA.empty_table()
    qrels_dir = Path(export_dir) / "qrels"
    # Old files go even when no task is given now: they name chunks of an
    # earlier build.
    for old in qrels_dir.glob("*.qrels"):
        old.unlink()
    if not tasks:
        return QRELS_SCHEMA.empty_table()
    qrels_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for task in tasks:
        pairs = (
            matches.filter(f"task = {_quote(task)}")
            .aggregate(
                "query_id, chunk_id, min(wikipedia_id) as wikipedia_id, "
                "min(section_order) as section_order, min(chunk_order) as chunk_order",
                "query_id, chunk_id",
            )
            .order("query_id, wikipedia_id, section_order, chunk_order")
        )
        path = qrels_dir / f"{task}.qrels"
        num_lines = 0
        queries = set()
        with path.open("w", encoding="utf-8", newline="\n") as out:
            for batch in pairs.to_arrow_reader(50_000):
                for query_id, chunk_id in zip(
                    batch.column("query_id").to_pylist(),
                    batch.column("chunk_id").to_pylist(),
                    strict=True,
                ):
                    if not query_id or query_id.split() != [query_id]:
                        raise ValueError(
                            f"task {task}: query id {query_id!r} is empty or holds "
                            "white space; it cannot be written to a qrels file"
                        )
                    out.write(f"{query_id} 0 {chunk_id} 1\n")
                    queries.add(query_id)
                    num_lines += 1
        rows.append((task, str(path), len(queries), num_lines))
    return pa.Table.from_pylist(
        [dict(zip(QRELS_SCHEMA.names, row, strict=True)) for row in rows],
        schema=QRELS_SCHEMA,
    )
