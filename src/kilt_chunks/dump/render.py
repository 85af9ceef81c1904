"""Wikitext to a KILT page: paragraphs, ``Section::::`` paths, ``BULLET::::``
items, anchors with offsets, categories and history.

Our own code (MIT) on mwparserfromhell, written to the rules that
WikiExtractor 2.75 with ``-s --lists -l`` applies (the extractor behind KILT;
read for its rules, not copied: it is GPL), with KILT's joined headings. In
order:

1. The page is parsed by mwparserfromhell (``skip_style_tags``: bold and
   italics stay text and are handled by step 2, as 2.75 does with regular
   expressions). Templates, parser functions, template arguments, comments,
   tables and the elements 2.75 discards (``ref``, ``gallery``, ``small``,
   ``sub``, ``sup``, ``div``, HTML lists, ...) are dropped, their content
   with them; the white space around them stays. ``<math>`` becomes
   ``formula_N`` and ``<code>`` ``codice_N`` (N counting from 1 in the page);
   other tags keep their content. Entities become characters.
2. Links: ``[[target|label]]`` keeps the label (the text after the last
   ``|``, stripped; the target when there is no ``|``) and records an anchor
   whose ``href`` is 2.75's ``quote()`` of the target. Links into a namespace
   (``File:``, ``Категория:``, localized names and canonical aliases) and
   interlanguage links (``fr:``) leave nothing; category links become the
   page's categories. External links keep their label (bare URLs stay).
   ``'''''x'''''`` and ``'''x'''`` become ``x``; ``''x''`` becomes ``"x"``.
3. 2.75's clean-up: tabs to spaces, runs of spaces to one, ``....`` to
   ``...``, lines of punctuation only dropped, ``,,`` -> ``,``, ``,.`` -> ``.``.
4. 2.75's ``compact()`` line rules: a heading is pending until content
   comes, then every pending level is printed, one ``Section::::`` line per
   level, carrying (KILT's form) the path of all open levels joined by
   ``:``, each title ending in ``.`` unless it ends in ``!`` or ``?``; list
   lines become ``BULLET::::- x`` or, for ``#`` items, ``BULLET::::N. x``
   (N counting the items of that list); lines starting with ``:``
   (indentation) are dropped; lines starting with ``{``, ``|`` or ending in
   ``}`` (table residue), ``(...)`` lines, lines of ``.``/``-`` only, and
   lines starting with a space after a section's first line are dropped.

Speed: most of mwparserfromhell's time goes to building its node tree (its
C tokenizer is fast; the tree is built in Python), so the nodes that would
only be turned back into text are kept from it, with the same output
(tests/python/test_dump_render_fastpath.py compares with the parser alone):
plain links (``[[target]]``, ``[[target|label]]`` without markup, ``:`` or
an open ``[`` before them, outside ``nowiki``/``pre``/``math``/...) become
anchor markers by a regular expression before parsing, and list marks at
the start of lines and the first ``=`` of headings whose title is plain
text are hidden from the parser behind stand-in characters and put back
after it. The regular expressions start with a literal where they can (the
engine then looks for it first), and link targets are quoted by one
``str.translate`` of their UTF-8 bytes.

2.75's quirks, decided (documented in docs/dump.md): a link whose target has
a ``prefix:`` that is neither a namespace nor ``w:``/``wikt:``
(``[[Star Wars: Episode IV|...]]``) leaves nothing, as in 2.75 and so in
KILT (``keep_colon_links=True`` keeps its label and anchor instead); lines
starting with ``:`` are dropped, as in 2.75 and KILT; magic words such as
``{{CURRENTYEAR}}`` are dropped with the templates (2.75 printed the year of
the run: not reproducible); anchor markup is never kept inside headings.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import mwparserfromhell
from mwparserfromhell.definitions import PARSER_BLACKLIST
from mwparserfromhell.nodes import (
    Argument,
    Comment,
    ExternalLink,
    Heading,
    HTMLEntity,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.wikicode import Wikicode

from kilt_chunks.dump.siteinfo import SiteInfo
from kilt_chunks.dump.xmlpages import RawPage

__all__ = ["normalize_title", "render_page", "render_wikitext"]

#: Elements dropped with their content: WikiExtractor 2.75's discardElements
#: but ``div`` (Wikipedia shows the text of a ``<div>``, so it is kept as the
#: content of any other tag is; tables, templates and lists inside it still
#: go by their own rules).
#: Version of the rendering rules: raised whenever the text rendered from any
#: page changes (shard bytes), so that an output folder finished by another
#: version is not returned as done (part of ``DumpRequest.reuse_key``).
#: 2: text inside <div> kept, URLs end at any Unicode space, no stray quotes.
RENDERER_VERSION = 2

DISCARD = frozenset(
    (
        "gallery timeline noinclude pre table tr td th caption form input"
        " select option textarea ul li ol dl dt dd menu dir ref references img"
        " imagemap source small sub sup indicator"
    ).split()
)
#: Elements replaced by a numbered placeholder.
PLACEHOLDERS = {"math": "formula", "code": "codice"}
#: Interwiki prefixes whose links 2.75 keeps.
KEPT_INTERWIKI = frozenset(("w", "wikt", "wiktionary"))
_SELF_CLOSING = frozenset(("br", "hr", "nobr", "ref", "references", "nowiki"))
_LANG_PREFIX = re.compile(r"^[a-z]{2,3}(-[a-z]+)*$")

# Anchor markers in the flat text: OPEN <number> MID label CLOSE.
OPEN, MID, CLOSE = "\ue000", "\ue001", "\ue002"
# List marks at the start of a line, hidden from the parser (it would make
# each a Tag node, which the renderer turns back into the same character)
# and put back in the flat text.
_HIDDEN_MARKS = {"*": "\ue003", "#": "\ue004", ":": "\ue005", ";": "\ue006"}
_HIDE_MARKS = str.maketrans(_HIDDEN_MARKS)
# (after a "\n": the text is given one in front, which lets the engine look
# for the "\n" alone; "^" with re.M was 2.5 times slower)
_LIST_MARKS = re.compile(r"\n[*#:;]+")
# Likewise the first "=" of a heading line whose title is plain text (no
# markup, no anchor marker, nothing after its closing "="): the parser would
# make it a Heading node that the renderer turns back into the same line
# (levels on both sides unequal included: the extra "=" are in the title).
_HEADING_STAND_IN = "\ue007"
_HIDDEN_MARKS["="] = _HEADING_STAND_IN
_PLAIN_HEADING = re.compile(r"\n=(?==*[^=\n<>\[\]{}&\ue000-\ue002]*=+$)", re.M)
_MARKER = re.compile(f"{OPEN}(\\d+){MID}|{CLOSE}")
_ANY_MARKER = re.compile(f"{OPEN}\\d+{MID}|{CLOSE}")

_BOLD_ITALIC = re.compile(r"'''''(.*?)'''''")
_BOLD = re.compile(r"'''(.*?)'''")
_ITALIC_QUOTE = re.compile(r"''\"([^\"]*?)\"''")
_ITALIC = re.compile(r"''(.*?)''")
_QUOTE_QUOTE = re.compile(r'""([^"]*?)""')
_SPACES = re.compile(r"   *")  # two or more (a literal start: 5x " {2,}")
_DOTS = re.compile(r"\.{4,}")
_PUNCT_LINE = re.compile(r"\n\W+?\n")
_SWITCHES = re.compile(
    r"__(?:NOTOC|FORCETOC|TOC|NOEDITSECTION|NEWSECTIONLINK|NONEWSECTIONLINK"
    r"|NOGALLERY|HIDDENCAT|NOCONTENTCONVERT|NOCC|NOTITLECONVERT|NOTC|START|END"
    r"|INDEX|NOINDEX|STATICREDIRECT|DISAMBIG|EXPECTUNUSEDCATEGORY)__"
)
_SECTION = re.compile(r"(==+)\s*(.*?)\s*\1")
# Dropped before parsing (as 2.75 drops them first), which spares the parser
# the citation templates inside references: comments, then <ref .../> and
# <ref ...>...</ref> (references do not nest).
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_REF = re.compile(r"<ref\b[^>]*?/>|<ref\b[^>]*>.*?</ref\s*>", re.S | re.I)
# Templates, then tables, innermost first, as 2.75's dropNested("{{", "}}")
# and dropNested("{|", "|}") drop them.
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
# MediaWiki ends the URL of an external link at any space character
# (Parser::EXT_LINK_URL_CLASS excludes \p{Zs}); mwparserfromhell only at an
# ASCII one: the space after such a URL is made an ASCII space.
_WIDE_SPACES = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_URL_THEN_WIDE_SPACE = re.compile(
    rf"(\[(?:[a-z][a-z0-9+.-]*:)?//[^\s\[\]<>\"{_WIDE_SPACES}]+)[{_WIDE_SPACES}]",
    re.I,
)
_WIDE_SPACE = re.compile(f"[{_WIDE_SPACES}]")
# Bold or italics around nothing (what a dropped template or interlanguage
# link inside italics leaves): removed, not turned into "".
_EMPTY_QUOTES = re.compile(r"(?<!')('{2,5})(\s*)\1(?!')")
_TABLE = re.compile(r"\{\|(?:(?!\{\|).)*?\|\}", re.S)


# The fast path for plain links (see _Renderer.plain_links): a [[target]] or
# [[target|label]] with no markup, no namespace and no second "|", not
# inside [...] brackets; and the tags whose content mwparserfromhell does
# not parse (a link there is text), on pages that the fast path then skips.
# (the "not after a [" test comes after the "[[": a pattern that starts with
# a literal is searched for that literal first, 5 times faster here)
_PLAIN_LINK = re.compile(
    r"\[\[(?<!\[\[\[)([^\[\]{}<>&|:\n]*)(?:\|([^\[\]{}<>&|\n]*))?\]\](?!\])"
)
# From such a tag to its first closing tag (or the end of the text): a
# stretch that holds every place where the parser leaves the tag's content
# as text (its content ends at the first closing tag; unclosed, the tag is
# text and so is nothing after it: a larger stretch is only slower).
_UNPARSED = re.compile(
    r"<\s*("
    + "|".join(sorted(PARSER_BLACKLIST, key=len, reverse=True))
    + r")\b.*?(?:</\s*\1\s*>|\Z)",
    re.I | re.S,
)


def _drop_nested(text: str) -> str:
    for opener, pattern in (("{{", _TEMPLATE), ("{|", _TABLE)):
        while opener in text:
            text, n = pattern.subn("", text)
            if not n:
                break
    return text


def normalize_title(title: str, first_letter: bool = True) -> str:
    """A link target as MediaWiki names the page: no ``#fragment``,
    underscores and runs of white space as one space, first letter upper
    case on ``first-letter`` wikis."""
    title = title.split("#", 1)[0]
    title = " ".join(title.replace("_", " ").split())
    if first_letter and title:
        title = title[0].upper() + title[1:]
    return title


# urllib's quote() of each byte value, so that quoting a UTF-8 string is one
# str.translate of its bytes read as Latin-1 (the same string as quote() of
# the bytes, built from quote() itself; measured 3 times faster on the
# English test dump's link targets).
_QUOTED_BYTE = [quote(bytes([b])) for b in range(256)]


def _href(target: str, first_letter: bool) -> tuple[str, str]:
    """``(href, normalized title)`` of a link target (2.75's ``quote()`` of
    its UTF-8)."""
    quoted = target.encode("utf-8").decode("latin-1").translate(_QUOTED_BYTE)
    return quoted, normalize_title(target, first_letter)


class _Renderer:
    """State of one page's rendering (anchors, categories, placeholders)."""

    def __init__(self, site: SiteInfo, keep_colon_links: bool = False) -> None:
        self.site = site
        self.keep_colon_links = keep_colon_links
        self.hrefs: list[tuple[str, str]] = []  # (href, normalized target)
        self.href_of: dict[str, tuple[str, str]] = {}  # the page's targets
        self.categories: list[str] = []
        self.counters = {"formula": 0, "codice": 0}

    def code(self, code: Wikicode | None) -> str:
        if code is None:
            return ""
        return "".join([self.node(n) for n in code.nodes])

    def node(self, node: Any) -> str:  # noqa: C901 - one dispatch
        if isinstance(node, Text):
            return node.value
        if isinstance(node, Wikilink):
            return self.link(node)
        if isinstance(node, Template | Argument | Comment):
            return ""
        if isinstance(node, HTMLEntity):
            try:
                return node.normalize()
            except ValueError:
                return str(node)
        if isinstance(node, ExternalLink):
            if node.brackets:
                return _ANY_MARKER.sub("", self.code(node.title)) if node.title else ""
            return self.code(node.url)
        if isinstance(node, Heading):
            title = _ANY_MARKER.sub("", self.code(node.title))
            marks = "=" * node.level
            return f"{marks}{title}{marks}"
        if isinstance(node, Tag):
            return self.tag(node)
        return str(node)

    def tag(self, node: Tag) -> str:
        markup = node.wiki_markup
        name = str(node.tag).strip().lower()
        if markup:
            if markup in ("*", "#", ":", ";"):
                return markup
            if markup.startswith("{|") or name == "table":
                return ""
            if name == "hr":
                return ""
            return self.code(node.contents)
        if name in PLACEHOLDERS:
            kind = PLACEHOLDERS[name]
            self.counters[kind] += 1
            return f"{kind}_{self.counters[kind]}"
        if name in DISCARD:
            return ""
        if node.self_closing or name in _SELF_CLOSING and not node.contents:
            return ""
        if name == "nowiki":
            return str(node.contents) if node.contents is not None else ""
        return self.code(node.contents)

    def plain_links(self, text: str) -> str:
        """Render the plain links of ``text`` before parsing, in text order.

        mwparserfromhell would parse each into a Wikilink whose title and
        label are one Text node each, and :meth:`link` would turn it into
        the same anchor marker: doing it with one regular expression spares
        the parser's tree building, most of its time. Same output (the
        shard bytes of the bundled dumps are compared in the tests): a
        marker where a link was is rendered as a link would be in every
        context (dropped with discarded elements, stripped from headings and
        labels); only the anchor numbers differ, and they order anchors
        only between equal offsets, which dropped markers never reach.
        Links with a ``:`` go to the parser (categories keep their order),
        and so do the links between a tag whose content the parser leaves
        as text (``nowiki``, ``pre``, ``math``, ...) and its closing tag (a
        plain link holds no ``<``, so none crosses such a stretch), and the
        links after a ``[`` not yet closed by a ``]`` (inside a link or an
        external link, where the parser may not make them links).
        """
        if "[[" not in text:
            return text
        unparsed = [m.span() for m in _UNPARSED.finditer(text)]
        u = 0  # the first stretch that does not end before the link
        out: list[str] = []
        cur = 0
        rfind, find, anchor = text.rfind, text.find, self.anchor
        for m in _PLAIN_LINK.finditer(text):
            start = m.start()
            while u < len(unparsed) and unparsed[u][1] <= start:
                u += 1
            if u < len(unparsed) and unparsed[u][0] <= start:
                continue  # inside a tag the parser leaves as text
            # inside an open [ or [[ (a link's title or label, an external
            # link's URL) the parser may not make it a link: left to it
            before = rfind("[", 0, start)
            if before >= 0 and find("]", before, start) < 0:
                continue
            title, label = m.groups()
            target = title.strip()
            if not target:
                continue
            out.append(text[cur:start])
            out.append(anchor(target, title if label is None else label.strip()))
            cur = m.end()
        out.append(text[cur:])
        return "".join(out)

    def anchor(self, target: str, label: str) -> str:
        """The marker of a link to ``target`` showing ``label`` (nothing
        when the label is empty), recording its href and target."""
        if OPEN in label or CLOSE in label:
            label = _ANY_MARKER.sub("", label)
        if not label:
            return ""
        number = len(self.hrefs)
        href = self.href_of.get(target)
        if href is None:  # a page often links the same target again
            href = self.href_of[target] = _href(target, self.site.first_letter)
        self.hrefs.append(href)
        return f"{OPEN}{number}{MID}{label}{CLOSE}"

    def link(self, node: Wikilink) -> str:
        target = str(node.title).strip()
        leading_colon = target.startswith(":")
        if leading_colon:
            target = target[1:].strip()
        if ":" in target:
            prefix, rest = target.split(":", 1)
            ns = self.site.namespace_of(prefix)
            if ns == 14 and not leading_colon:
                name = " ".join(rest.split("|", 1)[0].replace("_", " ").split())
                if name and name not in self.categories:
                    self.categories.append(name)
                return ""
            if ns is not None and ns != 0:
                return ""
            kept = prefix.strip().lower() in KEPT_INTERWIKI
            if not kept and (not self.keep_colon_links or _LANG_PREFIX.match(prefix)):
                return ""
        if node.text is None:
            label = str(node.title)
        else:
            raw = str(node.text)
            # [[a|b|c]]: 2.75 takes c (a plain link's marker counts as [[)
            if "|" in raw and "[[" not in raw and OPEN not in raw:
                code = mwparserfromhell.parse(
                    raw.rsplit("|", 1)[1], skip_style_tags=True
                )
                label = self.code(code).strip()
            else:
                label = self.code(node.text).strip()
        return self.anchor(target, label)


