"""The splitter entry point: names, validation, and the two splitters agree."""

from __future__ import annotations

import pickle

import pytest

from kilt_chunks.splitter import (
    SPLITTER_NAMES,
    FastSentenceSplitter,
    StockSentenceSplitter,
    count_tokens,
    get_splitter,
)
from splitter_cases import stock_split


def test_get_splitter_gives_the_same_chunks_by_either_name() -> None:
    text = "Alpha beta. Gamma delta! " * 100
    assert SPLITTER_NAMES == ("fast", "llama_index")
    fast, stock = get_splitter("fast"), get_splitter("llama_index")
    assert isinstance(fast, FastSentenceSplitter)
    assert isinstance(stock, StockSentenceSplitter)
    chunks = fast.split_text(text)
    assert len(chunks) == 4
    assert chunks == stock.split_text(text)
    assert get_splitter("fast", 64).split_text(text) == stock_split(text, 64)
    assert len(get_splitter("fast", 64).split_text(text)) == 13


def test_get_splitter_is_cached_per_name_and_size() -> None:
    assert get_splitter("fast", 256) is get_splitter("fast")
    assert get_splitter("fast", 64) is not get_splitter("fast", 256)


def test_both_splitters_count_each_chunk() -> None:
    text = "Albedo is a ratio. <|endoftext|> It is 0.3 for Earth. " * 40
    fast = get_splitter("fast", 64).split_text_with_token_counts(text)
    stock = get_splitter("llama_index", 64).split_text_with_token_counts(text)
    assert fast == stock
    assert [n for _, n in fast] == [count_tokens(chunk) for chunk, _ in fast]
    assert all(0 < n <= 64 for _, n in fast)


def test_splitters_pickle_as_their_constructor_call() -> None:
    for name in SPLITTER_NAMES:
        splitter = get_splitter(name, 64)
        copy = pickle.loads(pickle.dumps(splitter))
        assert type(copy) is type(splitter) and copy.chunk_size == 64


@pytest.mark.parametrize(
    ("name", "chunk_size", "message"),
    [
        ("nltk", 256, "unknown splitter 'nltk'; allowed names: 'fast', 'llama_index'"),
        ("fast", 0, "chunk_size must be > 0, got 0"),
        ("llama_index", -1, "chunk_size must be > 0, got -1"),
        ("fast", 2.5, "chunk_size must be an int, got 2.5"),
        ("fast", True, "chunk_size must be an int, got True"),
    ],
)
def test_get_splitter_rejects_bad_settings(
    name: str, chunk_size: object, message: str
) -> None:
    with pytest.raises(ValueError) as error:
        get_splitter(name, chunk_size)  # type: ignore[arg-type]
    assert str(error.value) == message
