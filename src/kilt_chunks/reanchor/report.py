"""Counts of a re-anchoring, per task: what was mapped how, and what was lost."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kilt_chunks.reanchor.tasks import TaskResult

__all__ = ["COUNT_NAMES", "format_report", "rates", "task_counts"]

#: The counts of one task, in report order, with their labels.
COUNT_NAMES = {
    "lines": "task lines",
    "not_queries": "lines that are not queries (copied as they are)",
    "queries": "queries",
    "spans": "spans (entries with offsets)",
    "spans_exact": "  mapped exactly",
    "spans_normalised": "  mapped after normalising",
    "spans_fuzzy": "  mapped fuzzily",
    "spans_lost_page": "  lost: page gone",
    "spans_lost_text": "  lost: text gone",
    "spans_invalid": "  lost: no evidence in the old pages (bad entry)",
    "page_entries": "page-level entries (no offsets)",
    "page_entries_mapped": "  mapped by page",
    "page_entries_lost_page": "  lost: page gone",
    "evidence_sets": "evidence sets",
    "evidence_sets_kept": "  kept",
    "evidence_sets_dropped": "  dropped (a member lost)",
    "queries_with_evidence": "queries with evidence sets",
    "queries_left_without_evidence": "  left with no evidence set",
}


def task_counts(result: TaskResult) -> dict[str, int]:
    """The counts of :data:`COUNT_NAMES` for one task.

    Entries are counted as they stand in the file (a span repeated in two
    outputs counts twice). An entry that is not an object or has no
    ``wikipedia_id`` counts as an invalid span.
    """
    spans: Counter[str] = Counter()
    pages: Counter[str] = Counter()
    for row in result.rows:
        if row["span_kind"] == "page":
            pages[row["status"]] += 1
        else:
            spans[row["status"]] += 1
    return {
        "lines": result.lines,
        "not_queries": result.not_queries,
        "queries": result.queries,
        "spans": sum(spans.values()),
        "spans_exact": spans["exact"],
        "spans_normalised": spans["normalised"],
        "spans_fuzzy": spans["fuzzy"],
        "spans_lost_page": spans["lost_page"],
        "spans_lost_text": spans["lost_text"],
        "spans_invalid": spans["invalid"],
        "page_entries": sum(pages.values()),
        "page_entries_mapped": pages["page"],
        "page_entries_lost_page": pages["lost_page"],
        "evidence_sets": result.sets_before,
        "evidence_sets_kept": result.sets_kept,
        "evidence_sets_dropped": result.sets_before - result.sets_kept,
        "queries_with_evidence": result.queries_with_sets,
        "queries_left_without_evidence": result.queries_left_without_sets,
    }


def format_report(counts: dict[str, dict[str, int]], header: list[str]) -> str:
    """Print the counts of every task as a table.

    Args:
        counts: Per task name, its :func:`task_counts`.
        header: Lines printed above the table.

    Returns:
        The text (no final newline).
    """
    tasks = list(counts)
    width = max(len(label) for label in COUNT_NAMES.values())
    cols = [max(len(t), 8) for t in tasks]
    lines = list(header)
    lines.append(
        " " * (width + 2)
        + "  ".join(t.rjust(c) for t, c in zip(tasks, cols, strict=True))
    )
    for key, label in COUNT_NAMES.items():
        values = "  ".join(
            f"{counts[t][key]:,}".rjust(c) for t, c in zip(tasks, cols, strict=True)
        )
        lines.append(f"  {label.ljust(width)}{values}")
    return "\n".join(lines)


def rates(counts: dict[str, int]) -> dict[str, Any]:
    """Shares of the spans mapped each way (None when there are no spans)."""
    total = counts["spans"]
    if not total:
        return {k: None for k in ("exact", "normalised", "fuzzy", "lost")}
    lost = (
        counts["spans_lost_page"] + counts["spans_lost_text"] + counts["spans_invalid"]
    )
    return {
        "exact": counts["spans_exact"] / total,
        "normalised": counts["spans_normalised"] / total,
        "fuzzy": counts["spans_fuzzy"] / total,
        "lost": lost / total,
    }
