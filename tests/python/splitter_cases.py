"""Shared cases of the splitter tests: the sample's texts, the stock-vs-fast
check, and hypothesis strategies aimed at each decision the fast splitter makes.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from conftest import SAMPLE_JSONL, read_pages
from kilt_chunks.build.sections import page_sections
from kilt_chunks.splitter import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_TOKENIZER,
    FastSentenceSplitter,
    get_splitter,
)

FAST = FastSentenceSplitter(256)

PROPERTY = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@lru_cache(maxsize=1)
def sample_texts() -> tuple[list[str], list[str]]:
    """(kept section texts, whole page bodies) of the bundled sample.

    Sections come from :func:`kilt_chunks.build.sections.page_sections` (SPEC rules
    1-5); a page body is all paragraphs after the title concatenated as they
    are (headers and markers included).
    """
    pages = read_pages(SAMPLE_JSONL)
    sections = [
        section.text
        for page in pages
        for section in page_sections(page["wikipedia_title"], page["text"])
    ]
    bodies = ["".join(page["text"][1:]) for page in pages]
    return sections, bodies


def sweep_share(texts: list[str], setting: int, settings: int) -> list[tuple[int, str]]:
    """One setting's share of a sweep over the sample's sections.

    A sweep runs many (chunk_size, overlap, tokenizer) settings against stock
    LlamaIndex; running each over all 2,000-odd sections made the sweeps most
    of ``make test-fast``. Setting number ``setting`` of ``settings`` checks
    every ``settings``-th section from ``setting % settings`` on, so the sweep
    as a whole still checks every section (test_splitter_sentence checks all of
    them at the default settings).

    Returns:
        (index in ``texts``, text) pairs, about ``len(texts) / settings`` of them.
    """
    return list(enumerate(texts))[setting % settings :: settings]


def stock_split(text: str, chunk_size: int = 256) -> list[str]:
    """Stock LlamaIndex's chunks of ``text``."""
    return get_splitter("llama_index", chunk_size).split_text(text)


def assert_same(
    text: str,
    chunk_size: int = 256,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    tokenizer: str = DEFAULT_TOKENIZER,
    *,
    spans: bool = False,
) -> None:
    """Fast and stock give the same chunks, or raise the same ValueError; with
    ``spans``, the fast splitter's offsets cut its chunks out of ``text``."""
    if (chunk_size, chunk_overlap, tokenizer) == (256, 0, DEFAULT_TOKENIZER):
        fast = FAST
    else:
        fast = FastSentenceSplitter(chunk_size, chunk_overlap, tokenizer)
    try:
        expected = get_splitter(
            "llama_index", chunk_size, chunk_overlap, tokenizer
        ).split_text(text)
    except ValueError as exc:
        with pytest.raises(ValueError) as got:
            fast.split_text(text)
        assert str(got.value) == str(exc)
        return
    assert fast.split_text(text) == expected
    if spans:
        rows = fast.split_text_with_spans(text)
        assert [chunk for chunk, *_ in rows] == [c for c in expected if c]
        assert all(text[s:e] == c for c, _, s, e in rows)


