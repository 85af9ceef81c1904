"""Command line: the ``kilt-chunks`` entry point, a thin dispatcher.

Each capability adds its own subcommands and returns what runs them
(``add_commands(subparsers) -> {name: run}``, each ``run(args)`` returning the
text to print): the build's report (``summary``, ``stats``), evaluation
(``bm25``, ``eval``), the export (``push``), the dump builder
(``from-dump``, ``compare-pages``), re-anchoring (``reanchor``) and the RAG
stage (``embed``, ``dense``, ``rerank``, ``fuse``, ``utility``, ``udcg``,
``contexts``, ``answer``). Here: the parser, the dispatch, and one line on
stderr (exit code 1) for every error a user can cause.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib.metadata import version

import duckdb

from kilt_chunks.build import report
from kilt_chunks.build.report import (
    IncompleteBuildError,
    NoBuildError,
    build_summary,
    corpus_stats,
    export_line,
)
from kilt_chunks.database import DEFAULT_DB, DatabaseInUseError
from kilt_chunks.dump import command as dump_command
from kilt_chunks.dump.build import DumpBuildError
from kilt_chunks.evaluation import EvaluationError
from kilt_chunks.evaluation import command as evaluation_command
from kilt_chunks.evaluation.bm25 import Bm25Error
from kilt_chunks.export import PushError
from kilt_chunks.export import command as export_command
from kilt_chunks.rag import command as rag_command
from kilt_chunks.rag.models import RagError
from kilt_chunks.reanchor import command as reanchor_command

__all__ = [
    "COMMAND_GROUPS",
    "DEFAULT_DB",
    "IncompleteBuildError",
    "NoBuildError",
    "build_summary",
    "corpus_stats",
    "export_line",
    "main",
]

#: The modules that add subcommands, in the order ``--help`` lists them.
COMMAND_GROUPS = (
    report,
    evaluation_command,
    export_command,
    dump_command,
    reanchor_command,
    rag_command,
)

#: The errors a user can cause: printed as one line, exit code 1.
USER_ERRORS: tuple[type[BaseException], ...] = (
    FileNotFoundError,
    DatabaseInUseError,
    duckdb.Error,
    EvaluationError,
    Bm25Error,
    DumpBuildError,
    ValueError,
    NoBuildError,
    RagError,
    PushError,
)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kilt-chunks`` command.

    Args:
        argv: Arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        Process exit code: 0 on success, 1 when the command cannot run (the
        reason printed in one line on stderr; an incomplete build's summary
        is printed on stdout).
    """
    parser = argparse.ArgumentParser(
        prog="kilt-chunks", description="Section-aware chunks of KILT Wikipedia."
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {version('kilt-chunks')}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    runners = {}
    for group in COMMAND_GROUPS:
        runners.update(group.add_commands(commands))
    args = parser.parse_args(argv)
    try:
        print(runners[args.command](args))
        sys.stdout.flush()
    except IncompleteBuildError as exc:
        print(exc)
        return 1
    except USER_ERRORS as exc:
        print(f"kilt-chunks: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (`kilt-chunks summary | head`): not an error.
        # Point stdout at devnull so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
