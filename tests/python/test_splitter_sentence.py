"""FastSentenceSplitter must equal stock LlamaIndex SentenceSplitter byte for byte.

Differential tests over the bundled KILT sample (every section, every whole page
body), hypothesis property tests on generated text aimed at each decision the
re-implementation makes, and exact-string edge cases.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SAMPLE
from kilt_chunks.splitter import FastSentenceSplitter
from splitter_cases import (
    ABBREVIATIONS,
    ANY_PIECE,
    CJK_ARABIC,
    EMOJI,
    FAST,
    NUMBERS,
    PROPERTY,
    PUNCT,
    SPACES,
    SPECIAL,
    WORDS,
    assert_same,
    bullet_lines,
    runs,
    sample_texts,
    stock_split,
    texts_of,
    with_spaces,
)

# --- differential tests on the real sample ---------------------------------------


def test_every_sample_section_matches_stock() -> None:
    sections, _ = sample_texts()
    texts = [t for t in sections if t.strip()]
    assert len(texts) > 2000
    mismatches = [
        i for i, t in enumerate(texts) if FAST.split_text(t) != (stock_split(t))
    ]
    assert mismatches == []


def test_every_sample_page_body_matches_stock() -> None:
    _, bodies = sample_texts()
    assert len(bodies) == SAMPLE.pages
    for body in bodies:
        assert FAST.split_text(body) == stock_split(body)


# --- exact-string edge cases -----------------------------------------------------


def test_empty_string_quirk() -> None:
    assert FAST.split_text("") == [""]
    assert stock_split("") == [""]


@pytest.mark.parametrize("text", [" ", "\n", "\n\n\n", " \t\r\n\x0b\x0c", "\xa0\u3000"])
def test_whitespace_only_gives_nothing(text: str) -> None:
    assert FAST.split_text(text) == []
    assert stock_split(text) == []


def test_long_whitespace_only_gives_nothing() -> None:
    text = " \n" * 2000
    assert FAST.split_text(text) == [] == stock_split(text)


@pytest.mark.parametrize(
    "text",
    ["Hello world.", "  Padded text.\n\n", "One. Two! Three?", "<|endoftext|>"],
)
def test_short_text_is_one_stripped_chunk(text: str) -> None:
    assert FAST.split_text(text) == [text.strip()] == stock_split(text)


def test_long_text_splits_into_several_chunks() -> None:
    text = "The cat sat on the mat. " * 200
    chunks = FAST.split_text(text)
    assert len(chunks) > 1
    assert chunks == stock_split(text)


def test_unbreakable_run_is_split_by_characters() -> None:
    text = "x" * 5000
    chunks = FAST.split_text(text)
    assert len(chunks) > 1 and "".join(chunks) == text
    assert chunks == stock_split(text)


def test_oversized_single_character_raises_like_stock() -> None:
    # A 4-byte emoji is several tokens: with chunk_size=1 it cannot fit.
    assert_same("\U0001f9d1\U0001f9d1\U0001f9d1", chunk_size=1)
    with pytest.raises(ValueError, match="Single token exceeded chunk size"):
        FastSentenceSplitter(1).split_text("\U0001f9d1\U0001f9d1\U0001f9d1")


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_invalid_chunk_size(bad: object) -> None:
    with pytest.raises(ValueError):
        FastSentenceSplitter(bad)  # type: ignore[arg-type]


@pytest.mark.full
@PROPERTY
@given(texts_of(runs(), max_size=4))
def test_runs_without_spaces(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(texts_of(with_spaces(CJK_ARABIC, PUNCT, NUMBERS)))
def test_cjk_and_arabic(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(texts_of(with_spaces(EMOJI, WORDS, PUNCT)))
def test_emoji_with_zwj(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(texts_of(st.one_of(bullet_lines(), SPACES), max_size=6))
def test_bullet_lists(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(
    texts_of(
        st.one_of(
            WORDS,
            st.sampled_from(["\n", "\n\n", "\n\n\n", "\n\n\n\n\n", ". ", ".\n"]),
            st.just(" "),
        )
    )
)
def test_many_newlines(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(
    texts_of(
        with_spaces(
            WORDS,
            st.sampled_from(
                [".”", ".»", "?’", "!”", ".“", "«", "“", "‘", ".’”", '."', ".'", ".)"]
            ),
        )
    )
)
def test_quotes_and_guillemets_after_sentence_ends(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(texts_of(with_spaces(WORDS, ABBREVIATIONS, NUMBERS, st.just(". "))))
def test_abbreviations_initials_numbers(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(texts_of(with_spaces(WORDS, SPECIAL, PUNCT)))
def test_special_token_strings(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(texts_of(ANY_PIECE, max_size=400))
def test_mixtures(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(st.text(max_size=400))
def test_arbitrary_unicode(text: str) -> None:
    assert_same(text)


@PROPERTY
@given(texts_of(ANY_PIECE, max_size=80), st.sampled_from([1, 3, 16, 50, 100]))
def test_other_chunk_sizes(text: str, chunk_size: int) -> None:
    assert_same(text, chunk_size)


@pytest.mark.parametrize(
    "char", ["\U00013000", "\U00010348", "\U0001f9d1", "\U0010fffd"]
)
@pytest.mark.parametrize("n", [60, 64, 65, 70, 80, 85, 86, 100])
def test_many_token_characters_near_the_byte_bound(char: str, n: int) -> None:
    """Characters of 3-4 tokens each: the UTF-8 byte bound must stay exact."""
    assert_same(char * n)
    assert_same(("a " + char) * n)
