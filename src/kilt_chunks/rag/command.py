"""The RAG commands: ``embed``, ``dense``, ``rerank``, ``fuse`` (retrieval)
and ``utility``, ``udcg``, ``contexts``, ``answer`` (the LLM measures)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from kilt_chunks.database import default_db
from kilt_chunks.rag import dense, embed, fuse, rerank
from kilt_chunks.rag.llm_cli import add_llm_commands

__all__ = ["add_commands"]


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], str]]:
    """Add the eight RAG subcommands; returns ``name -> run function``."""
    runners: dict[str, Callable[[argparse.Namespace], str]] = {}
    for name, module in {
        "embed": embed,
        "dense": dense,
        "rerank": rerank,
        "fuse": fuse,
    }.items():
        module.add_parser(commands)
        runners[name] = module.run
    runners.update(add_llm_commands(commands, default_db()))
    return runners
