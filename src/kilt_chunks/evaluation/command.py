"""``kilt-chunks bm25`` (a BM25 run of a task's queries over the chunks)
and ``kilt-chunks eval`` (KILT's page-level and downstream measures and the
chunk-level ones, for any run): their arguments and what they run."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kilt_chunks.database import DB_HELP, default_db, require_db
from kilt_chunks.evaluation import DEFAULT_KS, EvaluationError
from kilt_chunks.evaluation.lucene import JAR_VARIABLE

__all__ = ["add_commands", "run_bm25", "run_eval"]


def run_bm25(args: argparse.Namespace) -> str:
    """``kilt-chunks bm25``: index if needed, search the task's queries, write
    the run. Returns the lines to print (index reused or built, run written).

    Raises:
        FileNotFoundError: If the DuckDB file does not exist.
        Bm25Error: If the task has no queries, the corpus no chunks, or (with
            ``--engine lucene``) Java or Anserini's jar is missing.
    """
    from kilt_chunks.evaluation import bm25

    require_db(args.db)
    queries = bm25.task_queries(args.db, args.task)
    share = args.max_df_share
    if share is not None and not 0 < share <= 1:  # before any indexing
        raise ValueError(f"--max-df-share must be in (0, 1], not {share}")
    if args.engine == "lucene":
        if share is not None:
            raise ValueError("--max-df-share is for --engine tantivy only")
        index, lines, hits, tag = _lucene_run(args, [text for _, text in queries])
    else:
        index, lines, hits, tag = _tantivy_run(args, [text for _, text in queries])
    run = Path(args.run or Path("runs") / f"bm25.{args.task}.trec")
    written = bm25.write_trec_run(run, [q for q, _ in queries], hits, tag=tag)
    lines.append(
        f"run {run}: {len(queries):,} queries, {written:,} lines (top {args.k},"
        f" tag {tag})"
    )
    return "\n".join(lines)


def _index_line(index: Path, meta: dict) -> str:
    resumed = meta.get("resumed_from")
    return (
        f"bm25 index {index}/: {meta['num_chunks']:,} chunks,"
        f" {meta['index_bytes'] / 1e6:,.1f} MB, {meta['index_seconds']:.1f} s"
        + (f" (resumed after {resumed:,} chunks)" if resumed else "")
    )


def _tantivy_run(
    args: argparse.Namespace, texts: list[str]
) -> tuple[Path, list[str], list[list[tuple[str, float]]], str]:
    """Index (if needed) and search with tantivy: ``(index, lines, hits, tag)``."""
    from kilt_chunks.evaluation import bm25

    index = Path(args.index or f"{args.db}.bm25")
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
        lines.append(_index_line(index, meta))
    else:
        lines.append(f"bm25 index {index}/: reused (same chunks)")
    hits = bm25.search(
        index,
        texts,
        k=args.k,
        db_path=args.db,
        threads=args.threads or None,
        max_df_share=args.max_df_share,
    )
    tag = bm25.RUN_TAG
    if args.max_df_share is not None:
        tag += f"-maxdf{args.max_df_share:g}"  # not exact BM25: named apart
    return index, lines, hits, tag


def _lucene_run(
    args: argparse.Namespace, texts: list[str]
) -> tuple[Path, list[str], list[list[tuple[str, float]]], str]:
    """Index (if needed) and search with Lucene: ``(index, lines, hits, tag)``."""
    from kilt_chunks.evaluation import lucene

    index = Path(args.index or f"{args.db}.bm25-lucene")
    lines = []
    if args.reindex or not lucene.index_is_current(args.db, index):
        meta = lucene.build_index(
            args.db, index, threads=args.threads or None, jar=args.anserini_jar
        )
        lines.append(_index_line(index, meta) + " (Lucene)")
    else:
        lines.append(f"bm25 index {index}/: reused (same chunks, Lucene)")
    hits = lucene.search(
        index,
        texts,
        k=args.k,
        db_path=args.db,
        threads=args.threads or None,
        jar=args.anserini_jar,
    )
    return index, lines, hits, lucene.RUN_TAG


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
        require_db(args.db)
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


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], str]]:
    """Add ``bm25`` and ``eval`` to the subcommands; returns
    ``name -> run function`` (each returns the text to print)."""
    bm25 = commands.add_parser(
        "bm25",
        help="BM25 run (TREC format) of a task's queries over kilt_chunks",
        description="Index kilt_chunks (title path + text) with BM25 in one"
        " on-disk index (tantivy, or Lucene with --engine lucene), once per"
        " build (the index is reused while the chunks are unchanged; a killed"
        " tantivy indexing resumes at its last commit),"
        " and write the top k chunks of every query of the task as a TREC run.",
    )
    bm25.add_argument("--task", required=True, help="task name, e.g. nq-dev-kilt")
    bm25.add_argument("--db", default=default_db(), help=DB_HELP)
    bm25.add_argument(
        "--engine",
        choices=("tantivy", "lucene"),
        default="tantivy",
        help="tantivy (default: a Python wheel, scores every chunk holding a"
        " query term) or lucene (Anserini in Java, block-max WAND: the same"
        " top k far faster on a large corpus; needs Java 21+ and Anserini's"
        " jar, make lucene-install; its own text analysis, so its scores are"
        " not tantivy's)",
    )
    bm25.add_argument(
        "--anserini-jar",
        help="with --engine lucene: Anserini's fat jar (default:"
        f" ${JAR_VARIABLE}, else the jar of an installed pyserini)",
    )
    bm25.add_argument(
        "--index",
        help="index folder (default: <db>.bm25/ beside the DuckDB file;"
        " <db>.bm25-lucene/ with --engine lucene)",
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
    evaluate.add_argument("--db", default=default_db(), help=DB_HELP)
    evaluate.add_argument(
        "--json", help="JSON file to write (default: <run>.eval.json)"
    )
    return {"bm25": run_bm25, "eval": run_eval}
