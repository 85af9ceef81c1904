"""KILT task files in, TREC qrels out: the Python ends of the provenance models.

A KILT task file (``nq-dev-kilt.jsonl``, ...) holds one query per line: ``id``,
``input`` and ``output``, a list of answers each with a ``provenance`` list of
Wikipedia spans (``wikipedia_id``, ``start_paragraph_id``, ``start_character``,
``end_paragraph_id``, ``end_character``; characters are offsets into
``text[paragraph_id]`` of the KILT page, end exclusive as KILT's
``match_answer`` computes them). :func:`read_task_lines` reads every line
(bad lines are kept with a reason, never stop the build), parsing them with the
SQL of the macro ``create_task_lines_parser`` (package data
``kilt_chunks/sql/json_lines.sql``, which the dbt build's pre-hook calls too);
the SQL models match the spans to chunks and grade them; :func:`write_task_files`
writes the queries, topics and qrels of each task.
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

from kilt_chunks.build.loading import UNREADABLE_INPUT
from kilt_chunks.evaluation import trec_id
from kilt_chunks.settings import project_path
from kilt_chunks.sql_templates import json_lines_macros

__all__ = [
    "KILT_SNAPSHOT_DATE",
    "PAGES_CHECK_SCHEMA",
    "QRELS_SCHEMA",
    "TASK_FILE_PATTERN",
    "TASK_FILE_SUFFIXES",
    "UNREADABLE_TASKS",
    "gold_pages_check",
    "read_task_lines",
    "resolve_task_files",
    "task_name",
    "write_task_files",
]

#: File names taken from a folder given as ``kilt_tasks``.
TASK_FILE_PATTERN = re.compile(r"^(?P<task>.+?)\.jsonl?(\.gz|\.zst)?$")

#: DuckDB table macro that parses a block of task lines:
#: ``kilt_task_lines_parsed(lines, task_name, task_file)``, ``lines`` the name of
#: a relation of ``line_number``, ``line`` and ``read_error``. The macro
#: ``create_task_lines_parser`` of ``sql/json_lines.sql`` defines it: in a
#: build, as the pre-hook of the model ``int_task_lines_read``, in the build's
#: database; outside one, :func:`read_task_lines` renders it itself.
TASK_LINES_MACRO = "kilt_task_lines_parsed"

#: Prefix of the reject reason of the row that marks unreadable task input
#: (the pages' own, :data:`kilt_chunks.build.loading.UNREADABLE_INPUT`); the model's
#: post-hook (macro ``stop_on_unreadable_input``) stops the build with the
#: rest of the reason as its one-line message.
UNREADABLE_TASKS = UNREADABLE_INPUT

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

#: The day of the Wikipedia snapshot KILT's knowledge source was made from
#: (KILT's README: "based on the 2019/08/01 Wikipedia dump"), and with it
#: the offsets of KILT's task files: a page revision dated later is not the
#: text they point into.
KILT_SNAPSHOT_DATE = "2019-08-01"

#: One row per task of :func:`gold_pages_check`.
PAGES_CHECK_SCHEMA = pa.schema(
    [
        ("task", pa.string()),
        ("input_kind", pa.string()),
        ("num_spans", pa.int64()),
        ("num_spans_revised_later", pa.int64()),
        ("num_spans_undated", pa.int64()),
        ("warning", pa.string()),
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

#: The parse of the block registered as _TASK_LINES_RELATION; parameters: the
#: task and the file.
_PARSE_QUERY = f"select * from {TASK_LINES_MACRO}('{_TASK_LINES_RELATION}', ?, ?)"


def task_lines_parser_sql() -> str:
    """The statement that defines :data:`TASK_LINES_MACRO`, for a connection
    outside a dbt build: the macro ``create_task_lines_parser`` of the
    package's ``sql/json_lines.sql`` rendered with Jinja, as dbt renders it in
    the build's pre-hook (the macro uses no dbt context)."""
    return str(json_lines_macros().create_task_lines_parser())


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
    schema = con.sql(_PARSE_QUERY, params=["", "."]).to_arrow_table().schema
    con.unregister(_TASK_LINES_RELATION)
    return schema