WORDS = st.sampled_from(
    [
        "the",
        "cat",
        "Anarchism",
        "is",
        "a",
        "political",
        "philosophy",
        "He",
        "She",
        "It",
        "and",
        "of",
        "In",
        "born",
        "x",
        "I",
        "A",
        "b",
        "Z",
        "e",
        "étude",
        "Émile",
        "naïve",
        "Straße",
        "İstanbul",
        "Ωmega",
        "ǅemal",
        "don't",
        "it's",
        "O'Neill",
        "well-known",
        "co-op",
        "_x",
        "x_y",
    ]
)
ABBREVIATIONS = st.sampled_from(
    [
        "U.S.",
        "U.S.A.",
        "e.g.",
        "i.e.",
        "etc.",
        "Dr.",
        "Mr.",
        "Mrs.",
        "St.",
        "J.",
        "J. R. R.",
        "A.B.",
        "vs.",
        "Ph.D.",
        "No.",
        "vol.",
        "pp.",
        "c.",
        "Inc.",
        "a.m.",
        "##number##.",
        "_.",
        "ǅ.",
        "É.",
        "x.",
    ]
)
NUMBERS = st.sampled_from(
    [
        "3.14",
        "1983.",
        "1983",
        "12,000",
        "-5",
        "-5.",
        "1-2",
        "2.",
        "0.5.",
        "10.000.",
        ",5",
        ".5",
        "1st",
        "2D.",
        "A1.",
        "١٢٣.",
        "٣.",
        "²",
        "½.",
    ]
)
PUNCT = st.sampled_from(
    [
        ".",
        "?",
        "!",
        "...",
        "..",
        ". . .",
        ". .",
        "?!",
        "!!!",
        "--",
        "-",
        ",",
        ";",
        ":",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        '"',
        "'",
        "`",
        "*",
        "@",
        "&",
        "#",
        "%",
        "/",
        "\\",
        ".)",
        '."',
        ".'",
        ".”",
        ".»",
        "?’",
        "!“",
        ".’”",
        "”",
        "“",
        "‘",
        "’",
        "«",
        "»",
        "(.)",
        "'.",
        "”.",
        "?)",
        ").",
        '".',
        "—",
        "<",
        "|",
        ">",
        "<<",
        "–",
        "…",
        "。",
        "？",
        "！",
        "，",
        "；",
    ]
)
SPACES = st.sampled_from(
    [
        " ",
        " ",
        " ",
        "  ",
        "\n",
        "\n\n",
        "\n\n\n",
        "\n\n\n\n",
        " \n",
        "\t",
        "\r\n",
        "\r",
        "\x0b",
        "\x0c",
        "\xa0",
        "\u2028",
        "\u2029",
        "\u3000",
        "\u2009",
        "\x1c",
        "\x1f",
        "\x85",
        "\u200b",
    ]
)
CJK_ARABIC = st.sampled_from(
    [
        "中文",
        "日本語の文章です。",
        "这是一个句子。",
        "汉字",
        "한국어 문장입니다.",
        "مرحبا بالعالم.",
        "السلام عليكم",
        "كتاب؟",
        "۱۲۳",
        "ـ",
        "עברית.",
    ]
)
EMOJI = st.sampled_from(
    [
        "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
        "\U0001f3f3\ufe0f\u200d\U0001f308",
        "\U0001f469\U0001f3fd\u200d\U0001f4bb",
        "\u2764\ufe0f",
        "\U0001f600",
        "\U0001f1fa\U0001f1f8",
        "e\u0301",
    ]
)
SPECIAL = st.sampled_from(
    [
        "<|endoftext|>",
        "<|fim_prefix|>",
        "<|fim_middle|>",
        "<|fim_suffix|>",
        "<|endofprompt|>",
        "<|",
        "|>",
        "<|endoftext",
        "<|im_start|>",
    ]
)
BULLETS = st.sampled_from(
    ["- ", "* ", "1. ", "2) ", "a. ", "BULLET::::- ", "BULLET::::1. ", "• "]
)


@st.composite
def runs(draw: st.DrawFn) -> str:
    """Long runs without spaces (forcing character-level splits)."""
    unit = draw(st.sampled_from(["x", "ab", "Ω", "中", ".", "-", "a.", "1", "😀"]))
    return unit * draw(st.integers(1, 1500))


@st.composite
def bullet_lines(draw: st.DrawFn) -> str:
    lines = draw(
        st.lists(
            st.tuples(BULLETS, st.lists(st.one_of(WORDS, ABBREVIATIONS), max_size=8)),
            min_size=1,
            max_size=30,
        )
    )
    return "".join(marker + " ".join(words) + ".\n" for marker, words in lines)


def texts_of(pieces: st.SearchStrategy[str], max_size: int = 300) -> st.SearchStrategy:
    """Texts joined from pieces, sometimes repeated to go well past 256 tokens."""
    return st.builds(
        lambda parts, times: "".join(parts) * times,
        st.lists(pieces, max_size=max_size),
        st.sampled_from([1, 1, 1, 2, 5]),
    )


def with_spaces(*pieces: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(*pieces, SPACES, st.just(" "), st.just(" "))


ANY_PIECE = st.one_of(
    WORDS,
    ABBREVIATIONS,
    NUMBERS,
    PUNCT,
    SPACES,
    st.just(" "),
    st.just(". "),
    CJK_ARABIC,
    EMOJI,
    SPECIAL,
    BULLETS,
    st.text(max_size=3),
)
