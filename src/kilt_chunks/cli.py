"""Command line: ``kilt-chunks summary`` prints what a build produced,
``kilt-chunks stats`` its corpus statistics, ``kilt-chunks push REPO_ID``
uploads its export folder to the Hugging Face Hub; ``kilt-chunks bm25`` writes
a BM25 run for a task's queries; ``kilt-chunks eval`` scores a run against a
task's page and chunk qrels; ``kilt-chunks from-dump`` builds KILT pages from a
Wikipedia XML dump and ``kilt-chunks compare-pages`` compares two page files."""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

import duckdb

from kilt_chunks.bm25 import Bm25Error
from kilt_chunks.chunking_settings import ChunkingSettings
from kilt_chunks.database import DatabaseInUseError, connect, table_exists
from kilt_chunks.dump.build import DumpBuildError
from kilt_chunks.dump.command import COMMANDS as DUMP_COMMANDS
from kilt_chunks.dump.command import add_dump_commands, run_dump_command
from kilt_chunks.evaluation import DEFAULT_KS, EvaluationError
from kilt_chunks.export.folder import CARD_FILE, EXPORT_TABLES, config_files
from kilt_chunks.rag import dense, embed, fuse, rerank
from kilt_chunks.rag.llm_cli import add_llm_commands
from kilt_chunks.rag.models import RagError
from kilt_chunks.reanchor import command as reanchor_command

#: The RAG commands: module with add_parser(commands) and run(args) -> str.
RAG_COMMANDS = {"embed": embed, "dense": dense, "rerank": rerank, "fuse": fuse}

__all__ = [
    "DEFAULT_DB",
    "IncompleteBuildError",
    "NoBuildError",
    "build_summary",
    "corpus_stats",
    "export_line",
    "main",
    "run_bm25",
    "run_eval",
]

DEFAULT_DB = "kilt_chunks.duckdb"


class IncompleteBuildError(RuntimeError):
    """The last dbt run on the file did not finish; the message is the summary
    of the tables as they are, followed by what failed."""


class NoBuildError(RuntimeError):
    """The DuckDB file holds no finished build to report on (empty, not a
    DuckDB file, or its build failed before the tables were made); the
    message is one line."""


def _open_build(db_path: str, advice: str) -> duckdb.DuckDBPyConnection:
    """Open a build's DuckDB file read-only, or say in one line why not.

    Raises:
        FileNotFoundError: If ``db_path`` does not exist.
        NoBuildError: If it is empty or not a DuckDB file.
        DatabaseInUseError: If a build still holds it.
    """
    path = Path(db_path)
    if not path.exists():
        raise FileNotFoundError(f"{db_path}: no such DuckDB file; run `dbt build`")
    if path.is_file() and path.stat().st_size == 0:
        raise NoBuildError(
            f"{db_path} is an empty file, not the DuckDB file of a build: run "
            "`dbt build` (KILT_CHUNKS_DB names the file)"
        )
    try:
        return connect(db_path, read_only=True, advice=advice)
    except duckdb.IOException as exc:
        if "not a valid DuckDB database file" not in str(exc):
            raise
        raise NoBuildError(
            f"{db_path} is not a DuckDB database file: give the file a `dbt "
            "build` wrote (--db or KILT_CHUNKS_DB)"
        ) from None


def _last_run_failure(con: duckdb.DuckDBPyConnection) -> str | None:
    """How the last dbt run on the file ended when it did not finish
    (``kilt_build_run``), e.g. ``failed in: base_kilt__pages``; None when it
    finished, or the file predates the table."""
    if not table_exists(con, "kilt_build_run"):
        return None
    rows = con.sql("select is_complete, failed_nodes from kilt_build_run").fetchall()
    if not rows or rows[0][0]:
        return None
    if rows[0][1]:
        return "failed in: " + ", ".join(rows[0][1])
    return "did not finish (killed, or a step after the models failed, e.g. the export)"


