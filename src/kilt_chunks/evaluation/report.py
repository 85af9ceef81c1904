"""The text table of :func:`kilt_chunks.evaluation.evaluate`'s result."""

from __future__ import annotations

#: Width of the measure-name column of :func:`format_table` (the longest
#: name, ``page answer_and_ent_in_context@100``, is 34 characters).
_NAME_WIDTH = 36


def format_table(result: dict) -> str:
    """The measures of :func:`evaluate` as an aligned text table."""
    labels = result["labels"]
    title = " ".join(
        f"{k} {v}"
        for k, v in labels.items()
        if v is not None and v != labels.get("task")
    )
    lines = [
        f"kilt-chunks eval: {labels.get('task', '')}" + (f" ({title})" if title else "")
    ]
    page = result["page"]
    if page["is_kilt"]:
        heading = "page level: KILT's eval_retrieval.py, query for query"
        if page["skip_empty_sets"]:
            heading += " (except: empty evidence sets skipped, not KILT's reading)"
    else:
        heading = (
            "page level from a qrels file: one set of all pages per query, NOT"
            " KILT's evidence sets (use --gold <task>.queries.jsonl)"
        )
    lines.append(f"  {heading}")
    lines.append(f"  {'measure':<{_NAME_WIDTH}} {'value':>8}")
    for name, value in page["measures"].items():
        lines.append(f"  {'page ' + name:<{_NAME_WIDTH}} {value:>8.4f}")
    lines.append(
        f"  {'page queries':<{_NAME_WIDTH}} {page['num_queries']:>8,}"
        f"  ({page['num_queries_without_evidence']:,} without any evidence set:"
        " counted as 0, not dropped)"
    )
    if result.get("pages_outside_corpus") is not None:
        lines.append(
            f"  {'gold pages not in corpus':<{_NAME_WIDTH}}"
            f" {result['pages_outside_corpus']:>8,}"
            "  (query-page pairs a chunk run cannot find)"
        )
    down = result.get("downstream")
    if down:
        lines.append(
            "  downstream: KILT's eval_downstream.py"
            + (
                f" (headline for this family: {down['headline']})"
                if down["headline"]
                else ""
            )
        )
        for name, value in down["measures"].items():
            lines.append(f"  {name:<{_NAME_WIDTH}} {value:>8.4f}")
        if down["num_queries_without_gold_answer"]:
            lines.append(
                f"  {'queries without gold answer':<{_NAME_WIDTH}}"
                f" {down['num_queries_without_gold_answer']:>8,}  (scored 0)"
            )
    chunk = result["chunk"]
    if chunk is None:
        lines.append("  (chunk level: the run ranks pages, not chunks)")
    else:
        lines.append(
            "  chunk level (ir_measures): mean over every query | trec_eval's"
            " mean over queries with a relevant chunk"
        )
        for name, value in chunk["measures"].items():
            lines.append(
                f"  {name:<{_NAME_WIDTH}} {value:>8.4f}"
                f" | {chunk['measures_trec_eval'][name]:.4f}"
            )
        lines.append(
            f"  {'chunk queries':<{_NAME_WIDTH}} {chunk['num_queries']:>8,}"
            f" | {chunk['num_queries_with_relevant']:,}"
        )
    lines.append(
        f"  {'queries in run':<{_NAME_WIDTH}} {result['num_queries_in_run']:>8,}"
        f"  (missing ones count as 0; {result['num_run_queries_not_in_gold']:,}"
        " run queries not in the gold ignored)"
    )
    for note, count in result["notes"].items():
        lines.append(f"  {count:>8,}  {note}")
    return "\n".join(lines)
