"""SPEC section rules 1-5 for one KILT page, in plain Python.

The dbt models apply the same rules in SQL over millions of pages; this module
is the same contract for a notebook, a script or a test, and the end-to-end
tests check that both give the same sections and chunks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kilt_chunks.build.splitting import split_section
from kilt_chunks.defaults import DEFAULT_CHUNK_SIZE, DEFAULT_SPLITTER

__all__ = [
    "BULLET_MARKER",
    "HEADER_MARKER",
    "Section",
    "chunk_page",
    "page_sections",
    "parse_section_path",
    "section_title",
]

HEADER_MARKER = "Section::::"
BULLET_MARKER = "BULLET::::"

# A level ends at a ':' directly after '.', '?' or '!'.
_LEVEL_END = re.compile(r"(?<=[.?!]):")


@dataclass(frozen=True)
class Section:
    """One kept section of a page.

    Attributes:
        section_path: Level names; ``[]`` for the lead.
        section_order: 0-based rank among the page's kept sections.
        num_sections: Number of kept sections of the page.
        title: Markdown heading path (SPEC rule 5).
        text: Paragraphs concatenated, bullet markers removed (SPEC rule 3).
        start_paragraph_id: KILT index of the first text paragraph.
        end_paragraph_id: KILT index of the last text paragraph.
    """

    section_path: list[str]
    section_order: int
    num_sections: int
    title: str
    text: str
    start_paragraph_id: int
    end_paragraph_id: int


def parse_section_path(header: str) -> list[str]:
    """Parse a header paragraph into its section path.

    Args:
        header: A paragraph starting with ``Section::::``, e.g.
            ``"Section::::History.:Typographic variants.\\n"``.

    Returns:
        Level names, e.g. ``["History", "Typographic variants"]``: levels split
        at every ``:`` right after ``.``, ``?`` or ``!``; one trailing ``.``
        removed from each level; nothing else trimmed.

    Raises:
        ValueError: If ``header`` does not start with ``Section::::``.
    """
    if not header.startswith(HEADER_MARKER):
        raise ValueError(f"not a header paragraph: {header[:40]!r}")
    body = header[len(HEADER_MARKER) :]
    if body.endswith("\n"):
        body = body[:-1]
    return [
        level[:-1] if level.endswith(".") else level for level in _LEVEL_END.split(body)
    ]


def section_title(wikipedia_title: str, section_path: Sequence[str]) -> str:
    """Markdown heading path of a section (SPEC rule 5).

    Args:
        wikipedia_title: Page title.
        section_path: Level names.

    Returns:
        ``"# " + title`` then, per level k (1-based), ``"\\n" + "#" * (k + 1) +
        " " + level``.
    """
    parts = ["# " + wikipedia_title]
    parts += [
        "\n" + "#" * (depth + 1) + " " + level
        for depth, level in enumerate(section_path, start=1)
    ]
    return "".join(parts)


def page_sections(wikipedia_title: str, paragraphs: Sequence[str]) -> list[Section]:
    """Cut a KILT page into its kept sections (SPEC rules 1-5).

    Args:
        wikipedia_title: Page title.
        paragraphs: The page's KILT ``text`` list; ``paragraphs[0]`` is the
            title line and is never body text.

    Returns:
        Kept sections in page order (empty when only the title line or blank
        sections remain).
    """
    raw: list[tuple[list[str], list[str], list[int]]] = []
    current: tuple[list[str], list[str], list[int]] = ([], [], [])
    for paragraph_id, paragraph in enumerate(paragraphs):
        if paragraph_id == 0:
            continue
        if paragraph.startswith(HEADER_MARKER):
            raw.append(current)
            current = (parse_section_path(paragraph), [], [])
            continue
        if paragraph.startswith(BULLET_MARKER):
            paragraph = paragraph[len(BULLET_MARKER) :]
        current[1].append(paragraph)
        current[2].append(paragraph_id)
    raw.append(current)
    joined = [(path, "".join(texts), ids) for path, texts, ids in raw]
    kept = [(path, text, ids) for path, text, ids in joined if text.strip()]
    return [
        Section(
            section_path=path,
            section_order=order,
            num_sections=len(kept),
            title=section_title(wikipedia_title, path),
            text=text,
            start_paragraph_id=ids[0],
            end_paragraph_id=ids[-1],
        )
        for order, (path, text, ids) in enumerate(kept)
    ]


def chunk_page(
    wikipedia_title: str,
    paragraphs: Sequence[str],
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    splitter: str = DEFAULT_SPLITTER,
) -> list[tuple[Section, list[str]]]:
    """Sections of a page with their chunks (SPEC rules 1-7).

    Args:
        wikipedia_title: Page title.
        paragraphs: The page's KILT ``text`` list.
        chunk_size: Max chunk length in tokens.
        splitter: ``"fast"`` or ``"llama_index"``.

    Returns:
        ``(section, chunks)`` pairs in page order.
    """
    return [
        (section, split_section(section.text, chunk_size, splitter))
        for section in page_sections(wikipedia_title, paragraphs)
    ]
