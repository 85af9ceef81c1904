"""Read KILT task files, map their provenance, write them back in KILT's format.

A task file is JSON lines, one query per line (``id``, ``input``,
``output``: answers, each with an optional ``provenance`` list). The
re-anchored file has the same lines in the same order, with the same ids,
inputs and answers; only provenance changes (new ids, titles and offsets;
an evidence set with a lost entry is removed, its answer kept). A line that
is not a query (not JSON, not an object, ``output`` not a list) is copied
as it is and counted.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from kilt_chunks.evaluation.provenance import task_name
from kilt_chunks.reanchor.mapping import MAPPED, EntryResult, Mapper, rewrite_entry

__all__ = [
    "SPAN_COLUMNS",
    "TaskResult",
    "map_by_page",
    "open_text",
    "reanchor_task",
    "task_pages",
]

#: Columns of the mapping table (one row per provenance entry), in order.
SPAN_COLUMNS = [
    "task",
    "line_number",
    "query_id",
    "output_index",
    "provenance_index",
    "old_wikipedia_id",
    "old_title",
    "old_start_paragraph_id",
    "old_start_character",
    "old_end_paragraph_id",
    "old_end_character",
    "span_kind",
    "evidence_chars",
    "status",
    "reason",
    "found_via",
    "new_wikipedia_id",
    "new_title",
    "new_start_paragraph_id",
    "new_start_character",
    "new_end_paragraph_id",
    "new_end_character",
    "score",
    "is_set_kept",
]


def open_text(path: Path, mode: str = "r") -> IO[str]:
    """Open a task file as UTF-8 text, through gzip for a ``.gz`` name."""
    if path.name.endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8")  # type: ignore[return-value]
    return path.open(mode, encoding="utf-8")


def _queries(path: Path) -> Iterator[tuple[int, str, dict | None]]:
    with open_text(path) as lines:
        for number, line in enumerate(lines, start=1):
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not (
                isinstance(record, dict) and isinstance(record.get("output", []), list)
            ):
                record = None
            yield number, line, record


def _entries(record: dict) -> Iterator[tuple[int, dict, list]]:
    for index, output in enumerate(record.get("output") or []):
        if isinstance(output, dict) and isinstance(output.get("provenance"), list):
            yield index, output, output["provenance"]


def task_pages(paths: list[Path]) -> tuple[set[str], set[str]]:
    """The page ids and titles named by the provenance of ``paths``.

    Returns:
        ``(wikipedia_ids, titles)``, ids stripped as KILT's scorer strips them.
    """
    ids: set[str] = set()
    titles: set[str] = set()
    for path in paths:
        for _, _, record in _queries(path):
            if record is None:
                continue
            for _, _, provenance in _entries(record):
                for entry in provenance:
                    if not isinstance(entry, dict):
                        continue
                    if entry.get("wikipedia_id") is not None:
                        ids.add(str(entry["wikipedia_id"]).strip())
                    if isinstance(entry.get("title"), str):
                        titles.add(entry["title"])
    return ids, titles


def map_by_page(paths: list[Path], mapper: Mapper) -> int:
    """Map every provenance entry of ``paths`` in the order of its page id, so
    the entries of one page meet its normalised text in the mapper's cache;
    the results stay in the mapper's cache for :func:`reanchor_task`.

    Returns:
        The number of entries (each distinct one is located once).
    """
    entries: list[tuple[str, dict, Any]] = []
    for path in paths:
        for _, _, record in _queries(path):
            if record is None:
                continue
            for _, output, provenance in _entries(record):
                entries.extend(
                    (str(e.get("wikipedia_id")).strip(), e, output.get("answer"))
                    for e in provenance
                    if isinstance(e, dict)
                )
    entries.sort(key=lambda item: item[0])
    for _, entry, answer in entries:
        mapper.map_entry(entry, answer)
    return len(entries)


@dataclass
class TaskResult:
    """One task file re-anchored: its mapping rows and counts."""

    task: str
    source: Path
    target: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: int = 0
    not_queries: int = 0
    queries: int = 0
    sets_before: int = 0
    sets_kept: int = 0
    queries_with_sets: int = 0
    queries_left_without_sets: int = 0


def _row(
    task: str,
    number: int,
    query_id: Any,
    o: int,
    p: int,
    entry: Any,
    result: EntryResult,
    kept: bool,
) -> dict[str, Any]:
    old = entry if isinstance(entry, dict) else {}

    def integer(key: str) -> int | None:
        value = old.get(key)
        try:
            return None if value is None else int(value)
        except (TypeError, ValueError):
            return None

    return {
        "task": task,
        "line_number": number,
        "query_id": None if query_id is None else str(query_id),
        "output_index": o,
        "provenance_index": p,
        "old_wikipedia_id": None
        if old.get("wikipedia_id") is None
        else str(old["wikipedia_id"]),
        "old_title": old.get("title") if isinstance(old.get("title"), str) else None,
        "old_start_paragraph_id": integer("start_paragraph_id"),
        "old_start_character": integer("start_character"),
        "old_end_paragraph_id": integer("end_paragraph_id"),
        "old_end_character": integer("end_character"),
        "span_kind": result.kind,
        "evidence_chars": result.evidence_chars,
        "status": result.status,
        "reason": result.reason,
        "found_via": result.via,
        "new_wikipedia_id": result.wikipedia_id,
        "new_title": result.title,
        "new_start_paragraph_id": result.start_paragraph_id,
        "new_start_character": result.start_character,
        "new_end_paragraph_id": result.end_paragraph_id,
        "new_end_character": result.end_character,
        "score": result.score,
        "is_set_kept": kept,
    }


def reanchor_task(path: Path, out_dir: Path, mapper: Mapper) -> TaskResult:
    """Re-anchor one task file into ``out_dir/<its name>``.

    Args:
        path: A KILT task file (JSON lines, optionally ``.gz``).
        out_dir: Folder of the re-anchored files (exists).
        mapper: The old and new snapshots.

    Returns:
        The mapping rows (:data:`SPAN_COLUMNS`) and the task's counts.
    """
    task = task_name(path)
    target = out_dir / path.name
    result = TaskResult(task, path, target)
    tmp = target.with_name(f".tmp-{target.name}")  # same suffix: same compression
    with open_text(tmp, "w") as out:
        for number, line, record in _queries(path):
            result.lines += 1
            if record is None:
                result.not_queries += 1
                out.write(line if line.endswith("\n") else line + "\n")
                continue
            result.queries += 1
            had = kept = 0
            for o, output, provenance in list(_entries(record)):
                results = [
                    mapper.map_entry(e, output.get("answer")) for e in provenance
                ]
                keep = all(r.status in MAPPED for r in results)
                had += 1
                if keep:
                    kept += 1
                    output["provenance"] = [
                        rewrite_entry(e, r)
                        for e, r in zip(provenance, results, strict=True)
                    ]
                else:
                    del output["provenance"]
                result.rows.extend(
                    _row(task, number, record.get("id"), o, p, e, r, keep)
                    for p, (e, r) in enumerate(zip(provenance, results, strict=True))
                )
            result.sets_before += had
            result.sets_kept += kept
            result.queries_with_sets += had > 0
            result.queries_left_without_sets += had > 0 and kept == 0
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    tmp.replace(target)
    return result
