"""Versions and settings that determine the chunks, recorded with every build."""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib.metadata import version

import pyarrow as pa

from kilt_chunks.chunking_settings import ChunkingSettings
from kilt_chunks.defaults import DEFAULT_TOKENIZER
from kilt_chunks.settings import project_path

__all__ = [
    "RECORDED_PACKAGES",
    "build_info",
    "build_info_table",
]

#: Packages whose versions change chunk boundaries or the output.
RECORDED_PACKAGES = (
    "kilt-chunks",
    "llama-index-core",
    "nltk",
    "tiktoken",
    "rs-bpe",
    "tokenizers",
    "duckdb",
)


def build_info(
    kilt_path: str, settings: ChunkingSettings, export_dir: str = ""
) -> dict[str, str]:
    """Describe a build as string key/value pairs (Parquet metadata friendly).

    Args:
        kilt_path: The input the build read (recorded as an absolute path,
            or the ``hf://`` name).
        settings: The chunking settings the chunks were built with.
        export_dir: Folder of the export ("" when disabled; recorded as an
            absolute path).

    Returns:
        Keys ``kilt_path``, ``export_dir``, then every field of
        :class:`~kilt_chunks.chunking_settings.ChunkingSettings` as
        :meth:`~kilt_chunks.chunking_settings.ChunkingSettings.described`
        gives it (``splitter``, ``chunk_size``, ``chunk_overlap``,
        ``tokenizer``: how tokens were counted), ``token_counting`` (the
        fast splitter's path: ``fast`` for ``cl100k_base``, else
        ``generic``; ``stock`` for the stock splitter)
        and ``<package>_version`` for each of :data:`RECORDED_PACKAGES`
        (dashes as underscores).
    """
    # Absolute (relative ones resolved against the dbt project folder), so
    # `kilt-chunks summary --db` from any folder finds the export.
    kilt_path = project_path(str(kilt_path))
    if "://" not in kilt_path:
        kilt_path = os.path.abspath(os.path.expanduser(kilt_path))
    export_dir = project_path(str(export_dir or ""))
    info = {
        "kilt_path": kilt_path,
        "export_dir": os.path.abspath(os.path.expanduser(export_dir))
        if export_dir
        else "",
        **settings.described(),
        "token_counting": "stock"
        if settings.splitter != "fast"
        else "fast"
        if settings.tokenizer == DEFAULT_TOKENIZER
        else "generic",
    }
    for package in RECORDED_PACKAGES:
        info[package.replace("-", "_") + "_version"] = version(package)
    return info


def build_info_table(info: Mapping[str, str]) -> pa.Table:
    """A build's :func:`build_info` as a one-row Arrow table of string
    columns, in the mapping's key order."""
    return pa.table({key: [value] for key, value in info.items()})
