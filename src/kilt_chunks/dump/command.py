"""The ``from-dump`` and ``compare-pages`` subcommands of ``kilt-chunks``
(their arguments and what they run; :mod:`kilt_chunks.cli` adds them)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from kilt_chunks.dump.request import add_request_arguments, request_from_args

__all__ = ["COMMANDS", "add_dump_commands", "run_dump_command"]

COMMANDS = ("from-dump", "compare-pages")


def add_dump_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``from-dump`` and ``compare-pages`` to the subcommand parsers."""
    build = commands.add_parser(
        "from-dump",
        help="build KILT pages from a Wikipedia (MediaWiki) XML dump",
        description="Turn a MediaWiki XML dump of any wiki and language into a"
        " folder of KILT pages that `dbt build --vars '{kilt_path: OUT/pages/}'`"
        " reads: a multistream dump with its index (read in parallel), its part"
        " files, or a plain .xml/.xml.bz2 (one reader feeds the workers).",
    )
    add_request_arguments(build)
    compare = commands.add_parser(
        "compare-pages",
        help="compare two KILT page files page by page",
        description="Share of the reference's paragraphs (prose, headings, list"
        " items), anchors and category sets found verbatim in the candidate.",
    )
    compare.add_argument("candidate", type=Path, help="pages to judge (file or folder)")
    compare.add_argument(
        "reference", type=Path, help="reference pages (file or folder)"
    )
    compare.add_argument("--json", type=Path, help="also write the report as JSON")
    compare.add_argument(
        "--examples", type=int, default=0, help="show this many missing paragraphs"
    )


def run_dump_command(args: argparse.Namespace) -> str:
    """Run ``from-dump`` or ``compare-pages``; return what to print.

    Raises:
        kilt_chunks.dump.DumpBuildError: If the build cannot run.
        FileNotFoundError: If a page file to compare does not exist.
    """
    if args.command == "from-dump":
        from kilt_chunks.dump.build import run_request

        request = request_from_args(args)
        manifest = run_request(request)
        skipped = ", ".join(f"{k} {v:,}" for k, v in manifest["skipped"].items())
        wikidata = manifest.get("wikidata")
        with_ids = (
            f" ({wikidata['pages_with_wikidata_id']:,} with a Wikidata id)"
            if wikidata
            else ""
        )
        return (
            f"kilt-chunks: {manifest['pages']:,} pages{with_ids} in"
            f" {len(manifest['shards'])} shards under {args.out / 'pages'}"
            f" (skipped: {skipped or 'none'});"
            f" next: dbt build --vars '{{kilt_path: {args.out / 'pages'}/}}'"
        )
    from kilt_chunks.dump.compare import compare_page_files, format_comparison

    for path in (args.candidate, args.reference):
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or folder")
    report = compare_page_files(args.candidate, args.reference, examples=args.examples)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), "utf-8")
    return format_comparison(report)


def add_commands(
    commands: argparse._SubParsersAction,
) -> dict[str, Callable[[argparse.Namespace], str]]:
    """Add ``from-dump`` and ``compare-pages``; returns ``name -> run function``."""
    add_dump_commands(commands)
    return dict.fromkeys(COMMANDS, run_dump_command)
