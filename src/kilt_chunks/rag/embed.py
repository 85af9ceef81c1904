"""``kilt-chunks embed``: every chunk of a build as a vector, in shards.

Each chunk is embedded as ``title + "\\n" + text`` (its Markdown heading
path, then its text: the text BM25 indexes, :func:`kilt_chunks.evaluation.bm25.
chunk_rows`) with ``SentenceTransformer.encode_document``, which applies the
model's document prompt, pooling and normalisation as sentence-transformers
does; the vectors are therefore those of ``encode_document`` of that text.
They are stored in :mod:`kilt_chunks.rag.vectors` shards in ``kilt_chunks``
row order with a manifest; a killed run resumes at its missing shards, and
vectors of another model, prompt, dtype or build are refused (``--reembed``
replaces them), never mixed.

Engines: ``local`` (this process, ``--device cpu|cuda|auto``) and ``ray``
(Ray Data ``map_batches`` over an actor pool: one model per worker, one GPU
per worker when ``--device cuda``; each worker reads its shards' chunks from
the DuckDB file, so on a cluster that file must be at the same path on every
node; the vectors come back to this process, which writes the shards).
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import duckdb

from kilt_chunks.evaluation.bm25 import chunk_rows, corpus_fingerprint
from kilt_chunks.progress import Progress
from kilt_chunks.rag import vectors
from kilt_chunks.rag.models import (
    ModelRef,
    RagError,
    load_embedder,
    resolve_device,
    resolve_model,
)
from kilt_chunks.ray_engine import init_ray

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DTYPES",
    "ENGINES",
    "TEXT_OF_CHUNK",
    "add_parser",
    "embed",
    "embedding_dimension",
    "encode_chunks",
    "model_description",
    "run",
    "shard_texts",
]

#: Chunks per forward pass (sentence-transformers' ``batch_size``).
DEFAULT_BATCH_SIZE = 32
#: Storage dtypes of the vectors.
DTYPES = ("float32", "float16")
#: Where the embedding runs.
ENGINES = ("local", "ray")
#: The text of a chunk that is embedded (recorded in the manifest).
TEXT_OF_CHUNK = "title || chr(10) || text"


def model_description(ref: ModelRef, model: Any) -> dict:
    """What the manifest records of a loaded ``SentenceTransformer``: name,
    revision, SHA-256, dimension, prompts, normalisation (a ``Normalize``
    module), similarity function and maximum sequence length."""
    return {
        "model": ref.name,
        "model_revision": ref.revision,
        "model_sha256": ref.sha256,
        "dimension": embedding_dimension(model),
        "prompts": dict(model.prompts),
        "default_prompt_name": model.default_prompt_name,
        # By name: the module moved in sentence-transformers 6.
        "normalized": any(type(module).__name__ == "Normalize" for module in model),
        "similarity_fn_name": model.similarity_fn_name,
        "max_seq_length": model.max_seq_length,
    }


def embedding_dimension(model: Any) -> int:
    """The dimension of a ``SentenceTransformer``'s vectors (the method was
    renamed in sentence-transformers 6)."""
    method = getattr(model, "get_embedding_dimension", None) or (
        model.get_sentence_embedding_dimension
    )
    return int(method())


def encode_chunks(model: Any, texts: list[str], batch_size: int, dtype: str) -> Any:
    """``model.encode_document(texts)`` as a NumPy array ``(len(texts),
    dimension)`` of ``dtype``."""
    import numpy as np

    if not texts:
        return np.zeros((0, embedding_dimension(model)), dtype=dtype)
    array = model.encode_document(
        texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
    )
    return np.ascontiguousarray(array, dtype=dtype)


def shard_texts(db_path: str | Path, index: int, shard_rows: int) -> list[str]:
    """The texts of the chunks of shard ``index`` (rowids ``[index *
    shard_rows, (index + 1) * shard_rows)``), in row order."""
    start = index * shard_rows
    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.sql(
            f"select {TEXT_OF_CHUNK} from kilt_chunks where rowid >= {start}"
            f" and rowid < {start + shard_rows} order by rowid"
        ).fetchall()
    return [text for (text,) in rows]


def _shards_from(
    db_path: str | Path, start_shard: int, shard_rows: int
) -> Iterator[tuple[int, list[str]]]:
    """``(index, texts)`` of each shard from ``start_shard`` on, read in one
    scan (:func:`kilt_chunks.evaluation.bm25.chunk_rows`)."""
    index = start_shard
    pending: list[str] = []
    for _, bodies in chunk_rows(db_path, start=start_shard * shard_rows):
        pending.extend(bodies)
        while len(pending) >= shard_rows:
            yield index, pending[:shard_rows]
            pending = pending[shard_rows:]
            index += 1
    if pending:
        yield index, pending


def _prepare(folder: Path, manifest: dict, reembed: bool) -> tuple[set[int], bool]:
    """Check the vectors already in ``folder`` against ``manifest``; return
    the shards done and whether they are complete.

    Raises:
        RagError: If the folder holds other vectors (and not ``reembed``).
    """
    old = vectors.read_manifest(folder)
    if old is not None and reembed:
        shutil.rmtree(folder)
        old = None
    if old is not None:
        difference = vectors.identity_difference(old, manifest)
        if difference is not None:
            raise RagError(
                f"{folder}: holds other vectors ({difference}); give --reembed to"
                " replace them, or --out for another folder"
            )
        done = vectors.shards_done(folder, manifest)
        return done, bool(old.get("complete"))
    if folder.exists() and any(folder.iterdir()):
        raise RagError(
            f"{folder}: not empty and no {vectors.MANIFEST}; give an empty folder"
        )
    folder.mkdir(parents=True, exist_ok=True)
    return set(), False


def embed(
    db_path: str | Path,
    model_name: str,
    *,
    out: str | Path | None = None,
    device: str = "cpu",
    batch_size: int = DEFAULT_BATCH_SIZE,
    dtype: str = "float32",
    engine: str = "local",
    shard_rows: int = vectors.DEFAULT_SHARD_ROWS,
    reembed: bool = False,
    allow_download: bool = False,
    ray_address: str | None = None,
    workers: int = 0,
    progress_seconds: float = 30,
) -> dict:
    """Embed every chunk of ``db_path`` with ``model_name`` (see the module
    docstring); resume, reuse or refuse what is already in the folder.

    Args:
        out: The vector folder (default ``<db>.vectors/<model>/``).
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``.
        batch_size: Chunks per forward pass.
        dtype: ``float32`` (exact) or ``float16`` (half the disk).
        engine: ``local`` or ``ray``.
        shard_rows: Chunks per shard (the resume points).
        reembed: Replace other vectors found in the folder.
        ray_address: An existing Ray cluster (``auto``, ``ray://...``);
            default: a local Ray.
        workers: Ray workers (models); 0: the CPUs of a local Ray, or one
            per GPU with ``--device cuda``.

    Returns:
        The manifest written (with ``complete`` true, ``embed_seconds``,
        ``resumed_from`` shards and ``chunks_per_second`` of this run).

    Raises:
        RagError: No chunks, a model that cannot be found or loaded, other
            vectors in the folder, or a bad option.
    """
    if dtype not in DTYPES:
        raise RagError(f"--dtype {dtype}: one of {', '.join(DTYPES)}")
    if engine not in ENGINES:
        raise RagError(f"--engine {engine}: one of {', '.join(ENGINES)}")
    if batch_size < 1 or shard_rows < 1:
        raise RagError("--batch-size and the shard size must be at least 1")
    started = time.perf_counter()
    ref = resolve_model(model_name, allow_download=allow_download)
    device = resolve_device(device)
    with duckdb.connect(str(db_path), read_only=True) as con:
        fingerprint = corpus_fingerprint(con)
        text_bytes = con.sql(
            f"select coalesce(sum(strlen({TEXT_OF_CHUNK})), 0) from kilt_chunks"
        ).fetchall()[0][0]
    total = fingerprint["num_chunks"]
    if not total:
        raise RagError(f"{db_path}: kilt_chunks is empty; nothing to embed")
    model = load_embedder(ref, device)
    manifest = {
        "format": vectors.VECTOR_FORMAT,
        **model_description(ref, model),
        "dtype": dtype,
        "text": TEXT_OF_CHUNK,
        "corpus": fingerprint,
        "num_chunks": total,
        "shard_rows": shard_rows,
        "sentence_transformers_version": version("sentence-transformers"),
    }
    folder = Path(out) if out else vectors.vector_dir(db_path, ref.slug)
    done, complete = _prepare(folder, manifest, reembed)
    if complete:
        old = vectors.read_manifest(folder) or {}
        return {**old, "reused": True, "folder": str(folder)}
    num_shards = -(-total // shard_rows)
    todo = [index for index in range(num_shards) if index not in done]
    run_info = {
        "model_path": str(ref.path),
        "complete": False,
        "engine": engine,
        "device": device,
        "batch_size": batch_size,
        "resumed_from": len(done),
    }
    vectors.write_manifest(folder, {**manifest, **run_info})
    if done:
        Progress.note(
            f"embed: resuming, {len(done):,} of {num_shards:,} shards on disk"
        )
    progress = Progress(
        "embed",
        total_bytes=text_bytes,
        interval=progress_seconds,
        unit="chunks",
    )
    embedded = 0
    try:
        if not todo:
            pass  # every shard on disk (killed before the manifest was done)
        elif engine == "local":
            for index, texts in _shards_from(db_path, min(todo), shard_rows):
                if index in done:
                    continue
                array = encode_chunks(model, texts, batch_size, dtype)
                vectors.write_shard(folder, index, array)
                embedded += len(texts)
                progress.update(sum(len(t.encode()) for t in texts), len(texts))
        else:
            del model  # the workers load their own
            for index, array, nbytes in _embed_ray(
                db_path,
                ref,
                todo,
                shard_rows,
                device,
                batch_size,
                dtype,
                ray_address,
                workers,
            ):
                vectors.write_shard(folder, index, array)
                embedded += len(array)
                progress.update(nbytes, len(array))
    finally:
        progress.close()
    missing = set(range(num_shards)) - vectors.shards_done(folder, manifest)
    if missing:
        raise RagError(f"{folder}: shards {sorted(missing)[:5]} were not written")
    seconds = time.perf_counter() - started
    result = {
        **manifest,
        **run_info,
        "complete": True,
        "embed_seconds": round(seconds, 3),
        "chunks_per_second": round(embedded / seconds, 3) if seconds else None,
        "vector_bytes": sum(
            vectors.shard_path(folder, i).stat().st_size for i in range(num_shards)
        ),
    }
    vectors.write_manifest(folder, result)
    return {**result, "folder": str(folder)}


class _ShardEmbedder:
    """A Ray Data actor: one model, shards in, vectors out."""

    def __init__(
        self,
        ref: ModelRef,
        device: str,
        batch_size: int,
        dtype: str,
        db_path: str,
        shard_rows: int,
    ) -> None:
        self.model = load_embedder(ref, device)
        self.batch_size = batch_size
        self.dtype = dtype
        self.db_path = db_path
        self.shard_rows = shard_rows

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        shards, arrays, sizes = [], [], []
        for index in batch["shard"]:
            texts = shard_texts(self.db_path, int(index), self.shard_rows)
            shards.append(int(index))
            arrays.append(encode_chunks(self.model, texts, self.batch_size, self.dtype))
            sizes.append(sum(len(t.encode()) for t in texts))
        result = np.empty(len(arrays), dtype=object)
        result[:] = arrays
        return {"shard": np.array(shards), "vectors": result, "nbytes": np.array(sizes)}


def _embed_ray(
    db_path: str | Path,
    ref: ModelRef,
    todo: list[int],
    shard_rows: int,
    device: str,
    batch_size: int,
    dtype: str,
    address: str | None,
    workers: int,
) -> Iterator[tuple[int, Any, int]]:
    """``(shard, vectors, text bytes)`` of each shard in ``todo``, embedded
    by Ray Data ``map_batches`` over an actor pool of ``workers`` models
    (one GPU each on ``cuda``), in the order they finish."""
    started = init_ray(address, workers or None, RagError, "kilt-chunks[rag]")[1]
    import ray.data

    try:
        gpu = device.startswith("cuda")
        resources = ray.cluster_resources()
        size = workers or max(1, int(resources.get("GPU" if gpu else "CPU", 1)))
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        dataset = ray.data.from_items(
            [{"shard": index} for index in todo], override_num_blocks=len(todo)
        ).map_batches(
            _ShardEmbedder,
            fn_constructor_kwargs={
                "ref": ref,
                "device": device,
                "batch_size": batch_size,
                "dtype": dtype,
                "db_path": str(Path(db_path).resolve()),
                "shard_rows": shard_rows,
            },
            batch_size=1,
            concurrency=size,
            num_gpus=1 if gpu else 0,
            num_cpus=0 if gpu else 1,
        )
        for batch in dataset.iter_batches(batch_size=1, batch_format="numpy"):
            for index, array, nbytes in zip(
                batch["shard"], batch["vectors"], batch["nbytes"], strict=True
            ):
                yield int(index), array, int(nbytes)
    finally:
        if started:
            ray.shutdown()


def add_parser(commands: Any) -> None:
    """Register ``kilt-chunks embed`` on the CLI's subparsers."""
    from kilt_chunks.rag.models import add_model_arguments

    parser = commands.add_parser(
        "embed",
        help="embed every chunk with a sentence-transformers model (vectors"
        " beside the DuckDB file)",
        description="Embed title path + text of every chunk with"
        " SentenceTransformer.encode_document (the model's document prompt,"
        " pooling and normalisation), into .npy shards in kilt_chunks row order"
        " with a manifest (default <db>.vectors/<model>/). A killed run resumes"
        " at its missing shards; vectors of another model or build are refused"
        " (--reembed replaces them).",
    )
    add_model_arguments(parser)
    parser.add_argument("--out", help="vector folder (default <db>.vectors/<model>/)")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        help="chunks per forward pass (default %(default)s)",
    )
    parser.add_argument(
        "--dtype",
        choices=DTYPES,
        default="float32",
        help="storage dtype (float16: half the disk; default %(default)s)",
    )
    parser.add_argument(
        "--shard-rows",
        type=int,
        default=vectors.DEFAULT_SHARD_ROWS,
        help="chunks per shard, the resume points (default %(default)s)",
    )
    parser.add_argument("--engine", choices=ENGINES, default="local")
    parser.add_argument(
        "--ray-address", help="existing Ray cluster (default: a local Ray)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="Ray workers, one model each (0: one per CPU, or per GPU on cuda)",
    )
    parser.add_argument(
        "--reembed", action="store_true", help="replace other vectors in the folder"
    )


def run(args: argparse.Namespace) -> str:
    """``kilt-chunks embed``: the lines to print (folder, chunks, size, time)."""
    from kilt_chunks.database import require_db

    require_db(args.db)
    result = embed(
        args.db,
        args.model,
        out=args.out,
        device=args.device,
        batch_size=args.batch_size,
        dtype=args.dtype,
        engine=args.engine,
        shard_rows=args.shard_rows,
        reembed=args.reembed,
        allow_download=args.allow_download,
        ray_address=args.ray_address,
        workers=args.workers,
    )
    folder = result.get("folder") or args.out
    if result.get("reused"):
        return f"embed {folder}/: reused ({result['num_chunks']:,} chunks, same model)"
    resumed = result["resumed_from"]
    return (
        f"embed {folder}/: {result['num_chunks']:,} chunks x {result['dimension']}"
        f" {result['dtype']}, {result['vector_bytes'] / 1e6:,.1f} MB,"
        f" {result['embed_seconds']:.1f} s ({result['chunks_per_second']:,.1f}"
        f" chunks/s, {result['engine']} on {result['device']})"
        + (f" (resumed after {resumed:,} shards)" if resumed else "")
    )