def _require_tables(
    con: duckdb.DuckDBPyConnection, db_path: str, names: tuple[str, ...]
) -> None:
    """Raise :class:`NoBuildError` (one line) when a table the command reads
    is missing: the build failed before making it, or never ran."""
    missing = [name for name in names if not table_exists(con, name)]
    if not missing:
        return
    failure = _last_run_failure(con)
    if failure is not None:
        raise NoBuildError(
            f"{db_path} holds no finished build: the last dbt run {failure}, "
            f"before it made {missing[0]}; fix that and run `dbt build` again"
        )
    raise NoBuildError(
        f"{db_path} holds no finished kilt-chunks build (no table {missing[0]}):"
        " run `dbt build`"
    )


def build_summary(db_path: str) -> str:
    """Summarise a finished build from its ``kilt_load_audit`` and build info.

    Args:
        db_path: The DuckDB file written by ``dbt build``.

    Returns:
        Several lines of text: pages read, loaded, chunked, without text and
        rejected (by reason), sections kept and dropped, chunks written, and
        where the database and the Parquet export are.

    Raises:
        FileNotFoundError: If ``db_path`` does not exist.
        DatabaseInUseError: If a build still holds the file.
        NoBuildError: If the file is empty, not a DuckDB file, or holds no
            finished build (its build failed before the tables were made).
        IncompleteBuildError: If the last `dbt build` did not finish.
    """
    advice = "wait for that build to finish, then run the summary"
    with _open_build(db_path, advice) as con:
        _require_tables(
            con, db_path, ("kilt_load_audit", "kilt_build_info", "kilt_rejected_pages")
        )
        failure = _last_run_failure(con)
        audit = con.sql("select * from kilt_load_audit")
        row = dict(zip(audit.columns, audit.fetchall()[0], strict=True))
        info_rel = con.sql("select * from kilt_build_info")
        info = dict(zip(info_rel.columns, info_rel.fetchall()[0], strict=True))
        run_columns = {
            name
            for (name,) in con.sql(
                "select column_name from duckdb_columns()"
                " where table_name = 'kilt_build_run'"
            ).fetchall()
        }
        has_run = bool(run_columns)
        # Files of builds before the column existed: their runs chunked.
        chunked = "is_chunking_run" if "is_chunking_run" in run_columns else "true"
        run = (
            dict(
                zip(
                    ["wall_seconds", "is_complete", "failed_nodes", "chunked"],
                    con.sql(
                        "select wall_seconds, is_complete, failed_nodes,"
                        f" {chunked} from kilt_build_run"
                    ).fetchall()[0],
                    strict=True,
                )
            )
            if has_run
            else None
        )
        reasons = con.sql(
            "select reject_reason, count(*) from kilt_rejected_pages "
            "group by 1 order by 2 desc, 1 limit 10"
        ).fetchall()
        has_tasks = con.sql(
            "select count(*) from duckdb_tables()"
            " where table_name = 'kilt_provenance_summary'"
        ).fetchall()[0][0]
        tasks = (
            con.sql(
                "select task, num_lines_rejected, num_queries,"
                " num_queries_without_chunks, num_page_qrels, num_qrels"
                " from kilt_provenance_summary order by task"
            ).fetchall()
            if has_tasks
            else []
        )
    # Every chunking setting the chunks were built with (ChunkingSettings, in
    # its order), and which token counting ran.
    settings = ", ".join(
        f"{name} {info[name]}" for name in ChunkingSettings.names() if name in info
    )
    counting = info.get("token_counting")
    counting = f"; {counting} counting" if counting else ""
    lines = [
        f"kilt-chunks build of {info['kilt_path']} ({settings}{counting})",
        f"  pages read        {row['lines_read']:>12,}",
        f"  pages loaded      {row['pages_loaded']:>12,}",
        f"  pages chunked     {row['pages_chunked']:>12,}",
        f"  pages w/o text    {row['pages_without_text']:>12,}",
        f"  pages rejected    {row['pages_rejected']:>12,}"
        f"  ({row['pages_duplicate']:,} duplicates)",
    ]
    lines += [f"    {count:>8,}  {reason}" for reason, count in reasons]
    lines += [
        f"  sections kept     {row['sections_kept']:>12,}",
        f"  sections dropped  {row['sections_dropped']:>12,}  (empty or white space)",
        f"  chunks written    {row['chunks_written']:>12,}",
        f"  section text      {row['section_text_bytes'] / 1e6:>12,.1f} MB",
        *(
            f"  {field} not an integer {row[field + '_coerced']:>6,}  (stored as NULL)"
            for field in ("pageid", "parentid", "revid")
            if row.get(field + "_coerced")
        ),
        f"  database          {os.path.abspath(db_path)}  (table kilt_chunks)",
    ]
    if run is not None and run["wall_seconds"] is not None:
        seconds = float(run["wall_seconds"])
        if run["chunked"]:
            rate = row["section_text_bytes"] / 1e6 / seconds if seconds > 0 else 0.0
            speed = f"  ({rate:,.1f} MB/s of section text)"
        else:
            speed = "  (a partial run: it did not chunk)"
        lines.append(f"  build wall time   {seconds:>12,.1f} s{speed}")
    if failure is not None:
        raise IncompleteBuildError(
            "\n".join(lines)
            + f"\n  THE LAST dbt RUN {failure}; the figures above may be those of an"
            " earlier build: run `dbt build` again"
        )
    export_dir = info.get("export_dir") or ""
    if export_dir:
        lines.append(export_line(export_dir))
    for task, rejected, queries, without, page_qrels, chunk_qrels in tasks:
        lines.append(
            f"  task {task}: {queries:,} queries, {without:,} without any"
            f" relevant chunk; {page_qrels:,} page and {chunk_qrels:,} chunk qrels"
            f"; {rejected:,} lines rejected"
        )
    return "\n".join(lines)


