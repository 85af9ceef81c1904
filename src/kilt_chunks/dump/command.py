"""The ``from-dump`` and ``compare-pages`` subcommands of ``kilt-chunks``
(their arguments and what they run; :mod:`kilt_chunks.cli` adds them)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["COMMANDS", "add_dump_commands", "run_dump_command"]

COMMANDS = ("from-dump", "compare-pages")


def _alias(text: str) -> tuple[str, int]:
    name, _, key = text.rpartition("=")
    if not name or not key.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=NUMBER")
    return name, int(key)


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
    build.add_argument("dump", nargs="+", type=Path, help="dump file(s), in order")
    build.add_argument("-o", "--out", type=Path, required=True, help="output folder")
    build.add_argument(
        "--index",
        action="append",
        type=Path,
        help="index of each multistream file (default: Wikimedia's name beside it)",
    )
    build.add_argument("--workers", type=int, default=2, help="worker processes")
    build.add_argument(
        "--engine", choices=("pool", "ray"), default="pool", help="process pool or Ray"
    )
    build.add_argument(
        "--ray-address", help="existing Ray cluster (default: a local Ray)"
    )
    build.add_argument("--splits", type=int, help="number of splits (shards)")
    build.add_argument(
        "--split-mb",
        type=float,
        default=32.0,
        help="target split size: compressed MB (multistream) or MB of wikitext",
    )
    build.add_argument(
        "--page-seconds", type=float, default=10.0, help="per-page time limit"
    )
    build.add_argument(
        "--max-page-mb", type=float, default=8.0, help="skip pages with more wikitext"
    )
    build.add_argument(
        "--progress-seconds", type=float, default=30.0, help="seconds between reports"
    )
    build.add_argument(
        "--namespace-alias",
        action="append",
        type=_alias,
        default=[],
        metavar="NAME=NUMBER",
        help="another name of a namespace, e.g. Картинка=6",
    )
    build.add_argument(
        "--redirect-word",
        action="append",
        default=[],
        help="another redirect magic word (without #)",
    )
    build.add_argument(
        "--keep-colon-links",
        action="store_true",
        help="keep links with an unknown prefix: (KILT drops them)",
    )
    build.add_argument(
        "--page-props",
        type=Path,
        metavar="PATH",
        help="the wiki's <wiki>-<date>-page_props.sql.gz: adds wikidata_info"
        " (the wikibase_item Q id) to the pages that have one",
    )
    build.add_argument("--keep-work", action="store_true", help="keep OUT/work/")
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
        from kilt_chunks.dump.build import build_from_dump

        manifest = build_from_dump(
            args.dump,
            args.out,
            indexes=args.index,
            workers=args.workers,
            engine=args.engine,
            ray_address=args.ray_address,
            splits=args.splits,
            split_mb=args.split_mb,
            page_seconds=args.page_seconds,
            max_page_mb=args.max_page_mb,
            progress_seconds=args.progress_seconds,
            keep_work=args.keep_work,
            namespace_aliases=dict(args.namespace_alias),
            redirect_words=tuple(args.redirect_word),
            keep_colon_links=args.keep_colon_links,
            page_props=args.page_props,
        )
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
