"""The renderer's two shortcuts around the parser (plain links rendered by a
regular expression, list marks hidden from it) give what the parser alone
gives: on snippets chosen to trip them and on every article of the bundled
dumps, with and without ``keep_colon_links``."""

from __future__ import annotations

import re

import pytest
from dump_helpers import BGWIKI, ENWIKI, TABLES

from kilt_chunks.dump import render
from kilt_chunks.dump.siteinfo import parse_siteinfo
from kilt_chunks.dump.xmlpages import pages_in_file, read_header

EN = parse_siteinfo(read_header(ENWIKI))

TRAPS = [
    "a [[b]] c", "[[a|b|c [[d]] e]]", "[[a [[b]] c|x]]", "[[a|b [[c]] d]]",
    "[http://x.com [[y]]]", "http://x.com/[[y]] z", "http://x.com[[y]].",
    "[[[x]]]", "[[x]]]", "[[[x]]", "[ [[x]] ]", "[http://a.com/[[b]] c]",
    "[//a.com [[b]]]", "[[a|<math>x</math> [[b]] c]]",
    "[http://x <math>y</math> [[b]] c]", "== [[Foo]] ==\ntext",
    "==[[Foo|Bar]]==\nx", "<div>[[a]]</div> b", '<span title="[[a]]">t</span>',
    "<nowiki>[[a]]</nowiki> [[b]]", "<nowiki/>[[a]]", "<math>[[a]]</math> [[b]]",
    "<MATH>x</math>[[c]]", "<source>[[a]]", "<nowiki>[[a]]", "<pre>[[a]]</pre>",
    "<nowiki>\n* a\n# b\n</nowiki>", "<pre>\n* a\n</pre>\n* b",
    "<syntaxhighlight lang=c>[[a]]</syntaxhighlight>[[b]]", "<chem>[[a]]</chem>",
    "{{unclosed [[a]] b", "[[File:x.jpg|thumb|see [[y]] here]] z",
    "[[Category:A]] [[b]] [[Category:B|[[c]]]]", "[[ ]]", "[[ |x]]", "[[a|]]",
    "[[ a ]]", "[[a#b|c]]", "[[#s|t]]", "[[a|b]]c", "* [[a]]\n* [[b|c]]\n# [[d]]",
    "; [[a]] : [[b]]", ";term: def\n:: deeper", ":[[a]]", "*#*: mixed\n#* x",
    "[[a\n|b]]", "[[a|b\nc]]", "[[a|b\n* c]]", "x&amp;[[a]]", "[[a&amp;b]]",
    "[[a|b&amp;c]]", "<ref>[[a]]</ref>[[b]]", "<!-- [[a]] -->[[b]]", "[[a]][[b]]",
    "'''[[a]]'''", "''[[a|b]]''", "<small>[[a]]</small>",
    "<gallery>\nx.jpg|[[a]]\n</gallery>\n[[b]]", "[[a]b]]", "[[a]]b]]",
    "[[a|b]c]]", "<code>[[a]]</code>", "[[w:Foo|bar]] [[fr:Foo]] [[Star Wars: X|y]]",
    "[[:Category:Foo|bar]]", "[[a_b|c]]", "<span>[[a]]", "[[a]]</span>",
    "<blockquote>\n[[a]]\n\n[[b]]\n</blockquote>", "[[a|[[b]]]]", "[[a|x [[b]]]]",
    "{|\n| [[a]]\n|}\n[[b]]", "text {| [[a]]", "[[a|b|c]]", "[[a||b]]",
    "__NOTOC__[[a]]", "<poem>\n* [[a]]\n</poem>", "[[a|b]] ''c'' [[d|e]]",
    "\ue003 a private-use character",
    # plain headings hidden from the parser
    "== a ==\nx", "=== a ==\nx", "== a ===\nx", "====\nx", "==\nx", "= a =\nx",
    "======= a =======\nx", "== a ==  \nx", "==a==b\nx", "== a = b ==\nx",
    "x\n== a ==\n\n=== b ===\ny\n== c ==\n", "[[a|b\n== c ==\nd]]",
    "[[a\n== c ==\n]]", "[[a|\n== c ==\n]]", "<span title\n== a ==\n>x</span>",
    "<span title=\n== a ==\n>x</span>", "{|\n| a\n== b ==\n",
    "<div>\n== a ==\n</div>", "<nowiki>\n== a ==\n</nowiki>",
    "<pre>\n== a ==\n</pre>", "<math>\n== a ==\n</math>",
    "[http://x.com a\n== b ==\n]", "{{a\n== b ==\n", "== a ''b'' ==\nx",
    "== [[a]] ==\nx", "== a &amp; b ==\nx", "== a <!-- c --> ==\nx",
    "* x\n== a ==\n* y",
    "== http://x.com ==\nx", "== a ==\ue007\nx", "<ref>\n== a ==\n</ref> b",
    # around what is removed before parsing (templates, comments, refs, tables)
    "{{a|{{b|{{c}}}}}} [[d]]\n== e ==\nf", "[[a|{{b}} c]] [[d]]", "[[a{{b}}|c]]",
    "[[File:x.jpg|thumb|{{b}} [[c]] d]] [[e]]", "<nowiki>{{a}}</nowiki> [[b]]",
    "<pre>{{a</pre> [[b]]\n== c ==\nd", "<math>{{a}}</math> [[b]]",
    "<!-- {{a -->[[b]]", "<!-- [[a]]\n== b ==\n", "{{a [[b]]\n== c ==\nd",
    "a }} [[b]] {{", "{{{p}}} [[a]]", "{{{p|[[a]]}}} [[b]]", "{{a|\n== b ==\n}}\nc",
    "{|\n|[[a]]\n|}\n[[b]]", "{|\n|-\n| {{a}} [[b]]\n|}\n== c ==\nd",
    "<ref name=x>[[a]]</ref>[[b]]", '<ref name="x" />[[a]]',
    "<ref name=x/>\n== a ==\nb",
    "<ref>{{a}}</ref> [[b]]", "<REF>[[a]]</REF> [[b]]",
]  # fmt: skip


def parser_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn both shortcuts off: every link and list mark goes to the parser."""
    monkeypatch.setattr(render._Renderer, "plain_links", lambda self, text: text)
    monkeypatch.setattr(render, "_LIST_MARKS", re.compile(r"(?!)"))
    monkeypatch.setattr(render, "_PLAIN_HEADING", re.compile(r"(?!)"))


@pytest.mark.parametrize("keep", [False, True])
def test_traps_render_as_with_the_parser_alone(monkeypatch, keep):
    fast = [render.render_wikitext(t, EN, keep_colon_links=keep) for t in TRAPS]
    parser_only(monkeypatch)
    slow = [render.render_wikitext(t, EN, keep_colon_links=keep) for t in TRAPS]
    for text, a, b in zip(TRAPS, fast, slow, strict=True):
        assert a == b, text


@pytest.mark.parametrize("dump", [ENWIKI, TABLES, BGWIKI], ids=["en", "tables", "bg"])
def test_bundled_articles_render_as_with_the_parser_alone(monkeypatch, dump):
    site = parse_siteinfo(read_header(dump))
    pages = [p for p in pages_in_file(dump) if p.ns == 0 and p.redirect is None]
    fast = [render.render_page(p, site) for p in pages]
    assert sum(len(p["anchors"]) for p in fast) > 0 or dump == TABLES
    parser_only(monkeypatch)
    slow = [render.render_page(p, site) for p in pages]
    assert fast == slow
