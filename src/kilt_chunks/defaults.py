"""The default of every chunking setting, in one place for the package.

The settings that determine the chunks are declared, with their defaults, in
:class:`~kilt_chunks.chunking_settings.ChunkingSettings`; the constants here
are its defaults by name, beside those of the other chunking-step settings.
A build takes its settings from the dbt vars of ``dbt_project.yml``; the
package's functions (usable without dbt) take their defaults from here, and
``tests/python/test_defaults.py`` checks that the two agree, so a changed
default is one edit here and one in ``dbt_project.yml``, or a failing test.
"""

from __future__ import annotations

from kilt_chunks.chunking_settings import DEFAULT_CHUNKING

__all__ = [
    "DBT_VAR_DEFAULTS",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_CHUNK_OVERLAP",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_SPLITTER",
    "DEFAULT_TOKENIZER",
    "DEFAULT_WORKERS",
]

#: Splitter: the fast, exact re-implementation of SentenceSplitter.
DEFAULT_SPLITTER = DEFAULT_CHUNKING.splitter
#: Most tokens per chunk (SPEC rule 6).
DEFAULT_CHUNK_SIZE = DEFAULT_CHUNKING.chunk_size
#: Tokens shared by consecutive chunks of a section (SPEC: none).
DEFAULT_CHUNK_OVERLAP = DEFAULT_CHUNKING.chunk_overlap
#: What counts tokens: LlamaIndex's default tiktoken encoding.
DEFAULT_TOKENIZER = DEFAULT_CHUNKING.tokenizer
#: Chunking worker processes; 0 = one per core.
DEFAULT_WORKERS = 0
#: Sections per batch handed to a chunking worker.
DEFAULT_BATCH_SIZE = 2000

#: The dbt var of each default above (``dbt_project.yml`` ``vars:``).
DBT_VAR_DEFAULTS: dict[str, object] = {
    **DEFAULT_CHUNKING.model_dump(),
    "workers": DEFAULT_WORKERS,
    "batch_size": DEFAULT_BATCH_SIZE,
}
