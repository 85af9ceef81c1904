"""What a finished build made, as text: ``kilt-chunks summary`` (pages,
sections, chunks, the export) and ``kilt-chunks stats`` (the corpus
statistics), each refusing in one line a file that holds no finished build."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from kilt_chunks.chunking_settings import ChunkingSettings
from kilt_chunks.database import (
    DB_HELP,
    connect,
    default_db,
    require_db,
    table_exists,
)
from kilt_chunks.export.folder import CARD_FILE, EXPORT_TABLES, config_files

__all__ = [
    "IncompleteBuildError",
    "NoBuildError",
    "add_commands",
    "build_summary",
    "corpus_stats",
    "export_line",
]


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
    require_db(db_path)
    path = Path(db_path)
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


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], str]]:
    """Add ``summary`` and ``stats`` to the subcommands; returns
    ``name -> run function`` (each returns the text to print)."""
    for name, help_text in (
        ("summary", "print what the last build made"),
        ("stats", "print the corpus statistics"),
    ):
        parser = commands.add_parser(name, help=help_text)
        parser.add_argument("--db", default=default_db(), help=DB_HELP)
    return {
        "summary": lambda args: build_summary(args.db),
        "stats": lambda args: corpus_stats(args.db),
    }
