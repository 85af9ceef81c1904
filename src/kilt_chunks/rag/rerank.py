"""``kilt-chunks rerank``: a cross-encoder rescores the top of a run.

The top ``N`` chunks of each query of a run (the order ``kilt-chunks eval``
reads) are scored by a sentence-transformers ``CrossEncoder`` (e.g.
``BAAI/bge-reranker-v2-m3``, as "Do RAG Systems Really Suffer From
Positional Bias?" and "Redefining Retrieval Evaluation in the Era of LLMs"
reranked BM25 and BGE runs) on ``(query, title + "\\n" + text)`` pairs,
``CrossEncoder.predict`` in batches, with the model's own activation; the
run written ranks them by that score (equal scores keep the run's order).

Scores are cached in a SQLite file (default ``<db>.rerank-cache.sqlite``)
keyed by the model's SHA-256 and the SHA-256 of the pair's texts, so a second
call on the same pairs does not load the model at all.
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from kilt_chunks.evaluation import read_run
from kilt_chunks.evaluation.bm25 import task_queries, write_trec_run
from kilt_chunks.rag.embed import TEXT_OF_CHUNK
from kilt_chunks.rag.models import RagError, load_cross_encoder, resolve_model

__all__ = ["DEFAULT_TOP", "add_parser", "chunk_texts", "pair_key", "rerank", "run"]

#: Chunks of each query rescored by default.
DEFAULT_TOP = 100


def pair_key(query: str, passage: str) -> str:
    """The cache key of a (query, passage) pair: SHA-256 of both texts."""
    return hashlib.sha256(f"{query}\0{passage}".encode()).hexdigest()


def chunk_texts(db_path: str | Path, chunk_ids: Sequence[str]) -> dict[str, str]:
    """``chunk_id -> title + "\\n" + text`` of the chunks named, in one query.

    Raises:
        RagError: If a chunk id is not in ``kilt_chunks`` (naming one).
    """
    import pyarrow as pa

    wanted = pa.table({"chunk_id": pa.array(sorted(set(chunk_ids)), pa.string())})
    with duckdb.connect(str(db_path), read_only=True) as con:
        con.register("wanted_chunks", wanted)
        found = dict(
            con.sql(
                f"select chunk_id, {TEXT_OF_CHUNK} from kilt_chunks"
                " semi join wanted_chunks using (chunk_id)"
            ).fetchall()
        )
    missing = [c for c in wanted.column("chunk_id").to_pylist() if c not in found]
    if missing:
        raise RagError(
            f"{len(missing):,} chunk ids of the run are not in kilt_chunks of"
            f" {db_path} (e.g. {missing[0]}): a run of another build?"
        )
    return found


class _Cache:
    """Scores of (model, pair) in a SQLite file."""

    def __init__(self, path: Path, model_sha256: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(str(path))
        self.model = model_sha256
        self.con.execute(
            "create table if not exists scores (model text, pair text, score real,"
            " primary key (model, pair))"
        )

    def get(self, keys: Sequence[str]) -> dict[str, float]:
        found: dict[str, float] = {}
        for start in range(0, len(keys), 500):
            part = list(keys[start : start + 500])
            marks = ",".join("?" * len(part))
            found.update(
                self.con.execute(
                    f"select pair, score from scores where model = ? and pair in"
                    f" ({marks})",
                    [self.model, *part],
                ).fetchall()
            )
        return found

    def put(self, scores: dict[str, float]) -> None:
        with self.con:
            self.con.executemany(
                "insert or replace into scores values (?, ?, ?)",
                [(self.model, key, score) for key, score in scores.items()],
            )

    def close(self) -> None:
        self.con.close()


def rerank(
    db_path: str | Path,
    run_path: str | Path,
    task: str,
    model_name: str,
    *,
    top: int = DEFAULT_TOP,
    k: int | None = None,
    device: str = "cpu",
    batch_size: int = 32,
    cache: str | Path | None = None,
    allow_download: bool = False,
) -> tuple[list[str], list[list[tuple[str, float]]], dict]:
    """Rescore the top ``top`` chunks of each query of a run.

    Args:
        k: Chunks written per query (default: ``top``).
        cache: The score cache (default ``<db>.rerank-cache.sqlite``).

    Returns:
        ``(query_ids, hits, info)``: the run's queries in the task's order,
        ``(chunk_id, score)`` per query by cross-encoder score, and counts
        (``pairs``, ``cached``, ``scored``).

    Raises:
        RagError: A query of the run not in the task, a chunk not in the
            build, a model that cannot be loaded, ``top < 1``.
        EvaluationError: A malformed run.
    """
    if top < 1:
        raise RagError(f"--top {top}: at least 1")
    ranking = {q: p.ranking[:top] for q, p in read_run(run_path).predictions.items()}
    texts = dict(task_queries(db_path, task))
    unknown = [q for q in ranking if q not in texts]
    if unknown:
        raise RagError(
            f"{run_path}: query {unknown[0]!r} is not a query of task {task}"
            f" ({len(unknown):,} such)"
        )
    ref = resolve_model(model_name, allow_download=allow_download)
    passages = chunk_texts(db_path, [c for ids in ranking.values() for c in ids])
    order = [q for q in texts if q in ranking]
    keys = {(q, c): pair_key(texts[q], passages[c]) for q in order for c in ranking[q]}
    store = _Cache(Path(cache or f"{db_path}.rerank-cache.sqlite"), ref.sha256)
    try:
        scores = store.get(sorted(set(keys.values())))
        todo = sorted(
            {
                (texts[q], passages[c], key)
                for (q, c), key in keys.items()
                if key not in scores
            }
        )
        if todo:
            model = load_cross_encoder(ref, device)
            predicted = model.predict(
                [(query, passage) for query, passage, _ in todo],
                batch_size=batch_size,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            new = {
                key: float(s) for (_, _, key), s in zip(todo, predicted, strict=True)
            }
            store.put(new)
            scores.update(new)
    finally:
        store.close()
    hits = []
    for q in order:
        rescored = [
            (c, scores[keys[(q, c)]], rank) for rank, c in enumerate(ranking[q])
        ]
        rescored.sort(key=lambda item: (-item[1], item[2]))
        hits.append([(c, s) for c, s, _ in rescored[: k or top]])
    info = {"pairs": len(keys), "scored": len(todo), "cached": len(keys) - len(todo)}
    return order, hits, info


def add_parser(commands: Any) -> None:
    """Register ``kilt-chunks rerank`` on the CLI's subparsers."""
    from kilt_chunks.rag.models import add_model_arguments

    parser = commands.add_parser(
        "rerank",
        help="rescore the top N chunks of a run with a cross-encoder",
        description="Score (query, title path + text) of the top N chunks of each"
        " query with a sentence-transformers CrossEncoder and write them by that"
        " score (scores cached: a second call does not load the model).",
    )
    parser.add_argument("run", help="the run to rerank (TREC format)")
    add_model_arguments(parser)
    parser.add_argument("--task", required=True, help="the run's task")
    parser.add_argument(
        "--top",
        type=int,
        default=DEFAULT_TOP,
        help="chunks per query rescored (default %(default)s)",
    )
    parser.add_argument(
        "--k", type=int, help="chunks per query written (default --top)"
    )
    parser.add_argument("--out", required=True, help="TREC run to write")
    parser.add_argument("--batch-size", type=int, default=32, help="pairs per batch")
    parser.add_argument(
        "--cache", help="score cache (default <db>.rerank-cache.sqlite)"
    )


def run(args: argparse.Namespace) -> str:
    """``kilt-chunks rerank``: the line to print (run written, pairs scored)."""
    from kilt_chunks.database import require_db

    require_db(args.db)
    queries, hits, info = rerank(
        args.db,
        args.run,
        args.task,
        args.model,
        top=args.top,
        k=args.k,
        device=args.device,
        batch_size=args.batch_size,
        cache=args.cache,
        allow_download=args.allow_download,
    )
    slug = Path(args.model.rstrip("/")).name
    tag = f"rerank-{slug}"
    written = write_trec_run(Path(args.out), queries, hits, tag=tag)
    return (
        f"run {args.out}: {len(queries):,} queries, {written:,} lines (top"
        f" {args.top} rescored: {info['scored']:,} pairs scored,"
        f" {info['cached']:,} from the cache)"
    )
