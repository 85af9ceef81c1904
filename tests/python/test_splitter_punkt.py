"""The Punkt port must find NLTK's untrained Punkt's sentence spans exactly."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kilt_chunks.splitter.punkt import UntrainedPunkt
from splitter_cases import ANY_PIECE, PROPERTY, assert_same, sample_texts, texts_of

PUNKT = UntrainedPunkt()


@lru_cache(maxsize=1)
def nltk_punkt():  # type: ignore[no-untyped-def]
    """NLTK's untrained ``PunktSentenceTokenizer()``, as LlamaIndex builds it."""
    from nltk.tokenize import PunktSentenceTokenizer

    return PunktSentenceTokenizer()


def test_punkt_spans_match_nltk_onsample_texts() -> None:
    from nltk.tokenize import PunktSentenceTokenizer

    reference = PunktSentenceTokenizer()
    punkt = UntrainedPunkt()
    sections, _ = sample_texts()
    for text in sections:
        assert punkt.slices(text) == list(reference.span_tokenize(text))


def test_non_word_chars_match_nltk() -> None:
    import regex
    from nltk.tokenize.punkt import PunktLanguageVars

    pattern = regex.compile(PunktLanguageVars()._re_non_word_chars)
    every_char = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert frozenset(pattern.findall(every_char)) == UntrainedPunkt.NON_WORD


PUNKT_WORDS = st.sampled_from(
    [
        "A.",
        "J.",
        "x.",
        "É.",
        "_.",
        "ǅ.",
        "1983.",
        "5.",
        "-5.",
        "0.5.",
        "٣.",
        "##number##.",
        "U.S.",
        "e.g.",
        "etc.",
        "Mr.",
        "Smith",
        "smith",
        "Smith.",
        'Smith."',
        "Smith.)",
        "Smith.”",
        "Smith.’”",
        "Smith.?",
        "Smith.!",
        "Smith.,",
        "e.g.,",
        "1990s",
        "1990s.",
        "5",
        "5)",
        "7",
        "42",
        "0x",
        "a1.",
        "2D.",
        "Ab1.",
        "(IMF).",
        '"Quoted".',
        "'tis",
        "’twas",
        "«Non»",
        "»",
        "«",
        "“Yes.”",
        "?",
        "!",
        "?!",
        "!!",
        ".",
        "..",
        "...",
        ". . .",
        ".)",
        '."',
        ".'",
        ".»",
        "(",
        ")",
        "--",
        "-",
        ",",
        ";",
        ":",
        "*",
        "@",
        "`x`",
        "[1].",
        "{x}.",
        "Why?",
        "No!",
        "ok?)",
        "end.”",
        "end.»",
        "end?’",
        "中文。",
        "كتاب؟",
    ]
)
PUNKT_SEPS = st.sampled_from(
    [
        " ",
        " ",
        " ",
        "",
        "  ",
        "\n",
        "\n\n",
        " \n",
        "\n ",
        "\t",
        "\r",
        "\x0b",
        "\x0c",
        "\xa0",
        "\u2028",
        "\u3000",
        "\x1c",
        "\x1f",
        "\n\x1c",
        "\x1c\n",
        "\n\x1f\n",
        "\x85",
        "\u200b",
    ]
)


@st.composite
def punkt_texts(draw: st.DrawFn) -> str:
    """Short texts of candidate sentence ends, next words and separators."""
    parts = draw(st.lists(st.tuples(PUNKT_WORDS, PUNKT_SEPS), max_size=25))
    lead = draw(st.sampled_from(["", " ", "\n", "\x1c"]))
    return lead + "".join(word + sep for word, sep in parts)


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.one_of(punkt_texts(), texts_of(ANY_PIECE, max_size=60)))
def test_punkt_spans_match_nltk(text: str) -> None:
    """The Punkt port on its own, spans included (stock only reaches it above
    256 tokens and only uses the span starts)."""
    assert PUNKT.slices(text) == list(nltk_punkt().span_tokenize(text))


@PROPERTY
@given(st.lists(punkt_texts(), min_size=1, max_size=12))
def test_punkt_heavy_text_matches_stock(parts: list[str]) -> None:
    """Long texts made of Punkt edge cases, through the whole splitter."""
    assert_same("".join(parts) * 3)


# One or more examples per decision rule of the Punkt port (see _is_end).
PUNKT_CASES = [
    "J. 5 x",  # initial + digit: break
    "J. Smith x",  # initial + upper: no break
    "J. smith x",  # initial + lower: no break
    'J. Smith." Next',  # no break at the initial, but a later one in context
    "J. (Smith) x",
    "1983. His",  # number + upper: break
    "1983. his",  # number + lower: no break
    "1983. 5 more",
    "5. Smith.) Next",
    "-5. x",
    "a1. x",
    "A1. b",
    "Why?\n\x1f\n Smith",  # next word blank to str.strip: no break
    "Why?\n\x1c\nSmith",
    "Why? \x1c Smith",
    "end.\n\x1f\nNext",
    "(IMF). According",
    'generation". In',
    "don't'. Next",
    "end.” Next",
    "end.» next",
    "’. Next",
    ". Next",
    " . Next",
    "\x1c. Next",
    "x). . . y",
    "x. . . y",
    "word. .x",
    "word. ..",
    "etc.. Next",
    "U.S. Army",
    "e.g. the",
    "(e.g. the",
    "##number##. x",
    "##NUMBER##. x",
    "İ. x",
    "ǅ. Next",
    "_. Next",
    'He said "Stop." Then left.',
    "Is it?) Yes.",
    "Really?! No.",
    "acting!!! I promise.",
    "Hello.\u2028World.",
    "Hello.\xa0World.",
    "Hello.\x85World.",
    " Lead space. Next",
    "\nLead newline. Next",
]


@pytest.mark.parametrize("text", PUNKT_CASES)
def test_punkt_rule_cases(text: str) -> None:
    assert PUNKT.slices(text) == list(nltk_punkt().span_tokenize(text))
    assert_same((text + " ") * 60)
