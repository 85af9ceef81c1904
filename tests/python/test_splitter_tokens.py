"""The token counter (rs-bpe) must equal tiktoken's cl100k_base count exactly,
and the cheap bounds must be bounds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SAMPLE_JSONL, read_pages
from kilt_chunks.splitter.tokens import (
    SPECIAL_TOKENS,
    get_token_counter,
    tiktoken_counter,
    tiktoken_encoding,
    token_lower_bound,
)
from splitter_cases import ANY_PIECE, PROPERTY, SPECIAL, texts_of

TIKTOKEN_COUNT = tiktoken_counter()
COUNT = get_token_counter().count
COUNT_UPTO = get_token_counter().count_upto


@given(texts_of(ANY_PIECE, max_size=400))
def test_token_lower_bound_is_a_lower_bound(text: str) -> None:
    count = len(tiktoken_encoding().encode(text, allowed_special="all"))
    assert token_lower_bound(text, 10**9) <= count


# --- the token counter: rs-bpe must equal tiktoken ------------------------------


UNICODE_CHAR = st.characters(codec="utf-8")


def test_rs_bpe_is_the_counter_in_use() -> None:
    """The speed of the fast splitter rests on rs-bpe; it must be installed."""
    from rs_bpe.bpe import openai

    assert openai.cl100k_base().count("Hello world") == 2
    assert COUNT("Hello world") == 2


def test_special_tokens_are_those_of_tiktoken() -> None:
    assert set(SPECIAL_TOKENS) == set(tiktoken_encoding().special_tokens_set)


def test_counter_equals_tiktoken_on_every_sample_paragraph_and_page() -> None:
    texts = []
    for page in read_pages(SAMPLE_JSONL):
        texts += page["text"]
        texts.append("".join(page["text"]))
    assert len(texts) > 10_000
    wrong = [t[:60] for t in texts if COUNT(t) != TIKTOKEN_COUNT(t)]
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
    assert COUNT(text) == TIKTOKEN_COUNT(text)
    for limit in (0, 1, 256, 10**6):
        n = TIKTOKEN_COUNT(text)
        assert COUNT_UPTO(text, limit) == (n if n <= limit else -1)


@PROPERTY
@given(texts_of(ANY_PIECE, max_size=200))
def test_counter_equals_tiktoken_on_generated_text(text: str) -> None:
    n = TIKTOKEN_COUNT(text)
    assert COUNT(text) == n
    assert COUNT_UPTO(text, 256) == (n if n <= 256 else -1)


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
    n = TIKTOKEN_COUNT(text)
    assert COUNT(text) == n
    assert COUNT_UPTO(text, 5) == (n if n <= 5 else -1)


@settings(max_examples=2000, deadline=None)
@given(st.text(UNICODE_CHAR, max_size=40), st.integers(0, 50))
def test_counter_equals_tiktoken_on_arbitrary_unicode(text: str, limit: int) -> None:
    n = TIKTOKEN_COUNT(text)
    assert COUNT(text) == n
    assert COUNT_UPTO(text, limit) == (n if n <= limit else -1)
