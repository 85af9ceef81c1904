"""kilt-chunks: section-aware chunks of the KILT Wikipedia knowledge source.

The public API, for use outside dbt (a notebook, a script, another pipeline);
the dbt project calls the same functions:

* sections (SPEC rules 1-5): :func:`page_sections`, :class:`Section`,
  :func:`parse_section_path`, :func:`section_title`, and :func:`chunk_page`
  (sections with their chunks, rules 1-7);
* splitting (SPEC rules 6-7): :func:`get_splitter` returns a :class:`Splitter`
  (``"fast"`` or stock ``"llama_index"``, same chunks), :func:`count_tokens`
  gives LlamaIndex's cl100k_base count, :func:`split_section_batches` splits
  a stream of Arrow section batches in worker processes, and
  :func:`locate_chunks` finds each chunk in its section text;
* page reading: :func:`read_kilt_pages` streams the pages of a KILT JSON
  lines file (plain or gzip) or Parquet as Arrow batches, raising
  :class:`KiltInputError` for input that is not KILT.

Example::

    >>> import kilt_chunks
    >>> page = {"wikipedia_title": "Albedo",
    ...         "text": ["Albedo\\n", "Albedo is a ratio.\\n"]}
    >>> [(s.title, chunks) for s, chunks in
    ...  kilt_chunks.chunk_page(page["wikipedia_title"], page["text"])]
    [('# Albedo', ['Albedo is a ratio.'])]

Names are imported on first use (PEP 562), so ``import kilt_chunks`` stays
cheap for the dbt plugin and for each spawned chunking worker.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Public name -> module that defines it.
_EXPORTS = {
    "Section": "kilt_chunks.build.sections",
    "chunk_page": "kilt_chunks.build.sections",
    "page_sections": "kilt_chunks.build.sections",
    "parse_section_path": "kilt_chunks.build.sections",
    "section_title": "kilt_chunks.build.sections",
    "SPLITTER_NAMES": "kilt_chunks.splitter",
    "Splitter": "kilt_chunks.splitter",
    "count_tokens": "kilt_chunks.splitter",
    "get_splitter": "kilt_chunks.splitter",
    "split_section_batches": "kilt_chunks.build.splitting",
    "locate_chunks": "kilt_chunks.build.spans",
    "KiltInputError": "kilt_chunks.build.loading",
    "read_kilt_pages": "kilt_chunks.build.loading",
}

__all__ = [
    "SPLITTER_NAMES",
    "KiltInputError",
    "Section",
    "Splitter",
    "__version__",
    "chunk_page",
    "count_tokens",
    "get_splitter",
    "locate_chunks",
    "page_sections",
    "parse_section_path",
    "read_kilt_pages",
    "section_title",
    "split_section_batches",
]

if TYPE_CHECKING:
    from kilt_chunks.build.loading import KiltInputError, read_kilt_pages
    from kilt_chunks.build.sections import (
        Section,
        chunk_page,
        page_sections,
        parse_section_path,
        section_title,
    )
    from kilt_chunks.build.spans import locate_chunks
    from kilt_chunks.build.splitting import split_section_batches
    from kilt_chunks.splitter import (
        SPLITTER_NAMES,
        Splitter,
        count_tokens,
        get_splitter,
    )


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kilt_chunks' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