def _require_db(db_path: str) -> None:
    if not Path(db_path).exists():
        raise FileNotFoundError(f"{db_path}: no such DuckDB file; run `dbt build`")


def run_bm25(args: argparse.Namespace) -> str:
    """``kilt-chunks bm25``: index if needed, search the task's queries, write
    the run. Returns the lines to print (index reused or built, run written).

    Raises:
        FileNotFoundError: If the DuckDB file does not exist.
        Bm25Error: If the task has no queries, or the corpus no chunks.
    """
    from kilt_chunks import bm25

    _require_db(args.db)
    index = Path(args.index or f"{args.db}.bm25")
    queries = bm25.task_queries(args.db, args.task)
    share = args.max_df_share
    if share is not None and not 0 < share <= 1:  # before any indexing
        raise ValueError(f"--max-df-share must be in (0, 1], not {share}")
    lines = []
    if args.reindex or not bm25.index_is_current(args.db, index):
        found = bm25.index_format(index)
        if found not in (None, bm25.INDEX_FORMAT):
            lines.append(
                f"bm25 index {index}/: format {found} (another kilt-chunks"
                f" version), rebuilt as format {bm25.INDEX_FORMAT}"
            )
        meta = bm25.build_index(
            args.db, index, threads=args.threads or None, progress_seconds=30
        )
        resumed = meta["resumed_from"]
        lines.append(
            f"bm25 index {index}/: {meta['num_chunks']:,} chunks,"
            f" {meta['index_bytes'] / 1e6:,.1f} MB, {meta['index_seconds']:.1f} s"
            + (f" (resumed after {resumed:,} chunks)" if resumed else "")
        )
    else:
        lines.append(f"bm25 index {index}/: reused (same chunks)")
    hits = bm25.search(
        index,
        [text for _, text in queries],
        k=args.k,
        db_path=args.db,
        threads=args.threads or None,
        max_df_share=args.max_df_share,
    )
    run = Path(args.run or Path("runs") / f"bm25.{args.task}.trec")
    tag = bm25.RUN_TAG
    if args.max_df_share is not None:
        tag += f"-maxdf{args.max_df_share:g}"  # not exact BM25: named apart
    written = bm25.write_trec_run(run, [q for q, _ in queries], hits, tag=tag)
    lines.append(
        f"run {run}: {len(queries):,} queries, {written:,} lines (top {args.k},"
        f" tag {tag})"
    )
    return "\n".join(lines)