def read_task_lines(
    kilt_tasks: str, con: duckdb.DuckDBPyConnection | None = None
) -> pa.RecordBatchReader:
    """Read every line of the task files named by ``kilt_tasks``, one row each.

    Lines are split by :mod:`kilt_chunks.build.loading`'s line reader (LF only,
    plain or gzip, a line that is not UTF-8 kept as one bad line), so line
    numbers are exact whatever a line holds, and each line is parsed by
    :data:`TASK_LINES_MACRO`, 2,048 lines at a time (a 2 GB task file such as
    T-REx's train set streams; it is never held whole). A line that cannot be
    a query gets a ``reject_reason`` and the others are read on.

    Args:
        kilt_tasks: See :func:`resolve_task_files`; ``""`` reads nothing.
        con: A connection that sees :data:`TASK_LINES_MACRO`, for this
            stream alone (it is closed at the end of the stream): in the
            model, a cursor of its session (the pre-hook defined the macro).
            ``None`` opens a DuckDB in memory and defines the macro there
            (:func:`task_lines_parser_sql`).

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
    if con is None:
        con = duckdb.connect(config={"threads": 1})
        con.execute(task_lines_parser_sql())
    schema = _task_line_schema(con)
    return pa.RecordBatchReader.from_batches(
        schema, _task_line_batches(con, kilt_tasks, schema)
    )


def _task_line_batches(
    con: duckdb.DuckDBPyConnection, kilt_tasks: str, schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    from kilt_chunks.build.loading import _line_blocks

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
                    table = con.sql(
                        _PARSE_QUERY, params=[task, str(file)]
                    ).to_arrow_table()
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
    if not query_id:
        raise ValueError(
            f"task {task}: query id {query_id!r} is empty; it cannot be written"
            " to a qrels file"
        )
    return query_id


def _rows(rel: duckdb.DuckDBPyRelation, columns: list[str]) -> Iterator[tuple]:
    for batch in rel.select(", ".join(columns)).to_arrow_reader(50_000):
        yield from zip(*(batch.column(c).to_pylist() for c in columns), strict=True)


def _warn_dropped_task_files(
    qrels_dir: Path, replaced: Iterable[str], tasks: Iterable[str]
) -> None:
    """Say which evaluation files of the previous build go because their task
    is not among ``tasks`` (a rebuild without ``kilt_tasks`` removes them
    all), naming them."""
    kept = {task + suffix for task in tasks for suffix in TASK_FILE_SUFFIXES.values()}
    dropped = sorted(name for name in replaced if name not in kept)
    if dropped:
        from kilt_chunks.progress import emit_warning

        emit_warning(
            f"kilt_provenance_qrels: removes {len(dropped)} evaluation file"
            f"{'' if len(dropped) == 1 else 's'} of tasks this build did not read "
            f"from {qrels_dir}: {', '.join(dropped)}; pass the same kilt_tasks "
            "again to keep them"
        )


def write_task_files(
    chunk_qrels: duckdb.DuckDBPyRelation,
    page_qrels: duckdb.DuckDBPyRelation,
    queries: duckdb.DuckDBPyRelation,
    tasks: Iterable[str],
    export_dir: str,
    *,
    database: str = "",
    build: str = "",
) -> pa.Table:
    """Write the evaluation files of every task into ``<export_dir>/qrels/``.

    The files are written into ``<export_dir>/.qrels.partial/`` and that
    folder takes the place of ``qrels/`` in one atomic step
    (:func:`kilt_chunks.export.folder.replace_folder`): at every instant ``qrels/``
    holds the whole previous or the whole new set of files.

    Per task (see :data:`TASK_FILE_SUFFIXES`), each id of a qrels or topics
    file (query, chunk and page ids) as :func:`kilt_chunks.evaluation.trec_id`
    writes it: one field, white space and ``%`` percent-encoded (a task's
    page id ``12 34`` is ``12%2034``), read back by
    :func:`kilt_chunks.evaluation.read_qrels`:

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
            replaced as a whole, so a rebuild with fewer tasks, or none, leaves
            no stale file (other files are kept).
        database: Path of the build's DuckDB file: refuse an export folder
            another database wrote, and record this one as its owner
            (:func:`kilt_chunks.build.records.claim_export`); ``""`` checks nothing.
        build: Identity of the build, recorded beside the database.

    Returns:
        :data:`QRELS_SCHEMA` table, one row per file written (task, kind,
        path, distinct queries, lines).

    Raises:
        ValueError: If a query id is empty (it cannot be a field of the
            space-separated formats), naming the task.
        kilt_chunks.build.records.ExportOwnerError: If another database's export
            is in ``export_dir``.
    """
    from kilt_chunks.build.records import claim_export, export_lock
    from kilt_chunks.export.folder import (
        carry_over,
        export_root,
        file_names,
        remove_leftovers,
        replace_folder,
        staging_folder,
    )

    tasks = sorted(set(tasks))
    if not export_dir:
        return QRELS_SCHEMA.empty_table()
    export_dir = project_path(export_dir)
    root = export_root(export_dir)
    qrels_dir = root / "qrels"
    # Old files go even when no task is given now: they name chunks of an
    # earlier build.
    if not tasks and not qrels_dir.exists():
        return QRELS_SCHEMA.empty_table()
    with export_lock(export_dir):
        root.mkdir(parents=True, exist_ok=True)
        if database:
            claim_export(root, export_dir, database, build)
        remove_leftovers(qrels_dir)
        partial = staging_folder(qrels_dir)
        partial.mkdir()
        suffixes = tuple(sorted(set(TASK_FILE_SUFFIXES.values())))
        replaced = [p.name for p in qrels_dir.glob("*") if p.name.endswith(suffixes)]
        carry_over(qrels_dir, partial, replaced)
        _warn_dropped_task_files(qrels_dir, replaced, tasks)
        rows = _write_task_files(
            chunk_qrels, page_qrels, file_names(queries), tasks, partial
        )
        replace_folder(partial, qrels_dir)
    return pa.Table.from_pylist(
        [
            dict(
                zip(
                    QRELS_SCHEMA.names,
                    (*row[:2], str(qrels_dir / row[2]), *row[3:]),
                    strict=True,
                )
            )
            for row in rows
        ],
        schema=QRELS_SCHEMA,
    )


def _write_task_files(
    chunk_qrels: duckdb.DuckDBPyRelation,
    page_qrels: duckdb.DuckDBPyRelation,
    queries: duckdb.DuckDBPyRelation,
    tasks: list[str],
    qrels_dir: Path,
) -> list[tuple[str, str, str, int, int]]:
    """Write the files of :func:`write_task_files` into ``qrels_dir``; one
    ``(task, kind, file name, distinct queries, lines)`` per file."""
    rows = []
    for task in tasks:
        where = f"task = {_quote(task)}"
        sources: dict[str, tuple[Any, list[str], Callable[..., str]]] = {
            "chunks": (
                chunk_qrels.filter(where),
                ["query_id", "chunk_id", "relevance"],
                lambda q, c, r: f"{q} 0 {trec_id(c)} 1\n",
            ),
            "chunks_graded": (
                chunk_qrels.filter(where),
                ["query_id", "chunk_id", "relevance"],
                lambda q, c, r: f"{q} 0 {trec_id(c)} {r}\n",
            ),
            "pages": (
                page_qrels.filter(where),
                ["query_id", "wikipedia_id", "relevance"],
                lambda q, w, r: f"{q} 0 {trec_id(w)} {r}\n",
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
                    out.write(line(trec_id(values[0]), *values[1:]))
                    num_lines += 1
            rows.append((task, kind, path.name, len(seen), num_lines))
        path = qrels_dir / f"{task}{TASK_FILE_SUFFIXES['queries']}"
        task_queries = queries.filter(where)
        columns = task_queries.columns
        num_lines = 0
        with path.open("w", encoding="utf-8", newline="\n") as out:
            for values in _rows(task_queries, columns):
                record = dict(zip(columns, values, strict=True))
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                num_lines += 1
        rows.append((task, "queries", path.name, num_lines, num_lines))
    return rows


def gold_pages_check(
    spans: duckdb.DuckDBPyRelation,
    chunks: duckdb.DuckDBPyRelation,
    tasks: Iterable[str],
    *,
    input_kind: str,
    input_name: str = "",
    reanchored: Iterable[str] = (),
) -> pa.Table:
    """Whether each task's provenance offsets can hold on the pages built.

    KILT locates provenance by paragraph and character offsets, true only on
    the page text the task file was made on; a task line carries no revision
    (``wikipedia_id``, ``title``, offsets, ``bleu_score``, sometimes
    ``section``), so the check looks at the pages: the spans with offsets
    whose page has chunks (``num_spans``) are *on other pages* when

    1. the pages were rendered by ``kilt-chunks from-dump`` (``input_kind``
       ``"dump"``, :func:`kilt_chunks.export.card.describe_source`): another
       paragraph split than the one any task file was made on (KILT's own
       extraction, or the KILT-format pages a handmade task was written
       on), even for the same revision; or
    2. the span's page revision is dated after :data:`KILT_SNAPSHOT_DATE`
       (``history.timestamp``, UTC, in the ``kilt_chunks`` column
       ``timestamp``; one that is not ``YYYY-MM-DDTHH:MM:SSZ`` is counted
       as undated): it is not the revision of KILT's knowledge source.

    Args:
        spans: ``int_provenance_spans_checked`` (task, wikipedia_id,
            is_page_level).
        chunks: ``kilt_chunks`` (wikipedia_id, timestamp).
        tasks: Every task read (a task without spans gets a row of 0).
        input_kind: ``describe_source(kilt_path)["kind"]``: ``"kilt"``,
            ``"dump"`` or ``"pages"``.
        input_name: The input's name, for the warning.
        reanchored: Tasks whose task file ``kilt-chunks reanchor`` wrote onto
            these very pages (:func:`kilt_chunks.reanchor.reanchored_tasks`):
            their offsets were made on them, so neither rule warns.

    Returns:
        :data:`PAGES_CHECK_SCHEMA`, one row per task in name order;
        ``warning`` is NULL when neither rule holds, else one line saying
        which rule and how many spans.
    """
    located = spans.filter("not is_page_level and wikipedia_id is not null").select(
        "task, wikipedia_id"
    )
    dated = chunks.aggregate(
        "wikipedia_id, min(timestamp) as page_timestamp", "wikipedia_id"
    )
    joined = located.set_alias("s").join(
        dated.set_alias("p"), "s.wikipedia_id = p.wikipedia_id"
    )
    revised = (
        "try_strptime(page_timestamp, '%Y-%m-%dT%H:%M:%SZ')"
        f" >= date '{KILT_SNAPSHOT_DATE}' + interval 1 day"
    )
    counts = {
        task: (n, later, undated)
        for task, n, later, undated in joined.aggregate(
            f"task, count(*), count(*) filter (where {revised}),"
            " count(*) filter (where try_strptime(page_timestamp,"
            " '%Y-%m-%dT%H:%M:%SZ') is null)",
            "task",
        ).fetchall()
    }
    rows = []
    reanchored = set(reanchored)
    for task in sorted(set(tasks)):
        num_spans, later, undated = counts.get(task, (0, 0, 0))
        warning = None
        if task in reanchored:
            pass  # offsets made on these pages by kilt-chunks reanchor
        elif input_kind == "dump" and num_spans:
            warning = (
                f"task {task}: {num_spans:,} provenance spans located by their"
                f" offsets in pages that kilt-chunks from-dump rendered"
                f" ({input_name or 'the input'}); the offsets hold only on the"
                " pages the task file was made on (KILT's: its knowledge source"
                f" of {KILT_SNAPSHOT_DATE}), so its chunk and page qrels may"
                " point at other text"
            )
        elif later:
            warning = (
                f"task {task}: {later:,} of {num_spans:,} provenance spans are in"
                f" pages revised after {KILT_SNAPSHOT_DATE}, the snapshot of"
                " KILT's knowledge source the offsets were made on; those"
                " chunk qrels may point at other text"
            )
        rows.append((task, input_kind, num_spans, later, undated, warning))
    return pa.Table.from_pylist(
        [dict(zip(PAGES_CHECK_SCHEMA.names, row, strict=True)) for row in rows],
        schema=PAGES_CHECK_SCHEMA,
    )
