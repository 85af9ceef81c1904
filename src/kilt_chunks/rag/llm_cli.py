"""Registers the LLM-measure commands (``utility``, ``udcg``, ``contexts``,
``answer``) on the ``kilt-chunks`` CLI; each command's parser and run
function live in its own module. torch and transformers are imported only
when a command runs."""

from __future__ import annotations

__all__ = ["add_llm_commands"]

import argparse
from collections.abc import Callable
from typing import Any

from kilt_chunks.rag import answer, contexts, udcg, utility


def add_llm_commands(
    commands: Any, default_db: str
) -> dict[str, Callable[[argparse.Namespace], str]]:
    """Add the four subcommands; returns ``name -> run function``."""
    utility.add_parser(commands, default_db)
    udcg.add_parser(commands)
    contexts.add_parser(commands, default_db)
    answer.add_parser(commands)
    return {
        "utility": utility.run,
        "udcg": udcg.run,
        "contexts": contexts.run,
        "answer": answer.run,
    }
