"""``kilt-chunks compare-pages``: how close two KILT page files are.

Pages are matched by ``wikipedia_id`` (else by title). For every matched
page, each kind of paragraph of the reference (prose, ``Section::::``
headings, ``BULLET::::`` items) counts as verbatim when the candidate has the
identical paragraph (as a multiset: a paragraph present twice must be there
twice); anchors are compared as ``(paragraph text, anchor text, start, end,
wikipedia_title)``; categories as sets. Shares are of the reference's items.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["compare_page_files", "format_comparison", "iter_page_file"]


def iter_page_file(path: Path) -> Iterator[dict[str, Any]]:
    """The pages of a KILT JSON lines file (``.gz`` too) or of a folder of
    such shards (in name order)."""
    files = (
        sorted(p for p in path.iterdir() if ".json" in p.name)
        if path.is_dir()
        else [path]
    )
    for file in files:
        opener = gzip.open if file.name.endswith(".gz") else open
        with opener(file, "rt", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def _kind(paragraph: str) -> str:
    if paragraph.startswith("Section::::"):
        return "headings"
    if paragraph.startswith("BULLET::::"):
        return "bullets"
    return "prose"


def _anchor_keys(page: dict[str, Any]) -> Counter:
    text = page["text"]
    return Counter(
        (
            text[a["paragraph_id"]] if a["paragraph_id"] < len(text) else "",
            a["text"],
            a["start"],
            a["end"],
            a.get("wikipedia_title", ""),
        )
        for a in page.get("anchors") or []
    )


def compare_page_files(
    candidate: Path, reference: Path, *, examples: int = 0
) -> dict[str, Any]:
    """Compare a candidate KILT page file against a reference one.

    Args:
        candidate: Pages to judge (e.g. ``from-dump`` output).
        reference: Pages taken as right (e.g. KILT's
            ``kilt_knowledgesource.json``).
        examples: Up to this many reference paragraphs missing from the
            candidate are returned (``missing_examples``), for reading.

    Returns:
        ``pages`` (matched, only_candidate, only_reference) and, per kind
        (``paragraphs``, ``prose``, ``headings``, ``bullets``, ``anchors``,
        ``categories``), ``{reference, matched, share}``.
    """
    cand: dict[str, dict[str, Any]] = {}
    for page in iter_page_file(candidate):
        cand[str(page.get("wikipedia_id") or page["wikipedia_title"])] = page
    by_title = {p["wikipedia_title"]: k for k, p in cand.items()}
    totals: dict[str, list[int]] = {
        k: [0, 0]
        for k in ("paragraphs", "prose", "headings", "bullets", "anchors", "categories")
    }
    matched = only_ref = 0
    seen: set[str] = set()
    missing: list[dict[str, str]] = []
    for ref in iter_page_file(reference):
        key = str(ref.get("wikipedia_id") or ref["wikipedia_title"])
        if key not in cand:
            key = by_title.get(ref["wikipedia_title"], key)
        found = cand.get(key)
        if found is None:
            only_ref += 1
            continue
        page = found
        matched += 1
        seen.add(key)
        have = Counter(page["text"][1:])
        for paragraph in ref["text"][1:]:
            kind = _kind(paragraph)
            ok = have[paragraph] > 0
            if ok:
                have[paragraph] -= 1
            elif len(missing) < examples:
                missing.append(
                    {"title": ref["wikipedia_title"], "paragraph": paragraph}
                )
            for name in ("paragraphs", kind):
                totals[name][0] += 1
                totals[name][1] += int(ok)
        ref_anchors = _anchor_keys(ref)
        common = ref_anchors & _anchor_keys(page)
        totals["anchors"][0] += sum(ref_anchors.values())
        totals["anchors"][1] += sum(common.values())
        ref_cats = {c for c in (ref.get("categories") or "").split(",") if c}
        cand_cats = {c for c in (page.get("categories") or "").split(",") if c}
        totals["categories"][0] += 1
        totals["categories"][1] += int(ref_cats == cand_cats)
    report: dict[str, Any] = {
        "pages": {
            "matched": matched,
            "only_candidate": len(set(cand) - seen),
            "only_reference": only_ref,
        }
    }
    for name, (total, hits) in totals.items():
        report[name] = {
            "reference": total,
            "matched": hits,
            "share": round(hits / total, 4) if total else None,
        }
    if examples:
        report["missing_examples"] = missing
    return report


def format_comparison(report: dict[str, Any]) -> str:
    """The report as lines of text (``kilt-chunks compare-pages``)."""
    pages = report["pages"]
    lines = [
        f"pages: {pages['matched']:,} matched, {pages['only_candidate']:,} only in"
        f" the candidate, {pages['only_reference']:,} only in the reference"
    ]
    for name in ("paragraphs", "prose", "headings", "bullets", "anchors", "categories"):
        item = report[name]
        share = "-" if item["share"] is None else f"{100 * item['share']:.2f}%"
        what = "pages with the same set" if name == "categories" else "verbatim"
        lines.append(
            f"{name}: {share} {what} ({item['matched']:,} of {item['reference']:,})"
        )
    for ex in report.get("missing_examples", []):
        lines.append(f"  missing in {ex['title']!r}: {ex['paragraph'][:160]!r}")
    return "\n".join(lines)
