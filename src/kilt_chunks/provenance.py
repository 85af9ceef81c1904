"""KILT task files in, TREC qrels out: the Python ends of the provenance models.

A KILT task file (``nq-dev-kilt.jsonl``, ...) holds one query per line: ``id``,
``input`` and ``output``, a list of answers each with a ``provenance`` list of
Wikipedia spans (``wikipedia_id``, ``start_paragraph_id``, ``start_character``,
``end_paragraph_id``, ``end_character``; characters are offsets into
``text[paragraph_id]`` of the KILT page, end exclusive as KILT's
``match_answer`` computes them). :func:`read_task_lines` reads every line
(bad lines are kept with a reason, never stop the build); the SQL models match
the spans to chunks and grade them; :func:`write_task_files` writes the
queries, topics and qrels of each task.
"""

from __future__ import annotations

import glob
import json
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from kilt_chunks.settings import project_path

__all__ = [
    "QRELS_SCHEMA",
    "TASK_FILE_PATTERN",
    "TASK_FILE_SUFFIXES",
    "TASK_LINE_STRUCTURE",
    "UNREADABLE_TASKS",
    "read_task_lines",
    "resolve_task_files",
    "task_name",
    "write_task_files",
]

#: File names taken from a folder given as ``kilt_tasks``.
TASK_FILE_PATTERN = re.compile(r"^(?P<task>.+?)\.jsonl?(\.gz|\.zst)?$")

#: Typed structure of a task line for DuckDB's ``json_transform`` (written
#: out, never sampled); other keys (``meta``, ...) are ignored. A number given
#: where text is expected (an integer ``id`` or ``wikipedia_id``) becomes its
#: decimal text; the type checks of :func:`_task_lines_query` reject the rest.
TASK_LINE_STRUCTURE = """{
    "id": "VARCHAR",
    "input": "VARCHAR",
    "output": [{
        "answer": "VARCHAR",
        "provenance": [{
            "wikipedia_id": "VARCHAR",
            "title": "VARCHAR",
            "section": "VARCHAR",
            "start_paragraph_id": "BIGINT",
            "start_character": "BIGINT",
            "end_paragraph_id": "BIGINT",
            "end_character": "BIGINT",
            "bleu_score": "DOUBLE"
        }]
    }]
}"""

#: Prefix of the reject reason of the row that marks unreadable task input;
#: the model's post-hook (macro ``stop_on_unreadable_input``) stops the build
#: with the rest of the reason as its one-line message.
UNREADABLE_TASKS = "unreadable input: "

#: One row per file written by :func:`write_task_files`.
QRELS_SCHEMA = pa.schema(
    [
        ("task", pa.string()),
        ("kind", pa.string()),
        ("path", pa.string()),
        ("num_queries", pa.int64()),
        ("num_lines", pa.int64()),
    ]
)

