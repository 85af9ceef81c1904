"""The renderer's rules (WikiExtractor 2.75 with KILT's joined headings) on
wikitext snippets, each against hand-written KILT paragraphs."""

from __future__ import annotations

import pytest

from kilt_chunks.dump.render import normalize_title, render_page, render_wikitext
from kilt_chunks.dump.siteinfo import parse_siteinfo
from kilt_chunks.dump.xmlpages import RawPage

EN = parse_siteinfo(
    '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" xml:lang="en">'
    "<siteinfo><sitename>Wikipedia</sitename><dbname>enwiki</dbname>"
    "<base>https://en.wikipedia.org/wiki/Main_Page</base><case>first-letter</case>"
    '<namespaces><namespace key="6">File</namespace>'
    '<namespace key="14">Category</namespace></namespaces></siteinfo>'
)
BG = parse_siteinfo(
    '<mediawiki xml:lang="bg"><siteinfo><sitename>Уикипедия</sitename>'
    "<base>https://bg.wikipedia.org/wiki/X</base>"
    '<namespaces><namespace key="6">Файл</namespace>'
    '<namespace key="14">Категория</namespace></namespaces></siteinfo>'
)


def paragraphs(wikitext: str, **options) -> list[str]:
    return render_wikitext(wikitext, EN, **options)[0]


def test_joined_headings_printed_when_content_comes():
    text = (
        "Intro.\n\n== Use in writing systems ==\n=== English ===\nIn English.\n"
        "==Empty==\n==Why?==\n===Deep===\n====Deeper====\nText.\n"
    )
    assert paragraphs(text) == [
        "Intro.\n",
        "Section::::Use in writing systems.\n",
        "Section::::Use in writing systems.:English.\n",
        "In English.\n",
        # "Empty" has no content: it vanishes; the pending levels of "Why?"
        # are printed together, each with the path of open levels.
        "Section::::Why?\n",
        "Section::::Why?:Deep.\n",
        "Section::::Why?:Deep.:Deeper.\n",
        "Text.\n",
    ]


def test_bullets_numbered_and_plain_indent_dropped():
    text = "==List==\n* first\n* second\n# one\n# two\n## inner\n: indented\nAfter.\n"
    assert paragraphs(text) == [
        "Section::::List.\n",
        "BULLET::::- first\n",
        "BULLET::::- second\n",
        "BULLET::::1. one\n",
        "BULLET::::2. two\n",
        "BULLET::::1. inner\n",
        "After.\n",
    ]


def test_templates_refs_and_markup_dropped_keeping_white_space():
    text = (
        "'''A''' (named {{IPA|a}}, plural ''As'') is a letter.<ref>Cited.</ref>"
        "<!-- note --> Ends <math>x^2</math> and <small>small</small>here.\n"
    )
    assert paragraphs(text) == [
        'A (named , plural "As") is a letter. Ends formula_1 and here.\n'
    ]


def test_tables_files_and_residue_lines_dropped():
    text = (
        "Before.\n{| class=wikitable\n|-\n| cell\n|}\n"
        "[[File:X.png|thumb|A caption]]\n(parenthesised line)\n----\nAfter.\n"
    )
    assert paragraphs(text) == ["Before.\n", "After.\n"]


def test_anchors_offsets_href_and_trail():
    paras, anchors, _ = render_wikitext(
        "The [[Latin alphabet|alphabet]] has [[letter]]s and [[w:Foo|a wiki link]].",
        EN,
    )
    assert paras == ["The alphabet has letters and a wiki link.\n"]
    assert [(a["text"], a["href"], a["start"], a["end"]) for a in anchors] == [
        ("alphabet", "Latin%20alphabet", 4, 12),
        ("letter", "letter", 17, 23),
        ("a wiki link", "w%3AFoo", 29, 40),
    ]
    assert [a["wikipedia_title"] for a in anchors] == [
        "Latin alphabet",
        "Letter",
        "W:Foo",
    ]
    assert all(a["paragraph_id"] == 1 for a in anchors)
    for a in anchors:
        assert paras[0][a["start"] : a["end"]] == a["text"]


