"""The chunking options besides the chunk size: overlap and tokenizer.

Defaults are defined here once (:data:`DEFAULT_CHUNK_OVERLAP`,
:data:`DEFAULT_TOKENIZER`) and imported everywhere else. A tokenizer is named
by a string, the dbt variable ``tokenizer``:

* ``"cl100k_base"`` (the default): LlamaIndex's own ``get_tokenizer()``
  (tiktoken ``cl100k_base``, ``allowed_special="all"``), counted by the fast
  splitter with rs-bpe (:mod:`kilt_chunks.splitter.tokens`);
* any other tiktoken encoding name (``"o200k_base"``, ...), loaded from the
  local tiktoken cache only (``TIKTOKEN_CACHE_DIR``, ``DATA_GYM_CACHE_DIR``,
  tiktoken's default folder, then the cache LlamaIndex bundles, which holds
  ``cl100k_base`` and ``o200k_base``); never downloaded. Counted as
  ``len(enc.encode(text, allowed_special="all"))``, as LlamaIndex's
  ``get_tokenizer()`` counts;
* a path to a Hugging Face ``tokenizer.json`` file (the ``tokenizers``
  library): the count is ``len(tokenizer.encode(text,
  add_special_tokens=False).ids)``, the text's own tokens without the
  special tokens a model adds around a sequence (``[CLS]``, ``[SEP]``, ...).

The same function counts for the stock splitter (``SentenceSplitter(tokenizer=
...)``) and for the fast one, so both give the same chunks.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from typing import Any

from kilt_chunks.defaults import DEFAULT_CHUNK_OVERLAP, DEFAULT_TOKENIZER

__all__ = [
    "DEFAULT_CHUNK_OVERLAP",
    "DEFAULT_TOKENIZER",
    "check_chunk_overlap",
    "describe_tokenizer",
    "is_tokenizer_file",
    "load_tiktoken_encoding",
    "tokenizer_label",
    "tokenizer_function",
    "tokenizer_problem",
]

# DEFAULT_CHUNK_OVERLAP (0: the SPEC corpus) and DEFAULT_TOKENIZER
# (LlamaIndex's default) live with the other defaults (kilt_chunks.defaults).


def check_chunk_overlap(chunk_overlap: object, chunk_size: int) -> None:
    """Raise ``ValueError`` unless ``0 <= chunk_overlap < chunk_size`` (an ``int``,
    not a ``bool``), naming the values. (LlamaIndex itself accepts
    ``chunk_overlap == chunk_size``; such chunks can repeat without end, so it
    is refused here.)"""
    if isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int):
        raise ValueError(f"chunk_overlap must be an int, got {chunk_overlap!r}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(
            f"chunk_overlap must be at least 0 and below chunk_size ({chunk_size}),"
            f" got {chunk_overlap}"
        )


def is_tokenizer_file(tokenizer: str) -> bool:
    """True when ``tokenizer`` names a file (a ``tokenizer.json`` path) rather
    than a tiktoken encoding: it holds a path separator or ends in ``.json``."""
    return os.sep in tokenizer or "/" in tokenizer or tokenizer.endswith(".json")


def _tiktoken_cache_dirs() -> list[str]:
    """Folders searched for tiktoken encodings, in order: the user's cache
    (as tiktoken finds it) and the one LlamaIndex bundles."""
    import importlib.util
    import tempfile

    dirs = []
    for name in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(name):
            dirs.append(os.environ[name])
            break
    else:
        dirs.append(os.path.join(tempfile.gettempdir(), "data-gym-cache"))
    spec = importlib.util.find_spec("llama_index.core")
    if spec is not None and spec.submodule_search_locations:
        root = list(spec.submodule_search_locations)[0]
        dirs.append(os.path.join(root, "_static", "tiktoken_cache"))
    return dirs


@functools.lru_cache(maxsize=8)
def load_tiktoken_encoding(name: str) -> Any:
    """The tiktoken encoding ``name``, from the local cache only.

    Raises:
        ValueError: ``name`` is not a tiktoken encoding, or its file is in none
            of the cache folders (nothing is downloaded), naming the folders.

    Source: ``tiktoken.load.read_file_cached`` (the cache file is the SHA-1 of
    the download address); tiktoken's download function is replaced, while
    loading, by one that refuses.
    """
    import tiktoken
    import tiktoken.load

    if name not in tiktoken.list_encoding_names():
        known = ", ".join(sorted(tiktoken.list_encoding_names()))
        raise ValueError(
            f"tokenizer {name!r} is neither a tiktoken encoding ({known}) nor a "
            "tokenizer.json path"
        )
    dirs = _tiktoken_cache_dirs()

    def refuse(blobpath: str) -> bytes:
        raise FileNotFoundError(blobpath)

    saved_env = os.environ.get("TIKTOKEN_CACHE_DIR")
    saved_read = tiktoken.load.read_file
    tiktoken.load.read_file = refuse
    try:
        for folder in dirs:
            os.environ["TIKTOKEN_CACHE_DIR"] = folder
            try:
                return tiktoken.get_encoding(name)
            except FileNotFoundError:
                continue
    finally:
        tiktoken.load.read_file = saved_read
        if saved_env is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved_env
    raise ValueError(
        f"tiktoken encoding {name!r} is not in the local tiktoken cache "
        f"({', '.join(dirs)}); nothing is downloaded: put it in TIKTOKEN_CACHE_DIR"
    )


@functools.lru_cache(maxsize=8)
def _hf_tokenizer(path: str) -> Any:
    """The ``tokenizers.Tokenizer`` of a ``tokenizer.json`` file."""
    from tokenizers import Tokenizer

    if not os.path.isfile(path):
        raise ValueError(f"tokenizer file {path!r} does not exist")
    try:
        hf = Tokenizer.from_file(path)
    except Exception as exc:  # the library raises plain Exception
        raise ValueError(
            f"tokenizer file {path!r} is not a Hugging Face tokenizer.json: {exc}"
        ) from exc
    # Count the whole text, whatever truncation or padding the file sets.
    hf.no_truncation()
    hf.no_padding()
    return hf


def tokenizer_function(tokenizer: str) -> Callable[[str], list[Any]] | None:
    """The tokenizer callable SentenceSplitter counts with (``len(f(text))``).

    Args:
        tokenizer: See the module docstring.

    Returns:
        None for :data:`DEFAULT_TOKENIZER` (LlamaIndex's own default,
        ``get_tokenizer()``), else ``f(text) -> list`` of token ids.

    Raises:
        ValueError: As :func:`load_tiktoken_encoding`, or the file is missing
            or not a tokenizer.json.
    """
    if tokenizer == DEFAULT_TOKENIZER:
        return None
    if is_tokenizer_file(tokenizer):
        hf = _hf_tokenizer(tokenizer)

        def encode_ids(text: str) -> list[int]:
            ids: list[int] = hf.encode(text, add_special_tokens=False).ids
            return ids

        return encode_ids
    return functools.partial(
        load_tiktoken_encoding(tokenizer).encode, allowed_special="all"
    )


def _file_digest(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def describe_tokenizer(tokenizer: str) -> str:
    """How chunk sizes were counted, for ``kilt_build_info``, the card and the
    checkpoint fingerprint: ``"tiktoken cl100k_base (allowed_special=all)"``,
    or ``"tokenizers file /abs/tokenizer.json sha256:<hex> (no special
    tokens)"`` (the digest, so a changed file never resumes a checkpoint)."""
    if is_tokenizer_file(tokenizer):
        path = os.path.abspath(os.path.expanduser(tokenizer))
        digest = _file_digest(path) if os.path.isfile(path) else "missing"
        return f"tokenizers file {path} sha256:{digest} (no special tokens)"
    return f"tiktoken {tokenizer} (allowed_special=all)"


