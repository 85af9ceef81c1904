"""The pages re-anchoring needs, from the old and the new snapshot.

Both snapshots are read with the project's loader
(:func:`kilt_chunks.build.loading.read_kilt_pages`: KILT's
``kilt_knowledgesource.json``, JSON-lines shards, Parquet, ``datasets``
folders), keeping only the pages the task files name, so memory holds the
task's pages, not the corpus. A ``from-dump`` output folder (its
``pages/``) is the usual new snapshot; its ``redirects.parquet`` (columns
``title``, ``target``, ``page_id``, ``wikipedia_title``, ``wikipedia_id``:
a redirect's own title and the page it leads to, resolved up to two hops by
``kilt_chunks.dump.resolve``) lets a page renamed or merged since 2019 be
found by its 2019 title.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kilt_chunks.build.loading import read_kilt_pages
from kilt_chunks.reanchor.evidence import PageText

__all__ = [
    "REDIRECTS_FILE",
    "RedirectsError",
    "Snapshot",
    "find_redirects",
    "load_snapshot",
    "pages_path",
    "title_key",
]

#: The redirects table a ``from-dump`` output folder holds beside ``pages/``.
REDIRECTS_FILE = "redirects.parquet"


def title_key(title: str) -> str:
    """MediaWiki's spelling of a title for lookups: underscores as spaces,
    outer spaces trimmed, the first letter upper-cased (English Wikipedia's
    first-letter case rule)."""
    title = " ".join(title.replace("_", " ").split())
    return title[:1].upper() + title[1:]


def pages_path(path: str | Path) -> Path:
    """The pages of ``path``: ``path/pages`` for a ``from-dump`` output
    folder (it has ``manifest.json`` and ``pages/``), else ``path`` itself."""
    path = Path(path)
    if (
        path.is_dir()
        and (path / "pages").is_dir()
        and (path / "manifest.json").exists()
    ):
        return path / "pages"
    return path


def find_redirects(path: str | Path) -> Path | None:
    """The ``redirects.parquet`` written by ``from-dump`` beside the pages
    ``path`` names (the output folder, or its ``pages/``), or None."""
    path = Path(path)
    for folder in (path, path.parent):
        candidate = folder / REDIRECTS_FILE
        if path.is_dir() and candidate.is_file():
            return candidate
    return None


@dataclass
class Snapshot:
    """Pages by id, with lookups by title and by redirect title."""

    pages: dict[str, PageText] = field(default_factory=dict)
    by_title: dict[str, str] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    redirects_file: Path | None = None

    def candidates(
        self, wikipedia_id: str | None, title: str | None
    ) -> list[tuple[PageText, str]]:
        """The pages that may hold an old page's text, best first.

        Args:
            wikipedia_id: The old page id.
            title: The old page title.

        Returns:
            ``(page, via)`` pairs, at most one per page: the page with the same
            id (``via`` ``"id"``), the page with the same title (``"title"``),
            the page the title redirects to (``"redirect"``).
        """
        out: list[tuple[PageText, str]] = []
        seen: set[str] = set()

        def add(page_id: str | None, via: str) -> None:
            if page_id and page_id in self.pages and page_id not in seen:
                seen.add(page_id)
                out.append((self.pages[page_id], via))

        add(wikipedia_id, "id")
        if title:
            key = title_key(title)
            add(self.by_title.get(key), "title")
            add(self.redirects.get(key), "redirect")
        return out


class RedirectsError(ValueError):
    """A redirects file that cannot be read (the message names it)."""


def _read_redirects(file: Path, titles: set[str]) -> dict[str, str]:
    try:
        table = pq.read_table(file, columns=["title", "wikipedia_id"])
    except (pa.ArrowException, OSError) as error:
        raise RedirectsError(
            f"redirects {file}: not a from-dump redirects table (Parquet with"
            f" columns title and wikipedia_id): {str(error).splitlines()[0]}"
        ) from error
    keys = [title_key(t) for t in table.column("title").to_pylist()]
    out: dict[str, str] = {}
    for key, target in zip(keys, table.column("wikipedia_id").to_pylist(), strict=True):
        if key in titles and target:
            out.setdefault(key, str(target))
    return out


def load_snapshot(
    path: str | Path,
    wikipedia_ids: Iterable[str],
    titles: Iterable[str] = (),
    *,
    redirects_file: Path | None = None,
) -> Snapshot:
    """Read the pages of ``path`` that have one of the ids or titles.

    Args:
        path: Anything :func:`kilt_chunks.build.loading.read_kilt_pages` reads, or a
            ``from-dump`` output folder (its ``pages/`` is read).
        wikipedia_ids: Ids of the pages to keep.
        titles: Titles of pages to keep too (compared by :func:`title_key`),
            directly or through a redirect of ``redirects_file``.
        redirects_file: A ``redirects.parquet`` (``title``,
            ``wikipedia_id``); its redirects from ``titles`` are followed.

    Returns:
        The kept pages (a page whose line the loader rejects is skipped) and
        the title and redirect lookups for ``titles``.

    Raises:
        kilt_chunks.build.loading.KiltInputError: The path cannot be read.
    """
    title_keys = {title_key(t) for t in titles if t}
    redirects = _read_redirects(redirects_file, title_keys) if redirects_file else {}
    wanted_ids = pa.array(
        sorted({str(i) for i in wikipedia_ids} | set(redirects.values()))
    )
    wanted_titles = pa.array(sorted(title_keys), type=pa.string())
    snapshot = Snapshot(redirects=redirects, redirects_file=redirects_file)
    reader = read_kilt_pages(str(pages_path(path)))
    for batch in reader:
        ok = pc.is_null(batch.column("reject_reason"))
        keep = pc.or_(
            pc.is_in(batch.column("wikipedia_id"), value_set=wanted_ids),
            pc.is_in(batch.column("wikipedia_title"), value_set=wanted_titles),
        )
        rows = batch.filter(pc.and_(ok, pc.fill_null(keep, False)))
        if rows.num_rows == 0:
            continue
        for page_id, title, text in zip(
            rows.column("wikipedia_id").to_pylist(),
            rows.column("wikipedia_title").to_pylist(),
            rows.column("text").to_pylist(),
            strict=True,
        ):
            page = PageText(str(page_id), title or "", tuple(text or ()))
            snapshot.pages.setdefault(page.wikipedia_id, page)
            if title:
                snapshot.by_title.setdefault(title_key(title), page.wikipedia_id)
    return snapshot