def test_unknown_prefix_links_dropped_as_in_kilt_unless_kept():
    text = "See [[Star Wars: Episode IV|the film]] and [[fr:Lettre]]."
    assert paragraphs(text) == ["See and .\n"]
    assert paragraphs(text, keep_colon_links=True) == ["See the film and .\n"]


def test_categories_collected_in_the_local_language():
    paras, _, cats = render_wikitext(
        "Текст за [[Календар|календара]].\n[[Категория:Календари]]\n"
        "[[Категория:Календари]]\n[[Category:Time]]\n[[Файл:X.jpg|мини|Подпис]]",
        BG,
    )
    assert paras == ["Текст за календара.\n"]
    assert cats == ["Календари", "Time"]


def test_render_page_kilt_layout():
    page = RawPage("Albedo", 0, 39, 100, 99, "2016-01-01T00:00:00Z", None, "Text.")
    row = render_page(page, EN)
    assert row == {
        "_id": "39",
        "wikipedia_id": "39",
        "wikipedia_title": "Albedo",
        "text": ["Albedo\n", "Text.\n"],
        "anchors": [],
        "categories": "",
        "history": {
            "revid": 100,
            "timestamp": "2016-01-01T00:00:00Z",
            "parentid": 99,
            "pre_dump": True,
            "pageid": 39,
            "url": "https://en.wikipedia.org/w/index.php?title=Albedo&oldid=100",
        },
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("foo_bar#History", "Foo bar"), ("  élan  vital ", "Élan vital"), ("", "")],
)
def test_normalize_title(raw, expected):
    assert normalize_title(raw) == expected


# -- issue 31, item 7 ------------------------------------------------------------


def test_text_inside_div_is_kept_as_wikipedia_shows_it():
    # WikiExtractor 2.75 drops a <div> with its text (discardElements); the
    # page on Wikipedia shows it: a bibliography or a list in a column div
    text = "Intro.\n<div class='refbegin'>\n* Book one.\n* Book two.\n</div>\nEnd."
    assert paragraphs(text) == [
        "Intro.\n",
        "BULLET::::- Book one.\n",
        "BULLET::::- Book two.\n",
        "End.\n",
    ]
    assert paragraphs("A <div>shown</div> b.") == ["A shown b.\n"]


@pytest.mark.parametrize("space", ["\u3000", "\u00a0", "\u2009", " "])
def test_an_external_link_url_ends_at_any_unicode_space(space):
    text = f"See [http://example.org/a{space}the label] here."
    assert paragraphs(text) == ["See the label here.\n"]


def test_builtin_namespace_aliases_of_the_language():
    ja = parse_siteinfo(  # jawiki's dump lists "Category", not カテゴリ
        '<mediawiki xml:lang="ja"><siteinfo><namespaces>'
        '<namespace key="6">ファイル</namespace>'
        '<namespace key="14">Category</namespace></namespaces></siteinfo>'
    )
    _, _, categories = render_wikitext("本文。\n[[カテゴリ:日本の都市]]", ja)
    assert categories == ["日本の都市"]
    de = parse_siteinfo(
        '<mediawiki xml:lang="de"><siteinfo><namespaces>'
        '<namespace key="6">Datei</namespace>'
        '<namespace key="14">Kategorie</namespace></namespaces></siteinfo>'
    )
    text = "Text [[Bild:Karte.png|mini|Eine Karte]] hier."
    assert render_wikitext(text, de, keep_colon_links=True)[0] == ["Text hier.\n"]
    for lang, name in [("ru", "Категория"), ("fr", "Catégorie"), ("uk", "Категория")]:
        site = parse_siteinfo(f'<mediawiki xml:lang="{lang}"><siteinfo/>')
        assert site.namespace_of(name) == 14, lang
    assert EN.namespace_of("カテゴリ") is None  # only the wiki's own language


def test_a_dropped_link_or_template_inside_italics_leaves_no_quote():
    assert paragraphs("The paper ''[[fr:Le Monde]]'' is here.") == [
        "The paper is here.\n"
    ]
    assert paragraphs("In ''{{lang|fr|Le Monde}}'', a daily.") == ["In , a daily.\n"]
    text = "Its '''''{{lang|de|Titel}}''''' and ''kept''."
    assert paragraphs(text) == ['Its and "kept".\n']
