"""Progress lines for the SQL steps of a build (sections, marts).

The load, chunking and export steps count their own rows and bytes
(:mod:`kilt_chunks.progress`). The SQL models run inside DuckDB, which tracks
each running query's progress (``DuckDBPyConnection.query_progress()``, a
percentage, with its progress bar switched on and its printing off). The
build's dbt-duckdb plugin hands every cursor to :data:`WATCHER`; a daemon
thread reads the running query's progress every ``progress_seconds`` (set by
the on-run-start hook through the SQL function ``kilt_watch_sql_progress``)
and reports one plain line per long query, through the same channel as the
other stages (dbt's console and ``logs/dbt.log``)::

    int_sections_assembled: 42% of the query [01:10<01:36]
    kilt_chunks: 80% of the query [02:00<00:30]

The step's name and the query's start come from dbt's own ``SQLQuery``
events (the node that sent the query; a ``COPY (select * from t)`` is named
``export t``), received through dbt's event-manager callbacks. The build runs one
dbt thread (profiles.yml), so one query runs at a time. A query shorter than
the interval gives no line; Python models are left out (the load and the
chunking report bytes themselves, and their many short queries have no
overall percentage).
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import duckdb
from tqdm import tqdm

from kilt_chunks.progress import emit_line

__all__ = ["WATCHER", "SqlProgressWatcher"]

#: The export's COPY names the table it writes (macro ``export_parquet``).
_COPY_SOURCE = re.compile(r"\bcopy\s*\(\s*select\s+\*\s+from\s+([^\s)]+)", re.I)


class SqlProgressWatcher:
    """Report the progress of long-running queries on the cursors it watches.

    Quiet (no thread) until :meth:`set_interval` gives a positive interval.
    """

    def __init__(self) -> None:
        self.interval = 0.0
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._step = "sql"
        self._started = time.monotonic()
        self._quiet_step = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, cursor: duckdb.DuckDBPyConnection) -> None:
        """Track ``cursor``'s queries (switches DuckDB's progress tracking on
        for it, its printing off)."""
        cursor.execute("set enable_progress_bar = true")
        cursor.execute("set enable_progress_bar_print = false")
        with self._lock:
            self._cursors.append(cursor)

    def set_interval(self, seconds: float) -> None:
        """Report every ``seconds`` (0 stops reporting); starts the thread."""
        self.interval = max(0.0, float(seconds))
        with self._lock:
            if self.interval > 0 and self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="kilt-sql-progress", daemon=True
                )
                self._thread.start()

    def on_dbt_event(self, message: Any) -> None:
        """dbt event-manager callback: note which step sent a query, and when.

        Args:
            message: A dbt ``EventMsg``; only ``SQLQuery`` (its
                ``node_info`` and ``sql``), ``NodeStart`` and
                ``NodeExecuting`` (their ``node_info``) are read.
        """
        name = getattr(getattr(message, "info", None), "name", None)
        if name not in ("SQLQuery", "NodeStart", "NodeExecuting"):
            return
        data = message.data
        node_info = getattr(data, "node_info", None)
        node = getattr(node_info, "node_name", "") or ""
        # A node's start names the step even when it sends no SQLQuery (a
        # Python model's own queries): otherwise they would go under the
        # previous node's name.
        copied = _COPY_SOURCE.search(getattr(data, "sql", "") or "")
        if copied:
            node = "export " + copied.group(1).replace('"', "").split(".")[-1]
        self._step = node or "sql"
        self._quiet_step = str(getattr(node_info, "node_path", "")).endswith(".py")
        self._started = time.monotonic()

    def poll(self, now: float | None = None) -> list[str]:
        """Read every watched cursor's running query; return the lines due.

        A query is reported once it has run ``interval`` seconds (counted
        from its ``SQLQuery`` event), at each poll. Closed cursors are dropped.
        """
        now = time.monotonic() if now is None else now
        lines = []
        with self._lock:
            cursors = list(self._cursors)
        for cursor in cursors:
            try:
                percent = cursor.query_progress()
            except duckdb.Error:
                with self._lock:
                    self._cursors.remove(cursor)
                continue
            elapsed = now - self._started
            if percent >= 0 and not self._quiet_step and elapsed >= self.interval:
                percent = min(percent, 100.0)
                remaining = (
                    tqdm.format_interval(elapsed * (100 - percent) / percent)
                    if percent > 0
                    else "?"
                )
                meter = (
                    f"{percent:3.0f}% of the query "
                    f"[{tqdm.format_interval(elapsed)}<{remaining}]"
                )
                lines.append(f"{self._step}: {meter}")
        return lines

    def _run(self) -> None:
        while True:
            interval = self.interval
            time.sleep(interval if interval > 0 else 1.0)
            if self.interval > 0:
                for line in self.poll():
                    emit_line(line)


#: The build's watcher (one per dbt process), fed by the dbt-duckdb plugin.
WATCHER = SqlProgressWatcher()
