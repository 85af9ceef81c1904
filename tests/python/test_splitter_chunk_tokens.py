"""A chunk's token count derived from its pieces must equal a direct count."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kilt_chunks.splitter import FastSentenceSplitter
from kilt_chunks.splitter.chunk_tokens import ChunkTokenCounter
from kilt_chunks.splitter.tokens import get_token_counter, tiktoken_counter
from splitter_cases import ANY_PIECE, FAST, PROPERTY, sample_texts, texts_of

TIKTOKEN_COUNT = tiktoken_counter()


# --- chunk token counts derived from piece counts --------------------------------


def direct_count(text: str) -> int:
    return TIKTOKEN_COUNT(text)


def assert_counts_exact(text: str, chunk_size: int = 256) -> None:
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
    assert [n for _, n in counted] == [direct_count(chunk) for chunk in chunks]


def assert_chunk_count_exact(pieces: list[str]) -> None:
    """The count derived from the pieces' own counts equals a direct count."""
    count = get_token_counter().count
    counter = ChunkTokenCounter(count)
    joined = "".join(pieces)
    got = counter.count_chunk([(p, count(p)) for p in pieces], joined)
    assert got == direct_count(joined.strip())


def test_every_sample_chunk_count_is_exact() -> None:
    sections, bodies = sample_texts()
    texts = sections + bodies
    counted = [c for t in texts for c in FAST.split_text_with_token_counts(t)]
    assert len(counted) > 3000
    wrong = [(chunk[:60], n) for chunk, n in counted if n != direct_count(chunk)]
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
    assert_chunk_count_exact(pieces)


CONTRACTIONS = st.sampled_from(
    ["'s", "'S", "'ll", "'LL", "'ve", "'re", "'d", "'t", "'m"]
)
COUNT_PIECE = st.one_of(ANY_PIECE, CONTRACTIONS, st.just("\n"), st.just("a"))


@PROPERTY
@given(st.lists(texts_of(COUNT_PIECE, max_size=12), min_size=1, max_size=10))
def test_chunk_count_from_random_pieces(pieces: list[str]) -> None:
    """The derived count equals tiktoken's for any pieces, however joined."""
    assert_chunk_count_exact(pieces)


@PROPERTY
@given(texts_of(COUNT_PIECE, max_size=400))
def test_chunk_counts_of_generated_text(text: str) -> None:
    assert_counts_exact(text)


@PROPERTY
@given(texts_of(COUNT_PIECE, max_size=80), st.sampled_from([3, 16, 50]))
def test_chunk_counts_other_chunk_sizes(text: str, chunk_size: int) -> None:
    assert_counts_exact(text, chunk_size)