def _clean(text: str) -> str:
    """Bold/italic and 2.75's white-space and punctuation clean-up (each
    pattern run only when the text holds its fixed start: the same result,
    without a pass that cannot match)."""
    if "''''" in text:
        text = _EMPTY_QUOTES.sub(r"\2", text)
    if "''" in text:
        if "'''''" in text:
            text = _BOLD_ITALIC.sub(r"\1", text)
        text = _BOLD.sub(r"\1", text)
        if "''\"" in text:
            text = _ITALIC_QUOTE.sub(r'"\1"', text)
        text = _ITALIC.sub(r'"\1"', text)
    if '""' in text:
        text = _QUOTE_QUOTE.sub(r'"\1"', text)
    text = text.replace("'''", "").replace("''", '"')
    if "__" in text:
        text = _SWITCHES.sub("", text)
    text = text.replace("<<", "«").replace(">>", "»")
    text = text.replace("\t", " ")
    text = _SPACES.sub(" ", text)
    if "...." in text:
        text = _DOTS.sub("...", text)
    text = _PUNCT_LINE.sub("\n", text)
    return text.replace(",,", ",").replace(",.", ".")


def _compact(text: str) -> list[str]:  # noqa: C901 - one state machine
    """Lines to paragraphs by 2.75's ``compact()`` rules, with KILT's joined
    section paths (see the module docstring)."""
    page: list[str] = []
    pending: dict[int, str] = {}  # headings waiting for content
    path: dict[int, str] = {}  # open headings, by level
    empty_section = False
    levels = ""  # list nesting, one character per level
    counts: list[int] = []

    def emit_headings() -> None:
        for lev in sorted(pending):
            page.append(
                "Section::::" + ":".join(path[x] for x in sorted(path) if x <= lev)
            )
        pending.clear()

    for line in text.split("\n"):
        if not line:
            if levels:
                levels, counts, empty_section = "", [], False
            continue
        m = _SECTION.match(line)
        if m:
            title = m.group(2)
            lev = len(m.group(1))
            if title and title[-1] not in "!?":
                title += "."
            pending[lev] = title
            path[lev] = title
            for deeper in [x for x in pending if x > lev]:
                del pending[deeper]
            for deeper in [x for x in path if x > lev]:
                del path[deeper]
            empty_section = True
            levels, counts = "", []
            continue
        first = line[0]
        if first == ":":
            continue
        if first in "*#;":
            i = 0
            new_levels = levels
            # past the run of list marks, every position takes the same
            # branch: the line's first other character is enough
            marks = len(line) - len(line.lstrip("*#;:"))
            for c, n in _zip_longest(levels, line[: marks + 1]):
                if not n or n not in "*#;:":
                    if c:
                        new_levels = new_levels[:-1]
                        counts = counts[:-1]
                        continue
                    break
                if c != n and (not c or (c not in ";:" and n not in ";:")):
                    if c:
                        new_levels = new_levels[:-1]
                        counts = counts[:-1]
                    new_levels += n
                    counts.append(0)
                i += 1
            levels = new_levels
            n = line[i - 1]
            item = line[i:].strip()
            if item:
                emit_headings()
                counts[i - 1] += 1
                bullet = f"BULLET::::{counts[i - 1]}. " if n == "#" else "BULLET::::- "
                page.append(bullet + item)
        elif levels:
            levels, counts = "", []
            page.append(line)
        elif first in "{|" or line[-1] == "}":
            continue
        elif (first == "(" and line[-1] == ")") or line.strip(".-") == "":
            continue
        elif pending:
            emit_headings()
            page.append(line)
            empty_section = False
        elif not empty_section and first != " ":
            page.append(line)
    return page