#: The files written per task, by kind: file name suffix after the task name.
TASK_FILE_SUFFIXES = {
    "chunks": ".qrels",
    "chunks_graded": ".graded.qrels",
    "pages": ".pages.qrels",
    "queries": ".queries.jsonl",
    "topics": ".topics.tsv",
}


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
            files, optionally ``.gz``/``.zst``; not recursive) or a glob; a
            relative one is resolved against the dbt project folder
            (:func:`kilt_chunks.settings.project_path`).

    Returns:
        ``(task, path)`` pairs sorted by path; empty for ``""``.

    Raises:
        FileNotFoundError: If a non-empty ``spec`` names no file.
        ValueError: If two files give the same task name.
    """
    spec = project_path((spec or "").strip())
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


#: Name under which each block of lines is registered for the parse query.
_TASK_LINES_RELATION = "kilt_task_line_block"

#: JSON types accepted for an id (KILT ids are strings; integers are taken as
#: their decimal text).
_ID_TYPES = "('VARCHAR', 'BIGINT', 'UBIGINT')"


def _first_bad(types: str, allowed: str, what: str) -> str:
    """CASE branch: the first element of the list ``types`` (JSON type names)
    that is not in ``allowed`` names the problem."""
    bad = f"[t for t in {types} if t not in {allowed}]"
    return f"""when len({bad}) > 0
                then '{what} is ' || lower({bad}[1]) || ', not a ' || '{{kind}}'"""


def _task_lines_query(task: str, file: Path) -> str:
    """Parse one block of task lines (registered as _TASK_LINES_RELATION,
    columns ``line_number``, ``line``, ``read_error``) with the explicit
    structure; ``reject_reason`` NULL for a usable line."""
    offsets = " || ".join(
        f"coalesce(json_type(line, '$.output[*].provenance[*].{key}'), [])"
        for key in (
            "start_paragraph_id",
            "start_character",
            "end_paragraph_id",
            "end_character",
        )
    )
    checks = "\n            ".join(
        [
            _first_bad(
                "json_type(line, '$.output[*]')", "('OBJECT')", "an output"
            ).format(kind="JSON object"),
            _first_bad(
                "json_type(line, '$.output[*].answer')",
                "('VARCHAR')",
                "an output answer",
            ).format(kind="string"),
            _first_bad(
                "json_type(line, '$.output[*].provenance')",
                "('ARRAY', 'NULL')",
                "an output provenance",
            ).format(kind="list"),
            _first_bad(
                "json_type(line, '$.output[*].provenance[*]')",
                "('OBJECT')",
                "a provenance entry",
            ).format(kind="JSON object"),
            _first_bad(
                "json_type(line, '$.output[*].provenance[*].wikipedia_id')",
                _ID_TYPES,
                "a provenance wikipedia_id",
            ).format(kind="string"),
            _first_bad(
                f"({offsets})", "('BIGINT', 'UBIGINT', 'NULL')", "a provenance offset"
            ).format(kind="whole number"),
        ]
    )
    return f"""
    with parsed as not materialized (
        select
            line_number,
            line,
            read_error,
            json_valid(line) as is_valid
        from {_TASK_LINES_RELATION}
    ),

    typed as not materialized (
        select
            *,
            case when is_valid and json_type(line) = 'OBJECT' then
                json_transform(line, {_quote(TASK_LINE_STRUCTURE)})
            end as parsed_line
        from parsed
    )

    select
        {_quote(task)} as task,
        {_quote(str(file))} as source_file,
        line_number,
        case when parsed_line is not null then parsed_line.id end as query_id,
        parsed_line.input as input,
        parsed_line.output as output,
        case
            when read_error is not null then read_error
            when line is null or trim(line, ' ' || chr(9) || chr(10) || chr(13)) = ''
                then 'empty line'
            when not is_valid then 'invalid JSON (truncated or malformed line)'
            when json_type(line) <> 'OBJECT' then 'line is not a JSON object'
            when coalesce(json_type(line, '$.id'), 'NULL') = 'NULL' then 'missing id'
            when json_type(line, '$.id') not in {_ID_TYPES}
                then 'id is ' || lower(json_type(line, '$.id')) || ', not a string'
            when parsed_line.id = '' then 'id is empty'
            when regexp_matches(parsed_line.id, '\\s')
                then 'id ' || to_json(parsed_line.id)
                    || ' holds white space (it cannot be a TREC query id)'
            when coalesce(json_type(line, '$.input'), 'NULL') = 'NULL'
                then 'missing input'
            when json_type(line, '$.input') <> 'VARCHAR'
                then 'input is ' || lower(json_type(line, '$.input'))
                    || ', not a string'
            when coalesce(json_type(line, '$.output'), 'NULL') not in ('ARRAY', 'NULL')
                then 'output is ' || lower(json_type(line, '$.output'))
                    || ', not a list'
            {checks}
        end as reject_reason
    from typed
    """


def _unreadable_table(message: str, schema: pa.Schema) -> pa.Table:
    row: dict[str, list[object]] = {name: [None] for name in schema.names}
    row["task"] = [""]
    row["reject_reason"] = [UNREADABLE_TASKS + message]
    return pa.Table.from_pydict(row, schema=schema)


def _task_line_schema(con: duckdb.DuckDBPyConnection) -> pa.Schema:
    con.register(
        _TASK_LINES_RELATION,
        pa.table(
            {
                "line_number": pa.array([], pa.int64()),
                "line": pa.array([], pa.string()),
                "read_error": pa.array([], pa.string()),
            }
        ),
    )
    schema = con.sql(_task_lines_query("", Path("."))).to_arrow_table().schema
    con.unregister(_TASK_LINES_RELATION)
    return schema


def read_task_lines(kilt_tasks: str) -> pa.RecordBatchReader:
    """Read every line of the task files named by ``kilt_tasks``, one row each.

    Lines are split by :mod:`kilt_chunks.loading`'s line reader (LF only,
    plain or gzip, a line that is not UTF-8 kept as one bad line), so line
    numbers are exact whatever a line holds, and each line is parsed with
    :data:`TASK_LINE_STRUCTURE`, 2,048 lines at a time (a 2 GB task file such
    as T-REx's train set streams; it is never held whole). A line that cannot
    be a query gets a ``reject_reason`` and the others are read on.

    Args:
        kilt_tasks: See :func:`resolve_task_files`; ``""`` reads nothing.

    Returns:
        A stream of Arrow batches, one row per line in file then line order:
        ``task``, ``source_file``, ``line_number`` (1-based), ``query_id``,
        ``input``, ``output`` (KILT's list of answers, each with its
        ``provenance`` list), ``reject_reason`` (NULL for a usable line; e.g.
        ``invalid JSON (truncated or malformed line)``, ``output is object,
        not a list``, ``id "a b" holds white space ...``, ``duplicate id
        (first on line 3)``). When the files cannot be read (no such path,
        two files with one task name, a truncated gzip file) the stream ends
        with one row whose reason starts with :data:`UNREADABLE_TASKS` and
        names the file; the model's post-hook stops the build with it.
    """
    con = duckdb.connect(config={"threads": 1})
    schema = _task_line_schema(con)
    return pa.RecordBatchReader.from_batches(
        schema, _task_line_batches(con, kilt_tasks, schema)
    )


def _task_line_batches(
    con: duckdb.DuckDBPyConnection, kilt_tasks: str, schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    from kilt_chunks.loading import _line_blocks

    try:
        try:
            files = resolve_task_files(kilt_tasks)
        except (OSError, ValueError) as exc:
            yield from _unreadable_table(str(exc), schema).to_batches()
            return
        for task, file in files:
            seen: dict[str, int] = {}
            line_number = 0
            try:
                for block in _line_blocks(file):
                    numbers = pa.array(
                        range(line_number + 1, line_number + block.num_rows + 1),
                        pa.int64(),
                    )
                    line_number += block.num_rows
                    con.register(
                        _TASK_LINES_RELATION,
                        block.add_column(0, "line_number", numbers),
                    )
                    table = con.sql(_task_lines_query(task, file)).to_arrow_table()
                    yield from _mark_duplicates(table, seen).cast(schema).to_batches()
            except (OSError, EOFError, zlib.error) as exc:
                message = (
                    f"kilt_tasks file {file}, after line {line_number:,}: "
                    f"cannot be read ({exc})"
                )
                yield from _unreadable_table(message, schema).to_batches()
                return
    finally:
        con.close()


def _mark_duplicates(table: pa.Table, seen: dict[str, int]) -> pa.Table:
    """Reject a usable line whose id an earlier line of the task already had
    (the first is kept); ``seen`` maps id -> first line and is updated."""
    ids = table.column("query_id").to_pylist()
    reasons = table.column("reject_reason").to_pylist()
    numbers = table.column("line_number").to_pylist()
    changed = False
    for i, (query_id, reason) in enumerate(zip(ids, reasons, strict=True)):
        if reason is not None:
            continue
        if query_id in seen:
            reasons[i] = f"duplicate id (first on line {seen[query_id]:,})"
            changed = True
        else:
            seen[query_id] = numbers[i]
    if not changed:
        return table
    index = table.schema.get_field_index("reject_reason")
    return table.set_column(index, "reject_reason", pa.array(reasons, pa.string()))


def _check_query_id(task: str, query_id: str | None) -> str:
    if not query_id or query_id.split() != [query_id]:
        raise ValueError(
            f"task {task}: query id {query_id!r} is empty or holds "
            "white space; it cannot be written to a qrels file"
        )
    return query_id


def _rows(rel: duckdb.DuckDBPyRelation, columns: list[str]) -> Iterator[tuple]:
    for batch in rel.select(", ".join(columns)).to_arrow_reader(50_000):
        yield from zip(*(batch.column(c).to_pylist() for c in columns), strict=True)


def write_task_files(
    chunk_qrels: duckdb.DuckDBPyRelation,
    page_qrels: duckdb.DuckDBPyRelation,
    queries: duckdb.DuckDBPyRelation,
    tasks: Iterable[str],
    export_dir: str,
) -> pa.Table:
    """Write the evaluation files of every task into ``<export_dir>/qrels/``.

    Per task (see :data:`TASK_FILE_SUFFIXES`):

    * ``<task>.qrels``: binary chunk qrels, ``query_id 0 chunk_id 1``;
    * ``<task>.graded.qrels``: the same chunks, ``query_id 0 chunk_id rel``
      with rel 2 (the chunk holds the whole span) or 1 (part of it);
    * ``<task>.pages.qrels``: ``query_id 0 wikipedia_id 1``, KILT's page-level
      gold (page-level provenance included);
    * ``<task>.queries.jsonl``: one JSON object per usable query, the columns
      of ``kilt_queries`` (``input``, ``answers``, ``evidence_sets``, ...);
    * ``<task>.topics.tsv``: ``query_id<TAB>input``, the TSV topics format
      Anserini and Pyserini read; tabs and line breaks inside an input
      become spaces.

    Args:
        chunk_qrels: ``kilt_qrels_chunks`` (task, query_id, chunk_id,
            relevance, in qrels order).
        page_qrels: ``kilt_qrels_pages`` (task, query_id, wikipedia_id,
            relevance).
        queries: ``kilt_queries``.
        tasks: Every task read; a task without any match gets empty qrels.
        export_dir: Export folder; ``""`` writes nothing. The ``qrels``
            folder is created if needed and its old files of these kinds are
            removed first, so a rebuild with fewer tasks, or none, leaves no
            stale file (other files are left alone).

    Returns:
        :data:`QRELS_SCHEMA` table, one row per file written (task, kind,
        path, distinct queries, lines).

    Raises:
        ValueError: If a query id is empty or holds white space (it would
            break the space-separated formats), naming the task and query.
    """
    tasks = sorted(set(tasks))
    if not export_dir:
        return QRELS_SCHEMA.empty_table()
    qrels_dir = Path(project_path(export_dir)) / "qrels"
    # Old files go even when no task is given now: they name chunks of an
    # earlier build.
    for suffix in sorted(set(TASK_FILE_SUFFIXES.values())):
        for old in qrels_dir.glob(f"*{suffix}"):
            old.unlink(missing_ok=True)
    if not tasks:
        return QRELS_SCHEMA.empty_table()
    qrels_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for task in tasks:
        where = f"task = {_quote(task)}"
        sources: dict[str, tuple[Any, list[str], Callable[..., str]]] = {
            "chunks": (
                chunk_qrels.filter(where),
                ["query_id", "chunk_id", "relevance"],
                lambda q, c, r: f"{q} 0 {c} 1\n",
            ),
            "chunks_graded": (
                chunk_qrels.filter(where),
                ["query_id", "chunk_id", "relevance"],
                lambda q, c, r: f"{q} 0 {c} {r}\n",
            ),
            "pages": (
                page_qrels.filter(where),
                ["query_id", "wikipedia_id", "relevance"],
                lambda q, w, r: f"{q} 0 {w} {r}\n",
            ),
            "topics": (
                queries.filter(where),
                ["query_id", "input"],
                lambda q, text: f"{q}\t{' '.join((text or '').split())}\n",
            ),
        }
        for kind, (rel, columns, line) in sources.items():
            path = qrels_dir / f"{task}{TASK_FILE_SUFFIXES[kind]}"
            seen: set[str] = set()
            num_lines = 0
            with path.open("w", encoding="utf-8", newline="\n") as out:
                for values in _rows(rel, columns):
                    seen.add(_check_query_id(task, values[0]))
                    out.write(line(*values))
                    num_lines += 1
            rows.append((task, kind, str(path), len(seen), num_lines))
        path = qrels_dir / f"{task}{TASK_FILE_SUFFIXES['queries']}"
        task_queries = queries.filter(where)
        columns = task_queries.columns
        num_lines = 0
        with path.open("w", encoding="utf-8", newline="\n") as out:
            for values in _rows(task_queries, columns):
                record = dict(zip(columns, values, strict=True))
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                num_lines += 1
        rows.append((task, "queries", str(path), num_lines, num_lines))
    return pa.Table.from_pylist(
        [dict(zip(QRELS_SCHEMA.names, row, strict=True)) for row in rows],
        schema=QRELS_SCHEMA,
    )