def run_eval(args: argparse.Namespace) -> str:
    """``kilt-chunks eval``: score the run, write the JSON, return the table.

    Raises:
        FileNotFoundError: If the run, qrels or DuckDB file does not exist.
        EvaluationError: If a file is malformed or the task unknown.
    """
    from kilt_chunks import evaluation

    run = evaluation.read_run(args.run)
    chunk_texts = None
    if args.task:
        _require_db(args.db)
        gold = evaluation.gold_from_database(args.db, args.task)
    elif args.gold:
        gold = evaluation.gold_from_kilt_file(args.gold)
    else:
        gold = evaluation.gold_from_qrels(args.qrels, run)
    if run.is_chunk_run and Path(args.db).exists():
        chunk_texts = evaluation.chunk_texts_from_database(args.db)
    try:
        ks = [int(k) for k in args.ks.split(",") if k.strip()]
    except ValueError as exc:
        raise EvaluationError(f"--ks {args.ks!r}: not whole numbers") from exc
    result = evaluation.evaluate(
        gold,
        run,
        ks=ks,
        skip_empty_sets=args.skip_empty_sets,
        chunk_texts=chunk_texts,
    )
    result["run"] = {"path": os.path.abspath(args.run), "format": run.format}
    out = Path(args.json or f"{args.run}.eval.json")
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return evaluation.format_table(result) + f"\n  (JSON: {out})"


def export_line(export_dir: str) -> str:
    """The summary's line on the export folder: its path, the Parquet files
    of each config and whether the dataset card is there, e.g.
    ``export  /x/exports/  (chunks 1 file, chunk_spans 1 file; card README.md)``."""
    root = Path(export_dir).expanduser()
    parts = []
    for table in EXPORT_TABLES:
        count = len(config_files(root, table.config))
        if table.only_if_rows and not count:
            continue
        parts.append(f"{table.config} {count:,} file{'' if count == 1 else 's'}")
    card = "card README.md" if (root / CARD_FILE).is_file() else "no card"
    return f"  export            {os.path.abspath(root)}/  ({', '.join(parts)}; {card})"


def corpus_stats(db_path: str) -> str:
    """The corpus statistics of a finished build, as a text table.

    Args:
        db_path: The DuckDB file written by ``dbt build``.

    Returns:
        One line per row of ``kilt_corpus_stats`` (description, value: counts
        with thousands separators, shares as percentages), then one line per
        section depth of ``kilt_section_depth_stats`` (chunks, tokens per
        chunk: median, 5th-95th percentile, mean, share under 32).

    Raises:
        FileNotFoundError: If ``db_path`` does not exist.
        DatabaseInUseError: If a build still holds the file.
        NoBuildError: If the file is empty, not a DuckDB file, or has no
            statistics tables (its build failed before them, or an older build).
        IncompleteBuildError: If the last `dbt run` did not finish: the message
            is the statistics as they are, then what failed.
    """
    advice = "wait for that build to finish, then print the statistics"
    with _open_build(db_path, advice) as con:
        _require_tables(con, db_path, ("kilt_corpus_stats", "kilt_section_depth_stats"))
        failure = _last_run_failure(con)
        stats = con.sql(
            "select statistic, value, description from kilt_corpus_stats"
            " order by statistic_order"
        ).fetchall()
        depths = con.sql(
            "select section_depth, num_chunks, tokens_median, tokens_p05,"
            " tokens_p95, tokens_mean, share_under_32_tokens"
            " from kilt_section_depth_stats order by section_depth"
        ).fetchall()
    from kilt_chunks.export.card import format_statistic

    width = max((len(description) for _, _, description in stats), default=0)
    lines = ["kilt-chunks corpus statistics"]
    lines += [
        f"  {description:<{width}}  {format_statistic(name, value):>12}"
        for name, value, description in stats
    ]
    lines.append("  tokens per chunk by section depth (0 = lead):")
    lines.append("    depth       chunks  median  p05-p95     mean  under 32")
    lines += [
        f"    {depth:>5} {chunks:>12,} {median:>7}  {p05:>3}-{p95:<4} {mean:>8.1f}"
        f"  {share:>8.2%}"
        for depth, chunks, median, p05, p95, mean, share in depths
    ]
    if failure is not None:
        raise IncompleteBuildError(
            "\n".join(lines)
            + f"\n  THE LAST dbt RUN {failure}; these statistics may be those of"
            " an earlier build: run `dbt build` again"
        )
    return "\n".join(lines)