def tokenizer_label(tokenizer: str) -> str:
    """A short name of a tokenizer for titles and table rows: the tiktoken
    encoding (``"o200k_base"``), or a ``tokenizer.json`` as its folder and
    file name (``"bge-small-en/tokenizer.json"``, the folder usually naming
    the model).

    Args:
        tokenizer: The setting (a name or a path) or its
            :func:`describe_tokenizer` text (as ``kilt_build_info`` holds it).
    """
    text = tokenizer.strip()
    if text.startswith("tiktoken "):
        return text.split()[1]
    if text.startswith("tokenizers file "):
        text = text.removeprefix("tokenizers file ").rsplit(" sha256:", 1)[0]
    elif not is_tokenizer_file(text):
        return text
    parts = text.replace("\\", "/").rstrip("/").split("/")
    return "/".join(part for part in parts[-2:] if part)


def tokenizer_problem(tokenizer: object) -> str | None:
    """What is wrong with a ``tokenizer`` setting, or None (the settings
    check, before anything is read): the tokenizer is loaded as the chunking
    will load it (:func:`tokenizer_function`: a ``tokenizer.json`` must parse,
    a tiktoken encoding must be in the local cache), so a broken file stops
    the build here in one line, not after the input is loaded and sectioned.
    Cheap after the first call (cached)."""
    if not isinstance(tokenizer, str) or not tokenizer:
        return "must be a tiktoken encoding name or a tokenizer.json path"
    if tokenizer == DEFAULT_TOKENIZER:
        return None
    if is_tokenizer_file(tokenizer):
        if not os.path.isfile(os.path.expanduser(tokenizer)):
            return "no such tokenizer.json file"
        try:
            tokenizer_function(os.path.expanduser(tokenizer))
        except ValueError as exc:
            return " ".join(str(exc).split())
        return None
    import tiktoken

    if tokenizer not in tiktoken.list_encoding_names():
        known = ", ".join(sorted(tiktoken.list_encoding_names()))
        return f"is neither a tiktoken encoding ({known}) nor a tokenizer.json path"
    try:
        load_tiktoken_encoding(tokenizer)
    except ValueError as exc:
        return str(exc)
    return None
