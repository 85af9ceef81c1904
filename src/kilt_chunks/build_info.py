"""Versions and settings that determine the chunks, recorded with every build."""

from __future__ import annotations

import os
import re
import shutil
from importlib.metadata import version
from pathlib import Path

import pyarrow as pa

from kilt_chunks.settings import project_path

#: Packages whose versions change chunk boundaries or the output.
RECORDED_PACKAGES = (
    "kilt-chunks",
    "llama-index-core",
    "nltk",
    "tiktoken",
    "rs-bpe",
    "duckdb",
)


_OLD_LAYOUT_FILE = re.compile(r"kilt_chunks_\d+\.parquet")


def prepare_export_dir(export_dir: str) -> Path | None:
    """Create the export folder (parents included).

    Args:
        export_dir: The ``export_dir`` variable; ``""`` means no export. A
            leading ``~`` is the home folder.

    Returns:
        The folder, or None when the export is disabled. Parquet files of the
        first layout (``<export_dir>/kilt_chunks_<i>.parquet``, named by this
        project) are removed, so a glob of ``export_dir`` never mixes builds.

    Raises:
        NotADirectoryError: If ``export_dir`` exists and is not a folder.
    """
    if not export_dir:
        return None
    root = Path(export_dir).expanduser()
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(
            f"export_dir {export_dir!r} is a file, not a folder: set export_dir "
            'to a folder (or "" to skip the export)'
        )
    root.mkdir(parents=True, exist_ok=True)
    for old in root.iterdir():
        if old.is_file() and _OLD_LAYOUT_FILE.fullmatch(old.name):
            old.unlink()
    return root


def replace_folder(partial: Path, target: Path) -> None:
    """Move the finished folder ``partial`` to ``target``, replacing it.

    The previous ``target`` is renamed aside first and deleted only after
    ``partial`` took its place, so at every moment either the old or the new
    folder is whole under ``target`` (two renames within one folder).

    Raises:
        FileNotFoundError: If ``partial`` does not exist.
    """
    if not partial.is_dir():
        raise FileNotFoundError(f"{partial}: no finished export to move into place")
    old = target.with_name(f".{target.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if target.exists():
        target.rename(old)
    partial.rename(target)
    if old.exists():
        shutil.rmtree(old)


def build_info(
    kilt_path: str, splitter: str, chunk_size: int, export_dir: str = ""
) -> dict[str, str]:
    """Describe a build as string key/value pairs (Parquet metadata friendly).

    Args:
        kilt_path: The input the build read (recorded as an absolute path,
            or the ``hf://`` name).
        splitter: ``"fast"`` or ``"llama_index"``.
        chunk_size: Max chunk length in tokens.
        export_dir: Folder of the export ("" when disabled; recorded as an
            absolute path).

    Returns:
        Keys ``kilt_path``, ``export_dir``, ``splitter``, ``chunk_size``,
        ``chunk_overlap``, ``tokenizer`` and ``<package>_version`` for each of
        :data:`RECORDED_PACKAGES` (dashes as underscores).
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
        "splitter": splitter,
        "chunk_size": str(chunk_size),
        "chunk_overlap": "0",
        "tokenizer": "tiktoken cl100k_base (allowed_special=all)",
    }
    for package in RECORDED_PACKAGES:
        info[package.replace("-", "_") + "_version"] = version(package)
    return info


def build_info_table(
    kilt_path: str, splitter: str, chunk_size: int, export_dir: str = ""
) -> pa.Table:
    """:func:`build_info` as a one-row Arrow table of string columns."""
    info = build_info(kilt_path, splitter, chunk_size, export_dir)
    return pa.table({key: [value] for key, value in info.items()})