def _export_dir_of(db_path: str) -> str:
    """The export folder the build recorded (``kilt_build_info``), or
    ``exports`` when the DuckDB file cannot tell."""
    try:
        with connect(db_path, read_only=True, advice="") as con:
            row = con.execute("select export_dir from kilt_build_info").fetchone()
    except (duckdb.Error, DatabaseInUseError):
        return "exports"
    return (row[0] if row else None) or "exports"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kilt-chunks`` command.

    Args:
        argv: Arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        Process exit code: 0 on success, 1 when the build cannot be summarised.
    """
    parser = argparse.ArgumentParser(
        prog="kilt-chunks", description="Section-aware chunks of KILT Wikipedia."
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {version('kilt-chunks')}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    summary = commands.add_parser("summary", help="print what the last build made")
    db_help = "DuckDB file of the build (default: $KILT_CHUNKS_DB or %(default)s)"
    default_db = os.environ.get("KILT_CHUNKS_DB", DEFAULT_DB)
    summary.add_argument("--db", default=default_db, help=db_help)
    bm25 = commands.add_parser(
        "bm25",
        help="BM25 run (TREC format) of a task's queries over kilt_chunks",
        description="Index kilt_chunks (title path + text) with BM25 in one"
        " on-disk tantivy index, once per build (the index is reused while the"
        " chunks are unchanged; a killed indexing resumes at its last commit),"
        " and write the top k chunks of every query of the task as a TREC run.",
    )
    bm25.add_argument("--task", required=True, help="task name, e.g. nq-dev-kilt")
    bm25.add_argument("--db", default=default_db, help=db_help)
    bm25.add_argument(
        "--index", help="index folder (default: <db>.bm25/ beside the DuckDB file)"
    )
    bm25.add_argument(
        "--run", help="TREC run to write (default: runs/bm25.<task>.trec)"
    )
    bm25.add_argument("-k", type=int, default=100, help="chunks per query")
    bm25.add_argument(
        "--threads",
        type=int,
        default=0,
        help="indexing and search threads (0 = one per core)",
    )
    bm25.add_argument("--reindex", action="store_true", help="rebuild the index")
    bm25.add_argument(
        "--max-df-share",
        type=float,
        default=None,
        help="drop query terms held by more than this share of the chunks"
        " (e.g. 0.1): faster, but NOT exact BM25 of the query; the run's tag"
        " says so (default: every term, exact BM25)",
    )
    evaluate = commands.add_parser(
        "eval",
        help="score a run (TREC or KILT format) on a task's qrels",
        description="KILT's page-level measures (R-precision, precision@k,"
        " recall@k, success_rate@k, answer_in_context@k,"
        " answer_and_ent_in_context@k, entity_in_context@k, entity_in_input:"
        " equal to kilt/eval_retrieval.py query for query), KILT's downstream scores"
        " when the run has answers, and chunk-level nDCG@10, recall@k and MRR@10"
        " (ir_measures); every gold query counts, those without any relevant"
        " item as 0.",
    )
    evaluate.add_argument("run", help="run file: TREC format or KILT JSON lines")
    gold = evaluate.add_mutually_exclusive_group(required=True)
    gold.add_argument("--task", help="task name: gold from the build's tables")
    gold.add_argument(
        "--gold",
        help="a KILT task file (gold JSON lines) or a build's <task>.queries.jsonl",
    )
    gold.add_argument(
        "--qrels",
        help="a TREC qrels file (chunk or page ids; page scores are then not"
        " KILT's: one set of all pages per query)",
    )
    evaluate.add_argument(
        "--ks",
        default=",".join(str(k) for k in DEFAULT_KS),
        help="cut-offs, comma-separated (default: KILT's 1,5,10,20 and 100)",
    )
    evaluate.add_argument(
        "--skip-empty-sets",
        action="store_true",
        help="not KILT's reading: an output with an empty provenance list is"
        " no evidence set (KILT counts it, and it is never found)",
    )
    evaluate.add_argument("--db", default=default_db, help=db_help)
    evaluate.add_argument(
        "--json", help="JSON file to write (default: <run>.eval.json)"
    )
    stats = commands.add_parser("stats", help="print the corpus statistics")
    stats.add_argument("--db", default=summary.get_default("db"), help=db_help)
    push = commands.add_parser(
        "push", help="upload the export folder to the Hugging Face Hub"
    )
    push.add_argument("repo_id", help="dataset repository, e.g. user/kilt-chunks")
    push.add_argument(
        "--export-dir",
        help="the export folder (default: the one the build in --db recorded, "
        "else exports)",
    )
    push.add_argument("--db", default=summary.get_default("db"), help=db_help)
    push.add_argument(
        "--private", action="store_true", help="create the repository private"
    )
    push.add_argument(
        "--token", help="Hub token (default: HF_TOKEN or the saved login)"
    )
    add_dump_commands(commands)  # from-dump, compare-pages
    reanchor_command.add_parser(commands)
    for module in RAG_COMMANDS.values():
        module.add_parser(commands)
    rag_commands = add_llm_commands(commands, default_db)  # utility, udcg, ...
    args = parser.parse_args(argv)
    try:
        if args.command in DUMP_COMMANDS:
            print(run_dump_command(args))
        elif args.command in rag_commands:
            print(rag_commands[args.command](args))
        elif args.command == reanchor_command.COMMAND:
            print(reanchor_command.run(args))
        elif args.command in RAG_COMMANDS:
            print(RAG_COMMANDS[args.command].run(args))
        elif args.command == "summary":
            print(build_summary(args.db))
        elif args.command == "bm25":
            print(run_bm25(args))
        elif args.command == "eval":
            print(run_eval(args))
        elif args.command == "stats":
            print(corpus_stats(args.db))
        else:  # push
            from kilt_chunks.export.publish import (
                PushError,
                publisher_note,
                push_export,
            )

            export_dir = args.export_dir or _export_dir_of(args.db)
            note = publisher_note(export_dir)
            if note:
                print(f"kilt-chunks: {note}")
            try:
                url = push_export(
                    export_dir, args.repo_id, private=args.private, token=args.token
                )
            except PushError as exc:
                print(f"kilt-chunks: {exc}", file=sys.stderr)
                return 1
            print(f"kilt-chunks: uploaded {export_dir} to {url}")
        sys.stdout.flush()
    except IncompleteBuildError as exc:
        print(exc)
        return 1
    except (
        FileNotFoundError,
        DatabaseInUseError,
        duckdb.Error,
        EvaluationError,
        Bm25Error,
        DumpBuildError,
        ValueError,
        NoBuildError,
        RagError,
    ) as exc:
        print(f"kilt-chunks: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (`kilt-chunks summary | head`): not an error.
        # Point stdout at devnull so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