def _zip_longest(a: str, b: str) -> list[tuple[str, str]]:
    n = max(len(a), len(b))
    return [(a[k] if k < len(a) else "", b[k] if k < len(b) else "") for k in range(n)]


def _for_the_parser(wikitext: str, renderer: _Renderer) -> tuple[str, bool]:
    """What the parser is given: the page without comments, references,
    templates and tables, its plain links rendered as anchor markers (into
    ``renderer``), and (``True`` as the second value) its list marks and
    plain headings' first ``=`` hidden behind stand-in characters (not on
    the rare page that holds the stand-ins itself: ``False``)."""
    wikitext = _drop_nested(_REF.sub("", _COMMENT.sub("", wikitext)))
    if "//" in wikitext and _WIDE_SPACE.search(wikitext):
        wikitext = _URL_THEN_WIDE_SPACE.sub(r"\1 ", wikitext)
    wikitext = renderer.plain_links(wikitext)
    hide = not any(c in wikitext for c in _HIDDEN_MARKS.values())
    if hide:
        wikitext = _LIST_MARKS.sub(
            lambda m: m.group(0).translate(_HIDE_MARKS), "\n" + wikitext
        )
        if "=" in wikitext:
            wikitext = _PLAIN_HEADING.sub("\n" + _HEADING_STAND_IN, wikitext)
        wikitext = wikitext[1:]
    return wikitext, hide


