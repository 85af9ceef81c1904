"""SQL progress lines: the watcher reads DuckDB's query progress per step."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import duckdb

from kilt_chunks.sql_progress import SqlProgressWatcher


def _sql_event(
    sql: str, node_name: str = "", node_path: str = "", name: str = "SQLQuery"
) -> SimpleNamespace:
    """A dbt ``EventMsg`` as the watcher reads it."""
    return SimpleNamespace(
        info=SimpleNamespace(name=name),
        data=SimpleNamespace(
            sql=sql,
            node_info=SimpleNamespace(node_name=node_name, node_path=node_path),
        ),
    )


def _lines_while_running(watcher: SqlProgressWatcher, sql: str) -> list[str]:
    """Poll the watcher while ``sql`` runs on a watched cursor."""
    con = duckdb.connect()
    cursor = con.cursor()
    watcher.watch(cursor)
    # DuckDB tracks a query's progress after progress_bar_time (2 s by
    # default); at 0 a query of a fraction of a second shows it.
    cursor.execute("set progress_bar_time = 0")
    worker = threading.Thread(target=lambda: cursor.execute(sql).fetchall())
    worker.start()
    lines: list[str] = []
    while worker.is_alive():
        time.sleep(0.02)
        lines += watcher.poll()
    worker.join()
    lines += watcher.poll()
    con.close()
    return lines


SLOW_QUERY = "select sum(hash(range)) from range(150000000)"


def test_a_long_query_reports_its_step_percentage_and_eta() -> None:
    watcher = SqlProgressWatcher()
    watcher.interval = 0.1
    watcher.on_dbt_event(_sql_event(SLOW_QUERY, "int_sections_assembled", "a.sql"))
    lines = _lines_while_running(watcher, SLOW_QUERY)
    assert lines, "no progress line for a query of several seconds"
    assert all(line.startswith("int_sections_assembled: ") for line in lines)
    assert all("% of the query [" in line and "<" in line for line in lines)
    # Percentages go up while it runs.
    percents = [int(line.split(": ")[1].split("%")[0]) for line in lines]
    assert percents == sorted(percents) and percents[-1] > percents[0]


def test_the_export_is_named_by_the_table_its_copy_reads() -> None:
    watcher = SqlProgressWatcher()
    watcher.on_dbt_event(
        _sql_event(
            "select kilt_prepare_export_dir('e');\n"
            'copy (select * from "db"."main"."kilt_chunks")'
            " to 'e/.kilt_chunks.partial'",
            "kilt_chunks-on-run-end-1",
        )
    )
    watcher.interval = 0.1
    lines = _lines_while_running(watcher, SLOW_QUERY)
    assert lines and all(line.startswith("export kilt_chunks: ") for line in lines)


def test_quiet_for_short_queries_python_models_and_other_events() -> None:
    watcher = SqlProgressWatcher()
    watcher.interval = 60
    watcher.on_dbt_event(_sql_event("select 1", "kilt_chunks", "marts/kilt_chunks.sql"))
    assert _lines_while_running(watcher, SLOW_QUERY) == []
    watcher.interval = 0.1
    watcher.on_dbt_event(_sql_event("x", "int_sections_chunked", "int/chunked.py"))
    assert _lines_while_running(watcher, SLOW_QUERY) == []
    # A Python model's start quiets the watcher though it sends no SQLQuery
    # (its own queries must not go under the previous node's name).
    watcher.on_dbt_event(_sql_event("select 1", "kilt_corpus_stats", "s/stats.sql"))
    watcher.on_dbt_event(_sql_event("", "kilt_export", "m/kilt_export.py", "NodeStart"))
    assert _lines_while_running(watcher, SLOW_QUERY) == []
    # Other events leave the step as it is.
    watcher.on_dbt_event(
        SimpleNamespace(info=SimpleNamespace(name="MainReportVersion"))
    )
    assert _lines_while_running(watcher, SLOW_QUERY) == []


def test_closed_cursors_are_dropped() -> None:
    watcher = SqlProgressWatcher()
    con = duckdb.connect()
    cursor = con.cursor()
    watcher.watch(cursor)
    cursor.close()
    assert watcher.poll() == []
    assert watcher.poll() == []
