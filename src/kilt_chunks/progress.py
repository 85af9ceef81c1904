"""Progress of a build stage: a tqdm bar on a terminal, plain lines elsewhere.

The load and chunking steps report what they did every ``interval`` seconds:
bytes, rows, rate and, where the total is known, the ETA (the SQL models and
the export report their queries' progress: :mod:`kilt_chunks.sql_progress`).
When standard error is a terminal, tqdm draws its bar there. Otherwise (a log
file, CI) each report is one plain line, formatted by tqdm
(:meth:`tqdm.tqdm.format_meter`) without carriage-return redraws, and sent
through dbt's event system when dbt is running (so it reaches both dbt's
console output and ``logs/dbt.log``), else written to standard error.
"""

from __future__ import annotations

import sys
import time

from tqdm import tqdm

__all__ = ["Progress", "emit_line", "emit_warning"]


def emit_line(line: str, *, warning: bool = False) -> None:
    """One plain progress line: dbt's log and console when dbt runs (at
    dbt's warning level when ``warning``), else stderr.

    dbt runs in this process only if it has loaded its event manager, so
    that module is looked up, not imported: a command outside dbt
    (``kilt-chunks from-dump``) does not pay dbt's imports, about 0.3 s, for
    its first line."""
    client = sys.modules.get("dbt_common.events.event_manager_client")
    if client is None or not getattr(client.get_event_manager(), "loggers", None):
        print(line, file=sys.stderr, flush=True)
        return
    from dbt_common.events.base_types import EventLevel
    from dbt_common.events.functions import fire_event
    from dbt_common.events.types import Note

    fire_event(Note(msg=line), level=EventLevel.WARN if warning else None)


def emit_warning(line: str) -> None:
    """A warning line (``WARNING: ...``) in dbt's log and console, or on
    stderr outside dbt: what a build drops or replaces, said aloud."""
    emit_line(f"WARNING: {line}", warning=True)


class Progress:
    """Report a stage's progress every ``interval`` seconds.

    Args:
        stage: Name printed at the start of each line (``"load"``, ...).
        total_bytes: Bytes the stage will process, if known (gives the ETA).
        done_bytes: Bytes already done before this run (a resumed stage).
        interval: Seconds between reports; 0 disables them.
        unit: What the row count counts (``"pages"``, ``"sections"``).
    """

    def __init__(
        self,
        stage: str,
        *,
        total_bytes: int | None = None,
        done_bytes: int = 0,
        interval: float = 30,
        unit: str = "rows",
    ) -> None:
        self.stage = stage
        self.total = total_bytes
        self.done = done_bytes
        self.start_done = done_bytes
        self.interval = interval
        self.unit = unit
        self.rows = 0
        self.started = time.monotonic()
        self.last = self.started
        self.bar: tqdm | None = None
        if interval > 0 and sys.stderr.isatty():
            self.bar = tqdm(
                total=total_bytes,
                initial=done_bytes,
                unit="B",
                unit_scale=True,
                unit_divisor=1000,
                desc=stage,
                mininterval=min(interval, 1.0),
                file=sys.stderr,
            )

    @staticmethod
    def note(line: str) -> None:
        """Report one line at once (a stage that has nothing to stream)."""
        emit_line(line)

    def update(self, nbytes: int, rows: int = 0) -> None:
        """Count ``nbytes`` and ``rows`` more; report if ``interval`` has passed."""
        self.done += nbytes
        self.rows += rows
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self.unit}={self.rows:,}", refresh=False)
            self.bar.update(nbytes)
            return
        now = time.monotonic()
        if self.interval > 0 and now - self.last >= self.interval:
            self.last = now
            emit_line(self._line(now))

    def _line(self, now: float) -> str:
        elapsed = now - self.started
        meter = tqdm.format_meter(
            self.done,
            self.total,  # type: ignore[arg-type]  # tqdm takes None: no total
            elapsed,
            unit="B",
            unit_scale=True,
            unit_divisor=1000,
            rate=(self.done - self.start_done) / elapsed if elapsed > 0 else None,
            initial=self.start_done,
            postfix=f"{self.unit}={self.rows:,}",
            ncols=0,
        )
        return f"{self.stage}: {meter}"

    def close(self) -> None:
        """End the bar, and report the stage's totals once (when not quiet)."""
        if self.bar is not None:
            self.bar.close()
        if self.interval > 0:
            now = time.monotonic()
            seconds = now - self.started
            mb = (self.done - self.start_done) / 1e6
            rate = mb / seconds if seconds > 0 else 0.0
            emit_line(
                f"{self.stage}: done, {self.rows:,} {self.unit}, {mb:,.1f} MB"
                f" in {seconds:,.1f} s ({rate:,.1f} MB/s)"
            )
