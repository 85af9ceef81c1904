"""``kilt-chunks push REPO_ID``: upload a build's export folder (the Hugging
Face dataset: Parquet configs and card) to the Hub."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import duckdb

from kilt_chunks.database import DB_HELP, DatabaseInUseError, connect, default_db

__all__ = ["add_commands", "run_push"]


def _export_dir_of(db_path: str) -> str:
    """The export folder the build recorded (``kilt_build_info``), or
    ``exports`` when the DuckDB file cannot tell."""
    try:
        with connect(db_path, read_only=True, advice="") as con:
            row = con.execute("select export_dir from kilt_build_info").fetchone()
    except (duckdb.Error, DatabaseInUseError):
        return "exports"
    return (row[0] if row else None) or "exports"


def run_push(args: argparse.Namespace) -> str:
    """``kilt-chunks push``: upload the export folder; prints the publisher's
    note (if any) first, returns the line with the dataset's address.

    Raises:
        PushError: If the folder is not a finished export or the upload fails.
    """
    from kilt_chunks.export.publish import publisher_note, push_export

    export_dir = args.export_dir or _export_dir_of(args.db)
    note = publisher_note(export_dir)
    if note:
        print(f"kilt-chunks: {note}", flush=True)
    url = push_export(export_dir, args.repo_id, private=args.private, token=args.token)
    return f"kilt-chunks: uploaded {export_dir} to {url}"


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], str]]:
    """Add ``push`` to the subcommands; returns ``name -> run function``."""
    push = commands.add_parser(
        "push", help="upload the export folder to the Hugging Face Hub"
    )
    push.add_argument("repo_id", help="dataset repository, e.g. user/kilt-chunks")
    push.add_argument(
        "--export-dir",
        help="the export folder (default: the one the build in --db recorded, "
        "else exports)",
    )
    push.add_argument("--db", default=default_db(), help=DB_HELP)
    push.add_argument(
        "--private", action="store_true", help="create the repository private"
    )
    push.add_argument(
        "--token", help="Hub token (default: HF_TOKEN or the saved login)"
    )
    return {"push": run_push}
