"""FastSentenceSplitter must equal stock LlamaIndex SentenceSplitter byte for byte.

Differential tests over the bundled KILT sample (every section, every whole page
body), hypothesis property tests on generated text aimed at each decision the
re-implementation makes, and exact-string edge cases.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kilt_chunks.fast_splitter import (
    _SPECIAL_TOKENS,
    SPLITTER_NAMES,
    FastSentenceSplitter,
    _ChunkTokenCounter,
    _encoding,
    _make_counter,
    _make_limited_counter,
    _make_tiktoken_counter,
    _rs_bpe_tokenizer,
    _token_lower_bound,
    _UntrainedPunkt,
    get_splitter,
    split_text_stock,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "kilt_enwiki2016_sample.jsonl"

FAST = FastSentenceSplitter(256)
_PUNKT = _UntrainedPunkt()


@lru_cache(maxsize=1)
def _NLTK_PUNKT():  # noqa: N802 - reads like the class it returns an instance of
    from nltk.tokenize import PunktSentenceTokenizer

    return PunktSentenceTokenizer()


PROPERTY = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@lru_cache(maxsize=1)
def _sample() -> tuple[list[str], list[str]]:
    """(section texts, whole page bodies) of the bundled sample.

    A page's ``text[0]`` is its title; a ``Section::::`` paragraph starts a new
    section; ``BULLET::::`` is removed from list items; paragraphs before the
    first header form the lead section. A page body is all paragraphs after the
    title concatenated as they are (headers and markers included).
    """
    sections: list[str] = []
    bodies: list[str] = []
    with SAMPLE.open(encoding="utf-8") as fh:
        for line in fh:
            paragraphs = json.loads(line)["text"]
            cur: list[str] = []
            for para in paragraphs[1:]:
                if para.startswith("Section::::"):
                    sections.append("".join(cur))
                    cur = []
                    continue
                if para.startswith("BULLET::::"):
                    para = para[len("BULLET::::") :]
                cur.append(para)
            sections.append("".join(cur))
            bodies.append("".join(paragraphs[1:]))
    return sections, bodies


def _assert_same(text: str, chunk_size: int = 256) -> None:
    """Fast and stock give the same chunks, or raise the same ValueError."""
    fast = FAST if chunk_size == 256 else FastSentenceSplitter(chunk_size)
    try:
        expected = split_text_stock(text, chunk_size)
    except ValueError as exc:
        with pytest.raises(ValueError) as got:
            fast.split_text(text)
        assert str(got.value) == str(exc)
        return
    assert fast.split_text(text) == expected


# --- differential tests on the real sample ---------------------------------------


def test_every_sample_section_matches_stock() -> None:
    sections, _ = _sample()
    texts = [t for t in sections if t.strip()]
    assert len(texts) > 2000
    mismatches = [
        i for i, t in enumerate(texts) if FAST.split_text(t) != (split_text_stock(t))
    ]
    assert mismatches == []


def test_whitespace_only_sample_sections() -> None:
    sections, _ = _sample()
    blank = [t for t in sections if not t.strip()]
    assert blank, "the sample has empty sections (e.g. Albedo)"
    for text in blank:
        assert FAST.split_text(text) == split_text_stock(text)


def test_every_sample_page_body_matches_stock() -> None:
    _, bodies = _sample()
    assert len(bodies) == 106
    for body in bodies:
        assert FAST.split_text(body) == split_text_stock(body)


def test_punkt_spans_match_nltk_on_sample() -> None:
    from nltk.tokenize import PunktSentenceTokenizer

    reference = PunktSentenceTokenizer()
    punkt = _UntrainedPunkt()
    sections, _ = _sample()
    for text in sections:
        assert punkt.slices(text) == list(reference.span_tokenize(text))


# --- exact-string edge cases -----------------------------------------------------


def test_empty_string_quirk() -> None:
    assert FAST.split_text("") == [""]
    assert split_text_stock("") == [""]


@pytest.mark.parametrize("text", [" ", "\n", "\n\n\n", " \t\r\n\x0b\x0c", "\xa0\u3000"])
def test_whitespace_only_gives_nothing(text: str) -> None:
    assert FAST.split_text(text) == []
    assert split_text_stock(text) == []


def test_long_whitespace_only_gives_nothing() -> None:
    text = " \n" * 2000
    assert FAST.split_text(text) == [] == split_text_stock(text)


@pytest.mark.parametrize(
    "text",
    ["Hello world.", "  Padded text.\n\n", "One. Two! Three?", "<|endoftext|>"],
)
def test_short_text_is_one_stripped_chunk(text: str) -> None:
    assert FAST.split_text(text) == [text.strip()] == split_text_stock(text)


def test_long_text_splits_into_several_chunks() -> None:
    text = "The cat sat on the mat. " * 200
    chunks = FAST.split_text(text)
    assert len(chunks) > 1
    assert chunks == split_text_stock(text)


def test_unbreakable_run_is_split_by_characters() -> None:
    text = "x" * 5000
    chunks = FAST.split_text(text)
    assert len(chunks) > 1 and "".join(chunks) == text
    assert chunks == split_text_stock(text)


def test_oversized_single_character_raises_like_stock() -> None:
    # A 4-byte emoji is several tokens: with chunk_size=1 it cannot fit.
    _assert_same("\U0001f9d1\U0001f9d1\U0001f9d1", chunk_size=1)
    with pytest.raises(ValueError, match="Single token exceeded chunk size"):
        FastSentenceSplitter(1).split_text("\U0001f9d1\U0001f9d1\U0001f9d1")


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_invalid_chunk_size(bad: object) -> None:
    with pytest.raises(ValueError):
        FastSentenceSplitter(bad)  # type: ignore[arg-type]


def test_get_splitter() -> None:
    text = "Alpha beta. Gamma delta! " * 100
    assert set(SPLITTER_NAMES) == {"fast", "llama_index"}
    assert get_splitter("fast")(text) == get_splitter("llama_index")(text)
    assert get_splitter("fast", 64)(text) == split_text_stock(text, 64)
    with pytest.raises(ValueError, match="'fast', 'llama_index'"):
        get_splitter("nltk")


def test_non_word_chars_match_nltk() -> None:
    import regex
    from nltk.tokenize.punkt import PunktLanguageVars

    pattern = regex.compile(PunktLanguageVars()._re_non_word_chars)
    every_char = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert frozenset(pattern.findall(every_char)) == _UntrainedPunkt.NON_WORD


# --- generated text --------------------------------------------------------------

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


def _text(pieces: st.SearchStrategy[str], max_size: int = 300) -> st.SearchStrategy:
    """Texts joined from pieces, sometimes repeated to go well past 256 tokens."""
    return st.builds(
        lambda parts, times: "".join(parts) * times,
        st.lists(pieces, max_size=max_size),
        st.sampled_from([1, 1, 1, 2, 5]),
    )


def _with_spaces(*pieces: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
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


@PROPERTY
@given(_text(runs(), max_size=4))
def test_runs_without_spaces(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(_text(_with_spaces(CJK_ARABIC, PUNCT, NUMBERS)))
def test_cjk_and_arabic(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(_text(_with_spaces(EMOJI, WORDS, PUNCT)))
def test_emoji_with_zwj(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(_text(st.one_of(bullet_lines(), SPACES), max_size=6))
def test_bullet_lists(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(
    _text(
        st.one_of(
            WORDS,
            st.sampled_from(["\n", "\n\n", "\n\n\n", "\n\n\n\n\n", ". ", ".\n"]),
            st.just(" "),
        )
    )
)
def test_many_newlines(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(
    _text(
        _with_spaces(
            WORDS,
            st.sampled_from(
                [".”", ".»", "?’", "!”", ".“", "«", "“", "‘", ".’”", '."', ".'", ".)"]
            ),
        )
    )
)
def test_quotes_and_guillemets_after_sentence_ends(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(_text(_with_spaces(WORDS, ABBREVIATIONS, NUMBERS, st.just(". "))))
def test_abbreviations_initials_numbers(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(_text(_with_spaces(WORDS, SPECIAL, PUNCT)))
def test_special_token_strings(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(_text(ANY_PIECE, max_size=400))
def test_mixtures(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(st.text(max_size=400))
def test_arbitrary_unicode(text: str) -> None:
    _assert_same(text)


@PROPERTY
@given(_text(ANY_PIECE, max_size=80), st.sampled_from([1, 3, 16, 50, 100]))
def test_other_chunk_sizes(text: str, chunk_size: int) -> None:
    _assert_same(text, chunk_size)


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
@given(st.one_of(punkt_texts(), _text(ANY_PIECE, max_size=60)))
def test_punkt_spans_match_nltk(text: str) -> None:
    """The Punkt port on its own, spans included (stock only reaches it above
    256 tokens and only uses the span starts)."""
    assert _PUNKT.slices(text) == list(_NLTK_PUNKT().span_tokenize(text))


@PROPERTY
@given(st.lists(punkt_texts(), min_size=1, max_size=12))
def test_punkt_heavy_text_matches_stock(parts: list[str]) -> None:
    """Long texts made of Punkt edge cases, through the whole splitter."""
    _assert_same("".join(parts) * 3)


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
    assert _PUNKT.slices(text) == list(_NLTK_PUNKT().span_tokenize(text))
    _assert_same((text + " ") * 60)


@pytest.mark.parametrize(
    "char", ["\U00013000", "\U00010348", "\U0001f9d1", "\U0010fffd"]
)
@pytest.mark.parametrize("n", [60, 64, 65, 70, 80, 85, 86, 100])
def test_many_token_characters_near_the_byte_bound(char: str, n: int) -> None:
    """Characters of 3-4 tokens each: the UTF-8 byte bound must stay exact."""
    _assert_same(char * n)
    _assert_same(("a " + char) * n)


@PROPERTY
@given(_text(ANY_PIECE, max_size=400))
def test_token_lower_bound_is_a_lower_bound(text: str) -> None:
    count = len(_encoding().encode(text, allowed_special="all"))
    assert _token_lower_bound(text, 10**9) <= count


# --- the token counter: rs-bpe must equal tiktoken ------------------------------

_TIKTOKEN_COUNT = _make_tiktoken_counter()
_COUNT = _make_counter()
_COUNT_UPTO = _make_limited_counter()

UNICODE_CHAR = st.characters(codec="utf-8")


def test_rs_bpe_is_the_counter_in_use() -> None:
    """The speed of the fast splitter rests on rs-bpe; it must be installed."""
    assert _rs_bpe_tokenizer() is not None
    assert _rs_bpe_tokenizer().count("Hello world") == 2


def test_special_tokens_are_those_of_tiktoken() -> None:
    assert set(_SPECIAL_TOKENS) == set(_encoding().special_tokens_set)


def test_counter_equals_tiktoken_on_every_sample_paragraph_and_page() -> None:
    texts = []
    with SAMPLE.open(encoding="utf-8") as fh:
        for line in fh:
            paragraphs = json.loads(line)["text"]
            texts += paragraphs
            texts.append("".join(paragraphs))
    assert len(texts) > 10_000
    wrong = [t[:60] for t in texts if _COUNT(t) != _TIKTOKEN_COUNT(t)]
    assert wrong == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a" * 10_000,
        "1" * 10_001,
        " " * 5_000 + "x",
        "\n" * 3_000,
        " \n" * 2_000,
        "\U0001f600" * 3_000,
        "中" * 5_000,
        "x " * 5_000,
        "\xa0" * 1_000 + "a",
        "It's we'LL they'Re I'M",
        "end.<|endoftext|>next",  # special token: one token
        "<|endoftext|><|fim_prefix|>  <|endofprompt|>",
        "<|endoftext|  <|endoftext|>>",
        "x<|fim_suffix|>\ud800 <|fim_middle|>",  # special token and surrogate
        "a\ud800b",  # lone surrogate: replaced by U+FFFD
        "\udc80\ud83d",  # reversed pair: two lone surrogates
        "\ud83d\ude00",  # surrogate pair
    ],
)
def test_counter_equals_tiktoken_on_edge_cases(text: str) -> None:
    assert _COUNT(text) == _TIKTOKEN_COUNT(text)
    for limit in (0, 1, 256, 10**6):
        n = _TIKTOKEN_COUNT(text)
        assert _COUNT_UPTO(text, limit) == (n if n <= limit else -1)


@PROPERTY
@given(_text(ANY_PIECE, max_size=200))
def test_counter_equals_tiktoken_on_generated_text(text: str) -> None:
    n = _TIKTOKEN_COUNT(text)
    assert _COUNT(text) == n
    assert _COUNT_UPTO(text, 256) == (n if n <= 256 else -1)


@PROPERTY
@given(
    st.lists(
        st.one_of(SPECIAL, st.sampled_from(["\ud800", "\udfff", "\udc80\ud83d"])),
        max_size=6,
    ),
    st.lists(st.text(max_size=12), max_size=6),
)
def test_counter_equals_tiktoken_with_special_tokens_and_surrogates(
    markers: list[str], texts: list[str]
) -> None:
    text = "".join(m + t for m, t in zip(markers, texts, strict=False))
    n = _TIKTOKEN_COUNT(text)
    assert _COUNT(text) == n
    assert _COUNT_UPTO(text, 5) == (n if n <= 5 else -1)


@settings(max_examples=2000, deadline=None)
@given(st.text(UNICODE_CHAR, max_size=40), st.integers(0, 50))
def test_counter_equals_tiktoken_on_arbitrary_unicode(text: str, limit: int) -> None:
    n = _TIKTOKEN_COUNT(text)
    assert _COUNT(text) == n
    assert _COUNT_UPTO(text, limit) == (n if n <= limit else -1)


# --- chunk token counts derived from piece counts --------------------------------


def _direct_count(text: str) -> int:
    return len(_encoding().encode(text, allowed_special="all"))


def _assert_counts_exact(text: str, chunk_size: int = 256) -> None:
    """split_text_with_token_counts = split_text + a direct count of each chunk."""
    fast = FAST if chunk_size == 256 else FastSentenceSplitter(chunk_size)
    try:
        chunks = fast.split_text(text)
    except ValueError:
        with pytest.raises(ValueError):
            fast.split_text_with_token_counts(text)
        return
    counted = fast.split_text_with_token_counts(text)
    assert [chunk for chunk, _ in counted] == chunks
    assert [n for _, n in counted] == [_direct_count(chunk) for chunk in chunks]


def _assert_chunk_count_exact(pieces: list[str]) -> None:
    """The count derived from the pieces' own counts equals a direct count."""
    count = _make_counter()
    counter = _ChunkTokenCounter(count)
    joined = "".join(pieces)
    got = counter.count_chunk([(p, count(p)) for p in pieces], joined)
    assert got == _direct_count(joined.strip())


