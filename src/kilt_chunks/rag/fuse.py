"""``kilt-chunks fuse``: reciprocal rank fusion of runs (BM25, dense, ...).

Reciprocal rank fusion (Cormack, Clarke and Büttcher, "Reciprocal Rank
Fusion outperforms Condorcet and individual Rank Learning Methods", SIGIR
2009): a document's fused score is the sum over the runs that rank it of
``1 / (k + rank)``, ranks from 1, ``k = 60`` as in the paper. Only ranks
count, not scores, so runs of different scales (BM25, cosine) fuse without
normalisation. A run's ranking is the order ``kilt-chunks eval`` reads
(:func:`kilt_chunks.evaluation.read_run`: by score, ties by the rank
column).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kilt_chunks.evaluation import read_run
from kilt_chunks.evaluation.bm25 import write_trec_run
from kilt_chunks.rag.models import RagError

__all__ = ["DEFAULT_RRF_K", "add_parser", "reciprocal_rank_fusion", "run"]

#: The constant k of reciprocal rank fusion (the paper's 60).
DEFAULT_RRF_K = 60
#: Chunks per query written by default.
DEFAULT_TOP = 100


def reciprocal_rank_fusion(
    rankings: Sequence[Mapping[str, Sequence[str]]],
    k: float = DEFAULT_RRF_K,
    top: int | None = None,
) -> dict[str, list[tuple[str, float]]]:
    """Fuse rankings by reciprocal rank.

    Args:
        rankings: Per run, query id -> document ids best first.
        k: The RRF constant (> 0).
        top: Documents kept per query (None: all).

    Returns:
        Query id -> ``(document, score)`` by fused score, highest first;
        equal scores by the best rank any run gave the document, then by id.
        Queries in the order first met (the first run's, then new ones of
        the next runs).

    Raises:
        RagError: If ``k`` is not positive.
    """
    if k <= 0:
        raise RagError(f"--k {k}: the RRF constant must be positive")
    scores: dict[str, dict[str, float]] = {}
    best: dict[str, dict[str, int]] = {}
    for ranking in rankings:
        for query, documents in ranking.items():
            fused = scores.setdefault(query, {})
            ranks = best.setdefault(query, {})
            for rank, document in enumerate(documents, start=1):
                fused[document] = fused.get(document, 0.0) + 1.0 / (k + rank)
                ranks[document] = min(rank, ranks.get(document, rank))
    return {
        query: sorted(
            fused.items(), key=lambda item: (-item[1], best[query][item[0]], item[0])
        )[:top]
        for query, fused in scores.items()
    }


def add_parser(commands: Any) -> None:
    """Register ``kilt-chunks fuse`` on the CLI's subparsers."""
    parser = commands.add_parser(
        "fuse",
        help="reciprocal rank fusion of runs (TREC format)",
        description="Fuse runs by reciprocal rank (Cormack et al., SIGIR 2009):"
        " score = sum over runs of 1 / (k + rank).",
    )
    parser.add_argument("runs", nargs="+", help="runs to fuse (TREC format)")
    parser.add_argument(
        "--k",
        type=float,
        default=DEFAULT_RRF_K,
        help="the RRF constant (default %(default)s)",
    )
    parser.add_argument(
        "--top",
        type=int,
        default=DEFAULT_TOP,
        help="chunks per query written (default %(default)s)",
    )
    parser.add_argument("--out", required=True, help="TREC run to write")


def run(args: argparse.Namespace) -> str:
    """``kilt-chunks fuse``: the line to print (run written)."""
    if len(args.runs) < 2:
        raise RagError("fuse needs at least two runs")
    rankings = [
        {q: p.ranking for q, p in read_run(path).predictions.items()}
        for path in args.runs
    ]
    fused = reciprocal_rank_fusion(rankings, k=args.k, top=args.top)
    tag = f"rrf{args.k:g}"
    written = write_trec_run(Path(args.out), list(fused), list(fused.values()), tag=tag)
    return (
        f"run {args.out}: {len(fused):,} queries, {written:,} lines (RRF k={args.k:g}"
        f" of {len(args.runs)} runs, top {args.top})"
    )
