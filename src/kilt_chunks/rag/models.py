"""Local models for the RAG commands: find, identify and load them, offline.

A model is named by ``--model M``: a folder (a sentence-transformers model
saved with ``save()``, or a Hugging Face model folder), or a Hub name such as
``BAAI/bge-large-en-v1.5`` that is looked up in the local Hugging Face cache
only (``huggingface_hub.snapshot_download(..., local_files_only=True)``):
nothing is downloaded unless ``allow_download`` is given. Loading passes
``local_files_only=True`` to sentence-transformers as well.

A model's identity (:func:`model_identity`) is the SHA-256 of its files
(names and bytes), so vectors of one model are never read with another
(:mod:`kilt_chunks.rag.vectors`), and the Hub revision when it came from the
cache.

Prompts: sentence-transformers applies a model's own ``prompts``
(``config_sentence_transformers.json``) in ``encode_query`` and
``encode_document``. Models that publish an instruction only on their model
card get it from :data:`KNOWN_PROMPTS` when their configuration has none:
BGE v1.5's query instruction (model card of BAAI/bge-large-en-v1.5,
"Represent this sentence for searching relevant passages: ") and E5's
``query: ``/``passage: `` (model card of intfloat/e5-large-v2).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "KNOWN_PROMPTS",
    "ModelRef",
    "RagError",
    "add_model_arguments",
    "load_cross_encoder",
    "load_embedder",
    "model_identity",
    "resolve_device",
    "resolve_model",
]


class RagError(RuntimeError):
    """A RAG command cannot go on (a missing model, stale vectors, ...); the
    message is one line naming the file or model."""


#: Prompts of models whose sentence-transformers configuration has none, by a
#: pattern of the model name: ``{"query": ..., "document": ...}``.
KNOWN_PROMPTS: dict[str, dict[str, str]] = {
    # BAAI/bge-{small,base,large}-en-v1.5 model card: the instruction goes
    # before queries only ("Represent this sentence for searching relevant
    # passages: "); passages get none.
    r"bge-(small|base|large)-en(-v1\.5)?$": {
        "query": "Represent this sentence for searching relevant passages: ",
        "document": "",
    },
    # intfloat/e5-* model cards: "query: " and "passage: " before each text.
    r"(^|/)(multilingual-)?e5-(small|base|large)(-v2)?$": {
        "query": "query: ",
        "document": "passage: ",
    },
}

#: Files whose bytes make a model's identity (weights, configs, tokenizer);
#: README and the like are left out.
_IDENTITY_SUFFIXES = (".json", ".safetensors", ".bin", ".txt", ".model", ".pt")


@dataclass(frozen=True)
class ModelRef:
    """A model found on this machine.

    Attributes:
        name: What the user gave (``--model``).
        path: The folder it is loaded from.
        revision: The Hub commit of a cached model, else None.
        sha256: :func:`model_identity` of the folder.
        prompts: Prompts from :data:`KNOWN_PROMPTS` to use when the model's
            configuration has none (empty otherwise).
    """

    name: str
    path: Path
    revision: str | None
    sha256: str
    prompts: dict[str, str] = field(default_factory=dict)

    @property
    def slug(self) -> str:
        """A folder name for this model (``BAAI/bge-large-en-v1.5`` ->
        ``BAAI--bge-large-en-v1.5``; a folder gives its last part, or its
        parent's when it is called ``model``)."""
        base = self.name.rstrip("/")
        if Path(base).is_dir():
            folder = Path(base).resolve()
            # A package's bundled "model" folder: name it by the package.
            generic = folder.name.lower() in {"model", "models", "weights"}
            base = folder.parent.name if generic else folder.name
        return re.sub(r"[^A-Za-z0-9._-]+", "--", base.replace("/", "--"))


def model_identity(path: str | Path) -> str:
    """SHA-256 over the model files of ``path`` (relative name and bytes of
    each file ending in one of :data:`_IDENTITY_SUFFIXES`, sorted by name;
    about 3 s per GB). Two folders with the same files have the same
    identity wherever they are."""
    root = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = file.relative_to(root).as_posix()
        if not relative.endswith(_IDENTITY_SUFFIXES) or "/." in f"/{relative}":
            continue
        digest.update(relative.encode() + b"\0")
        with file.open("rb") as f:
            while block := f.read(1 << 22):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def resolve_model(name: str, *, allow_download: bool = False) -> ModelRef:
    """Find the model ``name`` on this machine.

    Args:
        name: A folder, or a Hugging Face Hub name looked up in the local
            cache (``HF_HOME`` / ``HF_HUB_CACHE``).
        allow_download: Fetch a Hub model missing from the cache (off by
            default; these machines reach no model hub).

    Raises:
        RagError: If ``name`` is neither a folder nor in the local cache.
    """
    folder = Path(name).expanduser()
    revision = None
    if folder.is_dir():
        path = folder.resolve()
    elif folder.exists():
        raise RagError(f"model {name}: a file, not a model folder")
    else:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

        try:
            path = Path(snapshot_download(name, local_files_only=not allow_download))
        except (LocalEntryNotFoundError, HFValidationError, OSError) as exc:
            where = os.environ.get("HF_HUB_CACHE") or os.environ.get("HF_HOME")
            raise RagError(
                f"model {name}: no such folder, and not in the local Hugging"
                f" Face cache{f' ({where})' if where else ''}; nothing is"
                " downloaded: give the model's folder"
                + ("" if allow_download else " (or --allow-download)")
                + f" ({type(exc).__name__})"
            ) from None
        revision = path.name
    prompts: dict[str, str] = {}
    for pattern, known in KNOWN_PROMPTS.items():
        if re.search(pattern, name.rstrip("/"), flags=re.IGNORECASE):
            prompts = dict(known)
            break
    return ModelRef(name, path, revision, model_identity(path), prompts)


def resolve_device(device: str) -> str:
    """``cpu``, ``cuda``, ``cuda:N`` or ``mps`` as given; ``auto``: ``cuda``
    when torch sees a GPU, else ``cpu``.

    Raises:
        RagError: If ``cuda`` is asked for and torch sees no GPU.
    """
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RagError(f"--device {device}: torch sees no CUDA GPU on this machine")
    return device


def _torch_dtype(dtype: str | None) -> Any:
    import torch

    return {
        None: None,
        "float32": torch.float32,
        "float16": torch.float16,
        "bfloat16": torch.bfloat16,
    }[dtype]


def load_embedder(
    ref: ModelRef, device: str = "cpu", *, model_dtype: str | None = None
) -> Any:
    """The ``SentenceTransformer`` of ``ref`` on ``device``, from local files
    only. Prompts from :data:`KNOWN_PROMPTS` are added when the model's
    configuration has no ``query``/``document`` prompt.

    Args:
        model_dtype: Weights' dtype (``float16`` on a GPU halves memory and
            time); None keeps the saved one.

    Raises:
        RagError: If the folder is not a model sentence-transformers can load.
    """
    from sentence_transformers import SentenceTransformer

    kwargs: dict[str, Any] = {}
    if model_dtype is not None:
        kwargs["model_kwargs"] = {"torch_dtype": _torch_dtype(model_dtype)}
    try:
        model = SentenceTransformer(
            str(ref.path),
            device=resolve_device(device),
            local_files_only=True,
            **kwargs,
        )
    except (OSError, ValueError) as exc:
        raise RagError(
            f"model {ref.name}: sentence-transformers cannot load {ref.path}:"
            f" {str(exc).splitlines()[0]}"
        ) from None
    for role, prompt in ref.prompts.items():
        model.prompts.setdefault(role, prompt)
    return model


def load_cross_encoder(ref: ModelRef, device: str = "cpu") -> Any:
    """The sentence-transformers ``CrossEncoder`` of ``ref`` on ``device``,
    from local files only.

    Raises:
        RagError: If the folder is not a model a CrossEncoder can load.
    """
    from sentence_transformers import CrossEncoder

    try:
        return CrossEncoder(
            str(ref.path), device=resolve_device(device), local_files_only=True
        )
    except (OSError, ValueError) as exc:
        raise RagError(
            f"model {ref.name}: sentence-transformers cannot load {ref.path} as a"
            f" cross-encoder: {str(exc).splitlines()[0]}"
        ) from None


def add_model_arguments(parser: Any) -> None:
    """The options every model-using RAG command takes: ``--db``, ``--model``,
    ``--device``, ``--allow-download``."""
    from kilt_chunks.database import DB_HELP, default_db

    parser.add_argument("--db", default=default_db(), help=DB_HELP)
    parser.add_argument(
        "--model",
        required=True,
        help="a model folder, or a Hugging Face name in the local cache",
    )
    parser.add_argument(
        "--device",
        default="cpu",
        help="cpu, cuda, cuda:N or auto (default %(default)s)",
    )
    parser.add_argument(
        "--allow-download",
        action="store_true",
        help="fetch a Hub model missing from the local cache (off: nothing is"
        " downloaded)",
    )


def require_db(db_path: str | Path) -> None:
    """Raise FileNotFoundError (one line) when the DuckDB file is missing."""
    if not Path(db_path).exists():
        raise FileNotFoundError(f"{db_path}: no such DuckDB file; run `dbt build`")
