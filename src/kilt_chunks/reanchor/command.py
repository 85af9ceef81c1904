"""``kilt-chunks reanchor``: KILT's gold provenance carried onto another snapshot.

``kilt-chunks reanchor TASK_FILE... --old-pages P --new-pages Q --out DIR``
writes ``DIR/<task file name>`` (KILT's format, provenance pointing into
``Q``), the per-entry mapping table ``reanchor_spans`` and the per-task
counts ``reanchor_report`` in ``DIR/reanchor.duckdb`` (or in ``--db``), the
report as JSON in ``DIR/reanchor/report.json``, and prints the report. The
re-anchored files feed the ordinary build of the new pages
(``dbt build --vars '{kilt_path: Q/pages/, kilt_tasks: DIR}'``), whose
provenance models make the chunk and page qrels from them.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import duckdb
import pyarrow as pa

from kilt_chunks.reanchor.locate import FUZZY_MIN_CHARS, FUZZY_THRESHOLD
from kilt_chunks.reanchor.mapping import Mapper
from kilt_chunks.reanchor.pages import find_redirects, load_snapshot, pages_path
from kilt_chunks.reanchor.report import format_report, rates, task_counts
from kilt_chunks.reanchor.tasks import (
    SPAN_COLUMNS,
    TaskResult,
    map_by_page,
    reanchor_task,
    task_pages,
)

__all__ = [
    "COMMAND",
    "ReanchorError",
    "add_commands",
    "add_parser",
    "reanchor",
    "reanchored_tasks",
    "run",
]

COMMAND = "reanchor"

#: Where the report JSON goes, below ``--out`` (a subfolder, so ``--out`` can
#: be given to the build as ``kilt_tasks``: its only JSON files at the top
#: are the task files).
REPORT_FILE = Path("reanchor") / "report.json"
#: The DuckDB file written in ``--out`` when ``--db`` is not given.
DB_FILE = "reanchor.duckdb"

_SPAN_SCHEMA = pa.schema(
    [
        (name, pa.int64())
        if name.endswith(("_index", "_id", "_character", "_number", "_chars"))
        and not name.endswith("wikipedia_id")
        and name != "query_id"
        else (name, pa.float64())
        if name == "score"
        else (name, pa.bool_())
        if name.startswith("is_")
        else (name, pa.string())
        for name in SPAN_COLUMNS
    ]
)


class ReanchorError(ValueError):
    """The inputs cannot be re-anchored (the message names the file and why)."""


def _ratio(text: str) -> float:
    """``--threshold``: a number from 0 to 101 (101: no fuzzy match)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 101:
        raise argparse.ArgumentTypeError(f"{text}: expected 0 to 100 (or 101: off)")
    return value


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add ``reanchor`` to the ``kilt-chunks`` subcommands."""
    parser = commands.add_parser(
        COMMAND,
        help="carry KILT task provenance onto the pages of another snapshot",
        description="For every provenance span of the task files: read its"
        " evidence on the old (KILT 2019) page, find the page in the new"
        " snapshot (same id, else the title through the new dump's redirects)"
        " and the evidence on it (exact, after normalising, or fuzzy), and"
        " write the task files with provenance pointing into the new pages,"
        " the mapping table (DuckDB) and a report.",
    )
    parser.add_argument("task_files", nargs="+", type=Path, help="KILT task files")
    parser.add_argument(
        "--old-pages",
        required=True,
        help="the pages the provenance was made on: KILT's knowledge source"
        " (file or folder the loader reads)",
    )
    parser.add_argument(
        "--new-pages",
        required=True,
        help="the new snapshot: a from-dump output folder (or its pages/), or"
        " any pages the loader reads",
    )
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument(
        "--redirects",
        type=Path,
        help="redirects.parquet of the new snapshot (default: the one beside"
        " its pages, if any)",
    )
    parser.add_argument(
        "--db",
        type=Path,
        help=f"DuckDB file for the tables (default: OUT/{DB_FILE})",
    )
    parser.add_argument(
        "--threshold",
        type=_ratio,
        default=FUZZY_THRESHOLD,
        help="least rapidfuzz ratio (0-100) of a fuzzy match; above 100 turns"
        " fuzzy matching off (default %(default)s, chosen from the measurements"
        " in bench/RESULTS_REANCHOR.md)",
    )


def _write_tables(db: Path, results: list[TaskResult], counts: dict) -> None:
    rows = [row for result in results for row in result.rows]
    spans = pa.Table.from_pylist(rows, schema=_SPAN_SCHEMA)
    report = pa.Table.from_pylist(
        [{"task": task, **values} for task, values in counts.items()]
    )
    db.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(db)) as con:
        con.register("reanchor_spans_rows", spans)
        con.execute(
            "create or replace table reanchor_spans as"
            " select * from reanchor_spans_rows"
        )
        if report.num_rows:
            con.register("reanchor_report_rows", report)
            con.execute(
                "create or replace table reanchor_report as"
                " select * from reanchor_report_rows"
            )


def reanchor(
    task_files: list[Path],
    old_pages: str,
    new_pages: str,
    out: Path,
    *,
    redirects: Path | None = None,
    db: Path | None = None,
    threshold: float = FUZZY_THRESHOLD,
) -> dict:
    """Re-anchor ``task_files`` from ``old_pages`` onto ``new_pages``.

    Args:
        task_files: KILT task files (JSON lines, optionally ``.gz``).
        old_pages: The pages the provenance indexes (KILT's 2019 pages).
        new_pages: The new snapshot (a ``from-dump`` output or its ``pages/``).
        out: Output folder (created); a task file of the same name there is
            replaced.
        redirects: The new snapshot's ``redirects.parquet``; by default the
            one beside ``new_pages``, if any (else titles are looked up as
            they are).
        db: DuckDB file for ``reanchor_spans`` and ``reanchor_report``
            (default ``out/reanchor.duckdb``).
        threshold: Least fuzzy ratio.

    Returns:
        The report: settings, seconds, and per task its counts and rates.

    Raises:
        ReanchorError: A task file is missing, two have the same name, or a
            task file would be overwritten by its own output.
        kilt_chunks.build.loading.KiltInputError: Pages that cannot be read.
    """
    names: dict[str, Path] = {}
    for path in task_files:
        if not path.is_file():
            raise ReanchorError(f"task file {path}: not found")
        if path.name in names:
            raise ReanchorError(
                f"task files {names[path.name]} and {path} have the same name;"
                " their outputs would collide"
            )
        names[path.name] = path
        if (out / path.name).resolve() == path.resolve():
            raise ReanchorError(f"task file {path}: --out would overwrite it")
    if redirects is not None and not redirects.is_file():
        raise ReanchorError(f"redirects {redirects}: not found")
    started = time.monotonic()
    ids, titles = task_pages(task_files)
    old = load_snapshot(old_pages, ids)
    loaded_old = time.monotonic()
    titles |= {page.title for page in old.pages.values()}
    redirects = redirects or find_redirects(pages_path(new_pages))
    new = load_snapshot(new_pages, ids, titles, redirects_file=redirects)
    loaded_new = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    mapper = Mapper(old, new, threshold=threshold)
    map_by_page(task_files, mapper)
    results = [reanchor_task(path, out, mapper) for path in task_files]
    mapped = time.monotonic()
    counts = {r.task: task_counts(r) for r in results}
    db = db or out / DB_FILE
    _write_tables(db, results, counts)
    report = {
        "old_pages": str(old_pages),
        "new_pages": str(new_pages),
        "new_pages_path": _resolved(pages_path(new_pages)),
        "redirects": None if redirects is None else str(redirects),
        "fuzzy_threshold": threshold,
        "fuzzy_min_chars": FUZZY_MIN_CHARS,
        "pages_read": {"old": len(old.pages), "new": len(new.pages)},
        "seconds": {
            "read_old_pages": round(loaded_old - started, 3),
            "read_new_pages": round(loaded_new - loaded_old, 3),
            "map": round(mapped - loaded_new, 3),
            "total": round(time.monotonic() - started, 3),
        },
        "database": str(db),
        "tasks": {
            r.task: {
                "file": _resolved(r.target),
                "counts": counts[r.task],
                "rates": rates(counts[r.task]),
            }
            for r in results
        },
    }
    report_path = out / REPORT_FILE
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    report["report_file"] = str(report_path)
    return report


def _resolved(path: str | Path) -> str:
    """``path`` made absolute (symbolic links resolved), as compared below."""
    return str(Path(path).resolve())


def reanchored_tasks(
    task_files: Mapping[str, str | Path | None], kilt_path: str
) -> set[str]:
    """The tasks whose file ``kilt-chunks reanchor`` wrote onto ``kilt_path``.

    A task file was, when the report beside it (``<its folder>/``
    :data:`REPORT_FILE`) names it as a task's output and names these pages
    (the same pages folder, resolved) as its new pages. The build's check of
    gold made on other pages (``kilt_provenance_pages_check``) does not warn
    for such tasks: their offsets were made on these pages.

    Args:
        task_files: Per task, its task file (as the build read it), or None.
        kilt_path: The pages of the build.

    Returns:
        The task names; a missing or unreadable report counts as none.
    """
    if kilt_path.startswith("hf://"):
        return set()
    pages = _resolved(pages_path(kilt_path))
    found = set()
    for task, file in task_files.items():
        if not file:
            continue
        report_file = Path(file).parent / REPORT_FILE
        try:
            report = json.loads(report_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(report, dict) or report.get("new_pages_path") != pages:
            continue
        outputs = {
            t.get("file")
            for t in (report.get("tasks") or {}).values()
            if isinstance(t, dict)
        }
        if _resolved(file) in outputs:
            found.add(task)
    return found


def run(args: argparse.Namespace) -> str:
    """Run ``kilt-chunks reanchor`` from parsed arguments; return the report text."""
    report = reanchor(
        args.task_files,
        args.old_pages,
        args.new_pages,
        args.out,
        redirects=args.redirects,
        db=args.db,
        threshold=args.threshold,
    )
    redirects = (
        report["redirects"] or "none found: pages looked up by id and title only"
    )
    pages = report["pages_read"]
    header = [
        f"kilt-chunks reanchor: {report['old_pages']} -> {report['new_pages']}",
        f"  redirects: {redirects}",
        f"  pages read: {pages['old']:,} old, {pages['new']:,} new;"
        f" {report['seconds']['total']:.1f} s",
        f"  fuzzy: rapidfuzz ratio >= {report['fuzzy_threshold']:g},"
        f" evidence of >= {report['fuzzy_min_chars']} characters",
    ]
    counts = {task: t["counts"] for task, t in report["tasks"].items()}
    text = format_report(counts, header)
    return (
        f"{text}\n  task files: {args.out}/  mapping: {report['database']}"
        f" (reanchor_spans, reanchor_report)\n  (JSON: {report['report_file']})"
    )


def add_commands(
    commands: argparse._SubParsersAction,
) -> dict[str, Callable[[argparse.Namespace], str]]:
    """Add ``reanchor``; returns ``name -> run function``."""
    add_parser(commands)
    return {COMMAND: run}