def render_wikitext(
    wikitext: str, site: SiteInfo, *, keep_colon_links: bool = False
) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """Render a page's wikitext to KILT paragraphs (without the title line).

    Args:
        wikitext: The page's source.
        site: The wiki (namespace names decide which links are dropped).
        keep_colon_links: Keep links whose target has an unknown ``prefix:``
            (2.75 and KILT drop them).

    Returns:
        ``(paragraphs, anchors, categories)``: paragraphs each ending in
        ``\\n``; anchors as KILT's ``{text, href, paragraph_id, start, end,
        wikipedia_title, wikipedia_id}`` with ``paragraph_id`` counting from 1
        (0 is the title line), ``wikipedia_title`` the normalized target and
        ``wikipedia_id`` ``""`` (filled by the resolve step); category names
        in order of first appearance.
    """
    renderer = _Renderer(site, keep_colon_links)
    wikitext, hide = _for_the_parser(wikitext, renderer)
    flat = renderer.code(mwparserfromhell.parse(wikitext, skip_style_tags=True))
    if hide:
        for mark, hidden in _HIDDEN_MARKS.items():
            flat = flat.replace(hidden, mark)
    lines = _compact(_clean(flat))
    paragraphs: list[str] = []
    anchors: list[dict[str, Any]] = []
    for line in lines:
        paragraph_id = len(paragraphs) + 1
        if OPEN not in line and CLOSE not in line:  # no anchor: the line as is
            if line.strip():
                paragraphs.append(line + "\n")
            continue
        # text, marker, text, ...: a marker is its anchor number (an OPEN)
        # or None (a CLOSE, which ends the innermost open anchor)
        parts = _MARKER.split(line)
        length = len(parts[0])
        stack: list[tuple[int, int]] = []  # (number, start)
        found: list[tuple[int, int, int]] = []  # (start, number, end)
        for k in range(1, len(parts), 2):
            marker = parts[k]
            if marker is not None:
                stack.append((int(marker), length))
            elif stack:
                number, start = stack.pop()
                found.append((start, number, length))
            length += len(parts[k + 1])
        text = "".join(parts[::2])
        if not text.strip():
            continue
        found.sort()
        for start, number, end in found:
            if end <= start:
                continue
            href, target = renderer.hrefs[number]
            anchors.append(
                {
                    "text": text[start:end],
                    "href": href,
                    "paragraph_id": paragraph_id,
                    "start": start,
                    "end": end,
                    "wikipedia_title": target,
                    "wikipedia_id": "",
                }
            )
        paragraphs.append(text + "\n")
    return paragraphs, anchors, renderer.categories


