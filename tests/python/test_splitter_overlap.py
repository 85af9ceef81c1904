"""chunk_overlap: the fast splitter equals stock ``SentenceSplitter(chunk_size,
chunk_overlap)`` for every overlap, with exact offsets for overlapping chunks.

Differential tests on the kept sections of the bundled sample over the grid
of the issue (overlap 0, 1, 32, 128 and chunk_size - 1; chunk sizes 64, 128,
256, 512; each setting checks a third of the sections, every section is checked
under six settings), hypothesis property tests on generated text, and the spans.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kilt_chunks.splitter import FastSentenceSplitter, get_splitter
from kilt_chunks.splitter.stock import locate_overlapping_chunks
from splitter_cases import (
    ANY_PIECE,
    PROPERTY,
    PUNCT,
    SPACES,
    WORDS,
    assert_same,
    sample_texts,
    sweep_share,
    texts_of,
    with_spaces,
)

SIZES = (64, 128, 256, 512)


def grid() -> list[tuple[int, int]]:
    """(chunk_size, chunk_overlap) pairs of the issue's grid."""
    return [
        (size, overlap)
        for size in SIZES
        for overlap in sorted({0, 1, 32, 128, size - 1})
        if overlap < size
    ]


def _kept_sections() -> list[str]:
    sections, _ = sample_texts()
    return [t for t in sections if t.strip()]


# Each setting of the grid checks a third of the sections (every section is
# checked under six settings of the grid).
GRID_SHARES = 3


@pytest.mark.parametrize(
    ("setting", "chunk_size", "chunk_overlap"),
    [(n, size, overlap) for n, (size, overlap) in enumerate(grid())],
)
def test_every_sample_section_matches_stock_with_overlap(
    setting: int, chunk_size: int, chunk_overlap: int
) -> None:
    texts = _kept_sections()
    assert len(texts) > 2000
    fast = FastSentenceSplitter(chunk_size, chunk_overlap)
    stock = get_splitter("llama_index", chunk_size, chunk_overlap)
    share = sweep_share(texts, setting, GRID_SHARES)
    assert len(share) > 600
    mismatches = [i for i, t in share if fast.split_text(t) != stock.split_text(t)]
    assert mismatches == []


def test_the_grid_checks_every_section() -> None:
    texts = _kept_sections()
    checked = {
        i
        for setting in range(len(grid()))
        for i, _ in sweep_share(texts, setting, GRID_SHARES)
    }
    assert checked == set(range(len(texts)))


@pytest.mark.parametrize(("chunk_size", "chunk_overlap"), [(64, 32), (256, 128)])
def test_overlapping_chunks_share_text_and_carry_exact_spans(
    chunk_size: int, chunk_overlap: int
) -> None:
    texts = _kept_sections()
    fast = FastSentenceSplitter(chunk_size, chunk_overlap)
    stock = get_splitter("llama_index", chunk_size, chunk_overlap)
    shared = 0
    for text in texts:
        rows = fast.split_text_with_spans(text)
        assert [chunk for chunk, *_ in rows] == fast.split_text(text)
        for chunk, n, start, end in rows:
            assert text[start:end] == chunk
            assert n == stock._count(chunk)
        starts = [start for _, _, start, _ in rows]
        ends = [end for *_, end in rows]
        assert starts == sorted(starts) and ends == sorted(ends)
        shared += sum(ends[k - 1] > starts[k] for k in range(1, len(rows)))
        # The stock splitter's located offsets agree on the sample.
        assert stock.split_text_with_spans(text) == rows
    # Overlap is real: many consecutive chunks share characters.
    assert shared > 500


def test_overlap_zero_spans_equal_the_located_spans() -> None:
    fast = FastSentenceSplitter(256)
    for text in _kept_sections()[:400]:
        rows = fast.split_text_with_spans(text)
        counted = fast.split_text_with_token_counts(text)
        assert [(c, n) for c, n, _, _ in rows] == counted
        assert [(s, e) for _, _, s, e in rows] == locate_overlapping_chunks(
            text, [c for c, _ in counted]
        )


def test_overlap_carries_the_tail_of_the_previous_chunk() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    fast = FastSentenceSplitter(32, 12)
    chunks = fast.split_text(text)
    assert chunks == get_splitter("llama_index", 32, 12).split_text(text)
    assert len(chunks) > 5
    # Each chunk after the first starts with the last sentence of the previous.
    for previous, chunk in zip(chunks, chunks[1:], strict=False):
        last_sentence = previous.rsplit(". ", 1)[-1]
        assert chunk.startswith(last_sentence)


def test_spans_are_exact_on_repeated_text() -> None:
    # Every chunk's text occurs many times; offsets still follow the split.
    text = "Ab cd. " * 300
    fast = FastSentenceSplitter(16, 8)
    rows = fast.split_text_with_spans(text)
    starts = [start for _, _, start, _ in rows]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert all(text[s:e] == c for c, _, s, e in rows)
    assert rows[-1][3] == len(text.rstrip())


@pytest.mark.parametrize(
    ("chunk_overlap", "message"),
    [
        (-1, "chunk_overlap must be at least 0 and below chunk_size (64), got -1"),
        (64, "chunk_overlap must be at least 0 and below chunk_size (64), got 64"),
        (2.5, "chunk_overlap must be an int, got 2.5"),
        (True, "chunk_overlap must be an int, got True"),
    ],
)
def test_bad_overlap_is_refused(chunk_overlap: object, message: str) -> None:
    for name in ("fast", "llama_index"):
        with pytest.raises(ValueError) as error:
            get_splitter(name, 64, chunk_overlap)  # type: ignore[arg-type]
        assert str(error.value) == message


OVERLAPS = st.sampled_from([(8, 1), (16, 4), (16, 15), (32, 8), (64, 32), (100, 50)])


@PROPERTY
@given(texts_of(ANY_PIECE, max_size=200), OVERLAPS)
def test_overlap_on_mixtures(text: str, setting: tuple[int, int]) -> None:
    assert_same(text, *setting, spans=True)


@PROPERTY
@given(texts_of(with_spaces(WORDS, PUNCT, SPACES), max_size=300), OVERLAPS)
def test_overlap_on_sentences(text: str, setting: tuple[int, int]) -> None:
    assert_same(text, *setting, spans=True)


@PROPERTY
@given(st.text(max_size=300), OVERLAPS)
def test_overlap_on_arbitrary_unicode(text: str, setting: tuple[int, int]) -> None:
    assert_same(text, *setting, spans=True)