def test_every_sample_chunk_count_is_exact() -> None:
    sections, bodies = _sample()
    texts = sections + bodies
    counted = [c for t in texts for c in FAST.split_text_with_token_counts(t)]
    assert len(counted) > 3000
    wrong = [(chunk[:60], n) for chunk, n in counted if n != _direct_count(chunk)]
    assert wrong == []
    assert [c for c, _ in counted] == [c for t in texts for c in FAST.split_text(t)]


@pytest.mark.parametrize(
    "pieces",
    [
        ["The cat sat. ", "Next one. "],  # " " + "Next" -> " Next"
        ["  Lead space. ", "tail.  "],  # both ends stripped
        ["He said it's ", "'s fine", "'LL do"],  # contractions at the joins
        ["中文。", "日本語の文章です。", "x"],  # no safe cut in most pieces
        ["end<|endoftext|>", " start"],  # special token: counted directly
        ["123", "456", "7a", "b. "],  # digit groups across joins
        ["word\n\n\n", "\n\nWord", "  "],  # newline runs and trailing blank
        ["a", "b", "c"],  # letters joined into one pre-token
        ["only"],
        ["   "],
        ["a\ud800b. ", "Next"],  # lone surrogate: counted directly
    ],
)
def test_chunk_count_from_pieces(pieces: list[str]) -> None:
    _assert_chunk_count_exact(pieces)


CONTRACTIONS = st.sampled_from(
    ["'s", "'S", "'ll", "'LL", "'ve", "'re", "'d", "'t", "'m"]
)
COUNT_PIECE = st.one_of(ANY_PIECE, CONTRACTIONS, st.just("\n"), st.just("a"))


@PROPERTY
@given(st.lists(_text(COUNT_PIECE, max_size=12), min_size=1, max_size=10))
def test_chunk_count_from_random_pieces(pieces: list[str]) -> None:
    """The derived count equals tiktoken's for any pieces, however joined."""
    _assert_chunk_count_exact(pieces)


@PROPERTY
@given(_text(COUNT_PIECE, max_size=400))
def test_chunk_counts_of_generated_text(text: str) -> None:
    _assert_counts_exact(text)


@PROPERTY
@given(_text(COUNT_PIECE, max_size=80), st.sampled_from([3, 16, 50]))
def test_chunk_counts_other_chunk_sizes(text: str, chunk_size: int) -> None:
    _assert_counts_exact(text, chunk_size)