def render_page(
    page: RawPage, site: SiteInfo, *, keep_colon_links: bool = False
) -> dict[str, Any]:
    """One article as a KILT page (anchors not yet resolved to ids).

    Args:
        page: A namespace-0, non-redirect page of the dump.
        site: Its wiki.
        keep_colon_links: See :func:`render_wikitext`.

    Returns:
        ``{_id, wikipedia_id, wikipedia_title, text, anchors, categories,
        history}`` in the layout of ``kilt_knowledgesource.json``:
        ``text[0]`` is the title line, ``categories`` a comma-joined string,
        ``history`` ``{revid, timestamp, parentid, pre_dump, pageid, url}``.
    """
    paragraphs, anchors, categories = render_wikitext(
        page.text, site, keep_colon_links=keep_colon_links
    )
    return {
        "_id": str(page.page_id),
        "wikipedia_id": str(page.page_id),
        "wikipedia_title": page.title,
        "text": [page.title + "\n", *paragraphs],
        "anchors": anchors,
        "categories": ",".join(categories),
        "history": {
            "revid": page.revid,
            "timestamp": page.timestamp,
            "parentid": page.parentid,
            "pre_dump": True,
            "pageid": page.page_id,
            "url": site.revision_url(page.title, page.revid),
        },
    }
