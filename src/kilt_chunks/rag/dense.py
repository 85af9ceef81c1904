"""``kilt-chunks dense``: a task's queries against the chunk vectors.

Queries are encoded with ``SentenceTransformer.encode_query`` (the model's
query prompt or instruction: :mod:`kilt_chunks.rag.models`) by the model
whose SHA-256 the vectors' manifest records (another model is refused), and
scored by inner product with every chunk vector (cosine similarity when the
model normalises, as BGE, E5 and MiniLM do).

Index kinds:

* ``exact`` (default): NumPy, shard by shard (memory-mapped), queries in
  blocks of :data:`QUERY_BLOCK`: the exact top k (as FAISS ``IndexFlatIP``
  would give), equal scores in row order. Memory: one shard and one block of
  scores.
* ``hnsw`` and ``ivfpq``: approximate FAISS indexes (``IndexHNSWFlat``;
  ``IndexIVFPQ``, trained on a sample of the vectors), built once and saved
  in the vector folder (``index-<kind>.faiss``), rebuilt when the vectors
  change. Their recall@k against the exact search is measured on a sample of
  the task's queries and printed every run.

The run is a TREC run (:func:`kilt_chunks.evaluation.bm25.write_trec_run`) that
``kilt-chunks eval`` scores at chunk and page level.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kilt_chunks.evaluation.bm25 import chunk_ids_of_rows, task_queries, write_trec_run
from kilt_chunks.rag import vectors
from kilt_chunks.rag.models import RagError, load_embedder, resolve_model

__all__ = [
    "INDEX_KINDS",
    "QUERY_BLOCK",
    "add_parser",
    "approximate_search",
    "build_faiss_index",
    "check_vectors",
    "encode_queries",
    "exact_search",
    "recall_at_k",
    "run",
    "search_task",
]

#: Index kinds of ``--index``.
INDEX_KINDS = ("exact", "hnsw", "ivfpq")
#: Queries scored against a shard at a time (bounds the score matrix).
QUERY_BLOCK = 1024
#: HNSW: neighbours per node (``M``) and search breadth (``efSearch``).
HNSW_M = 32
HNSW_EF_SEARCH = 128
#: IVF-PQ: bytes per vector (sub-quantizers of 8 bits) and lists probed.
IVFPQ_BYTES = 64
IVFPQ_NPROBE = 32


def encode_queries(model: Any, texts: Sequence[str], batch_size: int = 32) -> Any:
    """``model.encode_query(texts)`` as a float32 array ``(len(texts), dim)``."""
    import numpy as np

    array = model.encode_query(
        list(texts),
        batch_size=batch_size,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.ascontiguousarray(array, dtype=np.float32)


def _merge_top(
    best_scores: Any, best_rows: Any, scores: Any, rows: Any, k: int
) -> tuple[Any, Any]:
    """The top ``k`` of two candidate sets per query (columns), unsorted."""
    import numpy as np

    all_scores = np.concatenate([best_scores, scores], axis=1)
    all_rows = np.concatenate([best_rows, rows], axis=1)
    if all_scores.shape[1] <= k:
        return all_scores, all_rows
    keep = np.argpartition(-all_scores, k - 1, axis=1)[:, :k]
    return (
        np.take_along_axis(all_scores, keep, axis=1),
        np.take_along_axis(all_rows, keep, axis=1),
    )


def exact_search(
    folder: str | Path, query_vectors: Any, k: int
) -> list[list[tuple[int, float]]]:
    """The exact top ``k`` rows of each query by inner product.

    Args:
        folder: A complete vector folder.
        query_vectors: ``(queries, dimension)`` float32.
        k: Rows per query.

    Returns:
        Per query, ``(row, score)`` best first; equal scores in row order
        (of rows tied at the k-th score, which are kept is not fixed).

    Raises:
        RagError: If the vectors are incomplete or of another dimension.
    """
    import numpy as np

    queries = np.asarray(query_vectors, dtype=np.float32)
    num = queries.shape[0]
    best_scores = np.empty((num, 0), dtype=np.float32)
    best_rows = np.empty((num, 0), dtype=np.int64)
    for first, shard in vectors.iter_shards(folder):
        if shard.shape[1] != queries.shape[1]:
            raise RagError(
                f"{folder}: vectors of dimension {shard.shape[1]}, queries of"
                f" {queries.shape[1]}"
            )
        if not num:
            break
        block = np.asarray(shard, dtype=np.float32)
        take = min(k, block.shape[0])
        merged_scores, merged_rows = [], []
        for start in range(0, num, QUERY_BLOCK):
            part = slice(start, start + QUERY_BLOCK)
            scores = queries[part] @ block.T
            top = np.argpartition(-scores, take - 1, axis=1)[:, :take]
            part_scores, part_rows = _merge_top(
                best_scores[part],
                best_rows[part],
                np.take_along_axis(scores, top, axis=1),
                top.astype(np.int64) + first,
                k,
            )
            merged_scores.append(part_scores)
            merged_rows.append(part_rows)
        best_scores = np.concatenate(merged_scores)
        best_rows = np.concatenate(merged_rows)
    return _sorted_hits(best_scores, best_rows)


def _sorted_hits(scores: Any, rows: Any) -> list[list[tuple[int, float]]]:
    """Per query, ``(row, score)`` sorted by score (highest first), then row;
    rows below 0 (FAISS's padding) dropped."""
    import numpy as np

    hits = []
    for query_scores, query_rows in zip(scores, rows, strict=True):
        order = np.lexsort((query_rows, -query_scores))
        hits.append(
            [
                (int(query_rows[i]), float(query_scores[i]))
                for i in order
                if query_rows[i] >= 0
            ]
        )
    return hits


def _index_path(folder: Path, kind: str) -> Path:
    return folder / f"index-{kind}.faiss"


def build_faiss_index(folder: str | Path, kind: str, *, seed: int = 0) -> dict:
    """Build (or reuse) the approximate FAISS index ``kind`` of a vector
    folder, saved as ``index-<kind>.faiss`` with ``index-<kind>.json``.

    ``hnsw``: ``IndexHNSWFlat(d, HNSW_M)``, inner product. ``ivfpq``:
    ``IndexIVFPQ`` with ``nlist = 4 sqrt(n)`` lists (FAISS's guideline of
    4-16 sqrt(n); at least 1) and :data:`IVFPQ_BYTES` 8-bit sub-quantizers
    (fewer when the dimension is not a multiple), trained on at most 256
    vectors per list drawn with ``seed``.

    Returns:
        The index description (kind, parameters, build seconds, bytes).

    Raises:
        RagError: If the kind is unknown or the vectors are incomplete.
    """
    import faiss
    import numpy as np

    folder = Path(folder)
    manifest = vectors.read_manifest(folder) or {}
    meta_path = folder / f"index-{kind}.json"
    stamp = json.dumps(vectors.identity(manifest), sort_keys=True)
    if meta_path.exists() and _index_path(folder, kind).exists():
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("vectors") == stamp:
            return meta
    started = time.perf_counter()
    dim, total = manifest["dimension"], manifest["num_chunks"]
    if kind == "hnsw":
        index: Any = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        params: dict[str, Any] = {"M": HNSW_M}
    elif kind == "ivfpq":
        nlist = max(1, min(int(4 * math.sqrt(total)), total // 39 or 1))
        m = max(d for d in range(1, min(IVFPQ_BYTES, dim) + 1) if dim % d == 0)
        bits = 8 if total >= 256 * 39 else max(1, int(math.log2(max(2, total // 39))))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFPQ(
            quantizer, dim, nlist, m, bits, faiss.METRIC_INNER_PRODUCT
        )
        rng = np.random.default_rng(seed)
        sample_rows = np.sort(rng.choice(total, min(total, 256 * nlist), replace=False))
        sample = _rows_of(folder, sample_rows)
        index.train(sample)
        params = {"nlist": nlist, "m": m, "bits": bits, "train": len(sample_rows)}
    else:
        raise RagError(f"--index {kind}: one of {', '.join(INDEX_KINDS)}")
    for _, shard in vectors.iter_shards(folder):
        index.add(np.ascontiguousarray(shard, dtype=np.float32))
    faiss.write_index(index, str(_index_path(folder, kind)))
    meta = {
        "kind": kind,
        **params,
        "vectors": stamp,
        "build_seconds": round(time.perf_counter() - started, 3),
        "index_bytes": _index_path(folder, kind).stat().st_size,
        "faiss_version": faiss.__version__,
    }
    meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def _rows_of(folder: Path, rows: Any) -> Any:
    """The vectors of sorted ``rows`` as one float32 array."""
    import numpy as np

    parts = []
    for first, shard in vectors.iter_shards(folder):
        local = rows[(rows >= first) & (rows < first + shard.shape[0])] - first
        if len(local):
            parts.append(np.asarray(shard[local], dtype=np.float32))
    return np.ascontiguousarray(np.concatenate(parts))


def approximate_search(
    folder: str | Path, kind: str, query_vectors: Any, k: int
) -> list[list[tuple[int, float]]]:
    """Top ``k`` rows per query from the saved FAISS index ``kind`` (built by
    :func:`build_faiss_index`); ``(row, score)`` best first."""
    import faiss
    import numpy as np

    index = faiss.read_index(str(_index_path(Path(folder), kind)))
    if kind == "hnsw":
        faiss.ParameterSpace().set_index_parameter(index, "efSearch", HNSW_EF_SEARCH)
    else:
        faiss.ParameterSpace().set_index_parameter(index, "nprobe", IVFPQ_NPROBE)
    scores, rows = index.search(np.asarray(query_vectors, dtype=np.float32), k)
    return _sorted_hits(scores, rows.astype(np.int64))


def recall_at_k(
    exact: Sequence[Sequence[tuple[int, float]]],
    approximate: Sequence[Sequence[tuple[int, float]]],
) -> float:
    """Mean over queries of the share of the exact top-k rows the approximate
    search also returned (queries with no exact hit left out)."""
    shares = [
        len({r for r, _ in a} & {r for r, _ in e}) / len(e)
        for e, a in zip(exact, approximate, strict=True)
        if e
    ]
    return sum(shares) / len(shares) if shares else 1.0


def check_vectors(db_path: str | Path, folder: Path, model_sha256: str) -> dict:
    """The manifest of ``folder`` when its vectors are complete, of the
    chunks now in ``db_path`` and of the model given.

    Raises:
        RagError: No vectors, an unfinished embedding, another build, or
            another model.
    """
    import duckdb

    from kilt_chunks.evaluation.bm25 import corpus_fingerprint

    manifest = vectors.read_manifest(folder)
    if manifest is None:
        raise RagError(f"{folder}: no vectors; run `kilt-chunks embed` first")
    if not manifest.get("complete"):
        raise RagError(
            f"{folder}: the embedding did not finish; run `kilt-chunks"
            " embed` again to resume it"
        )
    with duckdb.connect(str(db_path), read_only=True) as con:
        current = corpus_fingerprint(con)
    if manifest["corpus"] != current:
        raise RagError(
            f"{folder}: vectors of another build of the chunks; run `kilt-chunks"
            " embed --reembed`"
        )
    if manifest["model_sha256"] != model_sha256:
        raise RagError(
            f"{folder}: vectors of model {manifest['model']} (another model's"
            " files); give that model, or embed with this one"
        )
    return manifest


def search_task(
    db_path: str | Path,
    task: str,
    model_name: str,
    *,
    k: int,
    vectors_dir: str | Path | None = None,
    index: str = "exact",
    device: str = "cpu",
    batch_size: int = 32,
    allow_download: bool = False,
    recall_sample: int = 200,
) -> tuple[list[tuple[str, str]], list[list[tuple[str, float]]], dict]:
    """Search the task's queries; see the module docstring.

    Returns:
        ``(queries, hits, info)``: ``(query_id, text)`` of the task,
        ``(chunk_id, score)`` per query best first, and what was done
        (``index``, its description, ``recall_at_k`` of an approximate index
        on the first ``recall_sample`` queries).

    Raises:
        RagError: As :func:`check_vectors`, or an unknown index kind.
        Bm25Error: If the task has no queries.
    """
    if index not in INDEX_KINDS:
        raise RagError(f"--index {index}: one of {', '.join(INDEX_KINDS)}")
    if k < 1:
        raise RagError(f"--k {k}: at least 1")
    ref = resolve_model(model_name, allow_download=allow_download)
    folder = Path(vectors_dir) if vectors_dir else vectors.vector_dir(db_path, ref.slug)
    check_vectors(db_path, folder, ref.sha256)
    queries = task_queries(db_path, task)
    model = load_embedder(ref, device)
    query_vectors = encode_queries(model, [text for _, text in queries], batch_size)
    info: dict[str, Any] = {"index": index, "folder": str(folder)}
    if index == "exact":
        found = exact_search(folder, query_vectors, k)
    else:
        info["index_meta"] = build_faiss_index(folder, index)
        found = approximate_search(folder, index, query_vectors, k)
        sample = slice(0, recall_sample)
        exact = exact_search(folder, query_vectors[sample], k)
        info["recall_at_k"] = recall_at_k(exact, found[sample])
        info["recall_queries"] = len(exact)
    ids = chunk_ids_of_rows(db_path, [row for hits in found for row, _ in hits])
    if any(chunk_id is None for chunk_id in ids):
        raise RagError(f"{folder}: hit rows not in kilt_chunks of {db_path}")
    it = iter(ids)
    hits = [[(str(next(it)), score) for _, score in found_q] for found_q in found]
    return queries, hits, info


def add_parser(commands: Any) -> None:
    """Register ``kilt-chunks dense`` on the CLI's subparsers."""
    from kilt_chunks.rag.models import add_model_arguments

    parser = commands.add_parser(
        "dense",
        help="dense run (TREC format) of a task's queries over the chunk vectors",
        description="Encode the task's queries with SentenceTransformer."
        "encode_query and write the top k chunks by inner product with the"
        " vectors of `kilt-chunks embed` (exact by default; --index hnsw or"
        " ivfpq: an approximate FAISS index, its recall against exact printed).",
    )
    add_model_arguments(parser)
    parser.add_argument("--task", required=True, help="task name, e.g. nq-dev-kilt")
    parser.add_argument("--k", type=int, default=100, help="chunks per query")
    parser.add_argument(
        "--out", help="TREC run to write (default runs/dense.<model>.<task>.trec)"
    )
    parser.add_argument(
        "--vectors", help="vector folder (default <db>.vectors/<model>/)"
    )
    parser.add_argument("--index", choices=INDEX_KINDS, default="exact")
    parser.add_argument(
        "--batch-size", type=int, default=32, help="queries per forward pass"
    )
    parser.add_argument(
        "--recall-sample",
        type=int,
        default=200,
        help="queries on which an approximate index's recall is measured",
    )


def run(args: argparse.Namespace) -> str:
    """``kilt-chunks dense``: the lines to print (run written, recall)."""
    from kilt_chunks.database import require_db

    require_db(args.db)
    queries, hits, info = search_task(
        args.db,
        args.task,
        args.model,
        k=args.k,
        vectors_dir=args.vectors,
        index=args.index,
        device=args.device,
        batch_size=args.batch_size,
        allow_download=args.allow_download,
        recall_sample=args.recall_sample,
    )
    slug = Path(info["folder"]).name
    out = Path(args.out or Path("runs") / f"dense.{slug}.{args.task}.trec")
    tag = f"dense-{slug}-{args.index}"
    written = write_trec_run(out, [q for q, _ in queries], hits, tag=tag)
    lines = [
        f"run {out}: {len(queries):,} queries, {written:,} lines (top"
        f" {args.k}, tag {tag})"
    ]
    if "recall_at_k" in info:
        meta = info["index_meta"]
        lines.append(
            f"index {args.index}: recall@{args.k} against exact"
            f" {info['recall_at_k']:.4f} on {info['recall_queries']:,} queries"
            f" ({meta['index_bytes'] / 1e6:,.1f} MB, built in"
            f" {meta['build_seconds']:.1f} s)"
        )
    return "\n".join(lines)
