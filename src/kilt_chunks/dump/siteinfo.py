"""What a dump says about its wiki: ``<siteinfo>`` (name, base URL, namespaces).

MediaWiki accepts a namespace's canonical English name and a few aliases in
every language (``Image:`` for ``File:``, ``Project:`` for the wiki's own
namespace), and the names and aliases its language file defines; the dump
lists only the local names, so the canonical names and the language's own
(``namespace_aliases.json``, from MediaWiki's ``Messages<Xx>.php``) are
added here. Localized redirect words are not in the dump either: the
``<redirect>`` element of each page is the primary signal, the words below a
fallback for old exports (pass more with ``--redirect-word``).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from urllib.parse import urlsplit

__all__ = [
    "CANONICAL_NAMESPACES",
    "REDIRECT_WORDS",
    "SiteInfo",
    "builtin_namespace_names",
    "parse_siteinfo",
]

#: MediaWiki's canonical namespace names (valid on every wiki).
CANONICAL_NAMESPACES: dict[str, int] = {
    "Media": -2,
    "Special": -1,
    "Talk": 1,
    "User": 2,
    "User talk": 3,
    "Project": 4,
    "Project talk": 5,
    "File": 6,
    "Image": 6,
    "File talk": 7,
    "Image talk": 7,
    "MediaWiki": 8,
    "MediaWiki talk": 9,
    "Template": 10,
    "Template talk": 11,
    "Help": 12,
    "Help talk": 13,
    "Category": 14,
    "Category talk": 15,
    "Portal": 100,
    "Portal talk": 101,
    "Module": 828,
    "Module talk": 829,
}

#: Redirect magic words of some large wikis (MediaWiki's MessagesXx.php);
#: ``#REDIRECT`` works everywhere.
REDIRECT_WORDS: tuple[str, ...] = (
    "REDIRECT",
    "ПРЕНАСОЧВАНЕ",
    "ВИЖ",
    "WEITERLEITUNG",
    "REDIRECTION",
    "RENVOI",
    "REDIRECCIÓN",
    "RINVIA",
    "DOORVERWIJZING",
    "PATRZ",
    "PRZEKIERUJ",
    "PERENAPRAVLENNYA",
    "ПЕРЕНАПРАВЛЕНИЕ",
    "ПЕРЕНАПР",
    "REDIRECIONAMENTO",
    "転送",
    "リダイレクト",
    "重定向",
)

_EXPORT_NS = re.compile(r"^\{[^}]*\}")


@cache
def _builtin_names() -> dict[str, dict]:
    data = files("kilt_chunks.dump").joinpath("namespace_aliases.json")
    languages: dict[str, dict] = json.loads(data.read_text(encoding="utf-8"))[
        "languages"
    ]
    return languages


def builtin_namespace_names(lang: str) -> dict[str, int]:
    """MediaWiki's own namespace names and aliases of a language
    (``namespace_aliases.json``, from MediaWiki's
    ``languages/messages/Messages<Xx>.php``: ``$namespaceNames`` and
    ``$namespaceAliases``), with those of its fallback languages, which
    MediaWiki merges in (``uk`` takes ``ru``'s). They work on every wiki of
    that language though the dump's ``<siteinfo>`` lists only the current
    local names (``[[カテゴリ:...]]`` on jawiki, ``[[Bild:...]]`` on dewiki).

    Returns:
        ``{name: namespace number}`` (empty for a language not in the file).
    """
    languages = _builtin_names()
    names: dict[str, int] = {}
    chain: list[str] = []
    code: str | None = lang.lower()
    while code and code in languages and code not in chain:
        chain.append(code)
        code = languages[code].get("fallback")
    for code in reversed(chain):  # the language's own names win
        names.update(languages[code]["names"])
    return names


@dataclass(frozen=True)
class SiteInfo:
    """A wiki as its dump describes it.

    Attributes:
        sitename: ``<sitename>`` (e.g. ``Wikipedia``, ``Уикипедия``).
        dbname: ``<dbname>`` (``enwiki``, ``bgwiki``), or ``""``.
        base: ``<base>``: URL of the main page.
        lang: The ``xml:lang`` of the export (``en``, ``bg``).
        first_letter: Whether titles are case-insensitive in their first letter.
        namespaces: Namespace number of every name, local and canonical
            (keys compared case-insensitively: stored casefolded).
        xmlns: The export schema's XML namespace (``{...}``), or ``""``.
        redirect_words: Redirect magic words recognised in the text.
        from_dump: False when the dump had no ``<siteinfo>`` (defaults used).
    """

    sitename: str = "Wikipedia"
    dbname: str = ""
    base: str = "https://en.wikipedia.org/wiki/Main_Page"
    lang: str = "en"
    first_letter: bool = True
    namespaces: dict[str, int] = field(default_factory=dict)
    local_names: dict[int, str] = field(default_factory=dict)
    xmlns: str = ""
    redirect_words: tuple[str, ...] = REDIRECT_WORDS
    from_dump: bool = True

    @property
    def server(self) -> str:
        """``https://host`` of the wiki, from ``base``."""
        parts = urlsplit(self.base)
        return f"{parts.scheme or 'https'}://{parts.netloc}"

    def namespace_of(self, prefix: str) -> int | None:
        """The namespace number a title prefix names (``"Категория"`` -> 14),
        or None when the prefix is no namespace of this wiki."""
        return self.namespaces.get(_fold(prefix))

    def revision_url(self, title: str, revid: int | str) -> str:
        """KILT's ``history.url``: the exact revision of a page."""
        from urllib.parse import quote

        return (
            f"{self.server}/w/index.php?title={quote(title.replace(' ', '_'))}"
            f"&oldid={revid}"
        )

    def as_dict(self) -> dict:
        """The fields for the manifest (JSON-ready)."""
        return {
            "sitename": self.sitename,
            "dbname": self.dbname,
            "base": self.base,
            "lang": self.lang,
            "case": "first-letter" if self.first_letter else "case-sensitive",
            "namespaces": {str(k): v for k, v in sorted(self.local_names.items())},
            "from_dump": self.from_dump,
        }


def _fold(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).casefold()


def parse_siteinfo(
    header: str,
    *,
    extra_aliases: dict[str, int] | None = None,
    extra_redirect_words: tuple[str, ...] = (),
) -> SiteInfo:
    """Read ``<siteinfo>`` from the start of a dump.

    Args:
        header: The XML text from ``<mediawiki ...>`` up to (not including)
            the first ``<page>`` (the first stream of a multistream dump).
        extra_aliases: More namespace names (``{"Картинка": 6}``).
        extra_redirect_words: More redirect magic words, without ``#``.

    Returns:
        The wiki's :class:`SiteInfo`; a dump without ``<siteinfo>`` (an
        excerpt made by hand) gets English Wikipedia's defaults and
        ``from_dump=False``.

    Raises:
        ValueError: If ``header`` has no ``<mediawiki>`` root element, or its
            XML is broken (with the line and column).
    """
    start = header.find("<mediawiki")
    if start < 0:
        raise ValueError("not a MediaWiki XML export: no <mediawiki> element")
    try:
        root = ET.fromstring(header[start:] + "</mediawiki>")
    except ET.ParseError as exc:
        line, column = exc.position
        line += header.count("\n", 0, start)
        what = str(exc).rsplit(": line", 1)[0]
        raise ValueError(
            f"broken XML in the header (<siteinfo>): {what}, line {line},"
            f" column {column + 1}"
        ) from None
    m = _EXPORT_NS.match(root.tag)
    xmlns = m.group(0) if m else ""
    lang = root.get("{http://www.w3.org/XML/1998/namespace}lang", "en")
    names = {_fold(k): v for k, v in CANONICAL_NAMESPACES.items()}
    # the language's built-in names, then the dump's own (which win)
    names.update({_fold(k): v for k, v in builtin_namespace_names(lang).items()})
    local: dict[int, str] = {}
    words = REDIRECT_WORDS + tuple(w.upper() for w in extra_redirect_words)
    info = root.find(f"{xmlns}siteinfo")
    if info is None:
        names.update({_fold(k): v for k, v in (extra_aliases or {}).items()})
        return SiteInfo(
            lang=lang,
            namespaces=names,
            local_names={v: k for k, v in CANONICAL_NAMESPACES.items() if v >= 0},
            xmlns=xmlns,
            redirect_words=words,
            from_dump=False,
        )
    for ns in info.iter(f"{xmlns}namespace"):
        key = int(ns.get("key", "0"))
        name = (ns.text or "").strip()
        local[key] = name
        if name:
            names[_fold(name)] = key
    names.update({_fold(k): v for k, v in (extra_aliases or {}).items()})
    case = info.findtext(f"{xmlns}case", "first-letter")
    return SiteInfo(
        sitename=info.findtext(f"{xmlns}sitename", "") or "",
        dbname=info.findtext(f"{xmlns}dbname", "") or "",
        base=info.findtext(f"{xmlns}base", "") or SiteInfo.base,
        lang=lang,
        first_letter=case == "first-letter",
        namespaces=names,
        local_names=local,
        xmlns=xmlns,
        redirect_words=words,
    )
