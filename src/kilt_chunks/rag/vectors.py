"""Chunk vectors on disk: shards in ``kilt_chunks`` row order, and a manifest.

A vector folder (by default ``<db>.vectors/<model>/`` beside the DuckDB file)
holds:

* ``manifest.json`` (:data:`MANIFEST`): what the vectors are (the model's
  name, revision and SHA-256, dimension, dtype, normalisation, prompts, the
  text embedded), the corpus they are of (:func:`kilt_chunks.evaluation.bm25.
  corpus_fingerprint`), the shard size, and ``complete`` (false while
  embedding);
* ``shard-00000.npy``, ``shard-00001.npy``, ...: NumPy ``.npy`` arrays of
  shape ``(rows, dimension)``; shard ``i`` holds the chunks of rowids
  ``[i * shard_rows, (i + 1) * shard_rows)`` (the last one fewer). A shard is
  written to a temporary name and renamed, so a shard on disk is whole: a
  killed run resumes at its first missing shard.

The manifest's identity (:func:`identity`: all but the run's timings and
``complete``) decides whether vectors on disk may be resumed or reused; a
different model, prompts, dtype or build is refused (:class:`RagError`),
never mixed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kilt_chunks.rag.models import RagError

__all__ = [
    "DEFAULT_SHARD_ROWS",
    "MANIFEST",
    "VECTOR_FORMAT",
    "identity",
    "identity_difference",
    "iter_shards",
    "read_manifest",
    "shard_path",
    "shards_done",
    "vector_dir",
    "write_manifest",
    "write_shard",
]

#: Name of the manifest in a vector folder.
MANIFEST = "manifest.json"
#: Layout of a vector folder (recorded in the manifest).
VECTOR_FORMAT = 1
#: Chunks per shard (the resume points): 65,536 x 1,024 float16 = 128 MiB.
DEFAULT_SHARD_ROWS = 65_536
#: Manifest keys that describe a run, not the vectors (left out of identity).
RUN_KEYS = frozenset(
    {
        "complete",
        "embed_seconds",
        "engine",
        "device",
        "batch_size",
        "resumed_from",
        "chunks_per_second",
        "vector_bytes",
        "model_path",
    }
)


def vector_dir(db_path: str | Path, slug: str) -> Path:
    """The default vector folder of a model: ``<db>.vectors/<slug>/``."""
    return Path(f"{db_path}.vectors") / slug


def shard_path(folder: Path, index: int) -> Path:
    """The file of shard ``index`` in ``folder``."""
    return folder / f"shard-{index:05d}.npy"


def identity(manifest: dict) -> dict:
    """What makes vectors the same vectors: the manifest less :data:`RUN_KEYS`."""
    return {key: value for key, value in manifest.items() if key not in RUN_KEYS}


def identity_difference(old: dict, new: dict) -> str | None:
    """The first key where two manifests' identities differ, as
    ``key: old -> new``, or None when they are the same vectors."""
    a, b = identity(old), identity(new)
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            return f"{key}: {a.get(key)!r} -> {b.get(key)!r}"
    return None


def read_manifest(folder: str | Path) -> dict | None:
    """The manifest in ``folder``, or None when there is none.

    Raises:
        RagError: If it is not JSON.
    """
    path = Path(folder) / MANIFEST
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RagError(f"{path}: not a JSON manifest ({exc})") from None


def write_manifest(folder: Path, manifest: dict) -> None:
    """Write ``manifest`` to ``folder`` through a temporary file and a rename."""
    temporary = folder / f"{MANIFEST}.tmp"
    temporary.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, folder / MANIFEST)


def write_shard(folder: Path, index: int, vectors: Any) -> int:
    """Write shard ``index`` (an array ``(rows, dimension)``) whole: to a
    temporary file, then renamed. Returns its bytes on disk."""
    import numpy as np

    target = shard_path(folder, index)
    temporary = target.with_suffix(".npy.tmp")
    with temporary.open("wb") as f:
        np.save(f, vectors, allow_pickle=False)
    os.replace(temporary, target)
    return target.stat().st_size


def shards_done(folder: Path, manifest: dict) -> set[int]:
    """The shards on disk (each whole: written through a rename), checked
    against the manifest's shape and dtype.

    Raises:
        RagError: If a shard on disk has the wrong shape or dtype.
    """
    import numpy as np

    total = manifest["num_chunks"]
    size = manifest["shard_rows"]
    found = set()
    for index in range(-(-total // size)):
        path = shard_path(folder, index)
        if not path.exists():
            continue
        rows = min(size, total - index * size)
        array = np.load(path, mmap_mode="r", allow_pickle=False)
        if (
            array.shape != (rows, manifest["dimension"])
            or str(array.dtype) != (manifest["dtype"])
        ):
            raise RagError(
                f"{path}: shape {array.shape} {array.dtype}, the manifest says"
                f" ({rows}, {manifest['dimension']}) {manifest['dtype']};"
                " embed again with --reembed"
            )
        found.add(index)
    return found


def iter_shards(folder: str | Path) -> Iterator[tuple[int, Any]]:
    """``(first_row, array)`` of each shard of a complete vector folder, in
    row order, memory-mapped (read as they are used).

    Raises:
        RagError: If the folder has no manifest, or the embedding is not
            complete (killed: run ``kilt-chunks embed`` again to finish it).
    """
    import numpy as np

    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest is None:
        raise RagError(f"{folder}: no vectors (run `kilt-chunks embed`)")
    if not manifest.get("complete"):
        raise RagError(
            f"{folder}: the embedding did not finish; run `kilt-chunks embed`"
            " again to resume it"
        )
    size = manifest["shard_rows"]
    for index in range(-(-manifest["num_chunks"] // size)):
        yield (
            index * size,
            np.load(shard_path(folder, index), mmap_mode="r", allow_pickle=False),
        )
