"""The ``tokenizer`` option: the fast splitter equals stock
``SentenceSplitter(tokenizer=...)`` with the same tokenizer.

The Hugging Face tokenizer is a BERT-style WordPiece one trained here, offline,
on the bundled sample with the ``tokenizers`` library (seconds; nothing is
downloaded); ``o200k_base`` is a tiktoken encoding LlamaIndex's cache holds.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kilt_chunks.splitter import FastSentenceSplitter, get_splitter
from kilt_chunks.splitter.options import (
    describe_tokenizer,
    load_tiktoken_encoding,
    tokenizer_function,
    tokenizer_problem,
)
from splitter_cases import (
    ANY_PIECE,
    PROPERTY,
    assert_same,
    sample_texts,
    sweep_share,
    texts_of,
)


def train_wordpiece(path: Path, texts: list[str], vocab_size: int = 3000) -> Path:
    """Train a BERT-style (lower-casing, accent-stripping) WordPiece
    tokenizer on ``texts`` and save it as ``path`` (a tokenizer.json)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    from tokenizers.processors import TemplateProcessing

    tokenizer.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[
            ("[CLS]", tokenizer.token_to_id("[CLS]")),
            ("[SEP]", tokenizer.token_to_id("[SEP]")),
        ],
    )
    tokenizer.save(str(path))
    return path


@pytest.fixture(scope="module")
def wordpiece(tmp_path_factory: pytest.TempPathFactory) -> str:
    sections, _ = sample_texts()
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    return str(train_wordpiece(path, sections))


def _kept_sections() -> list[str]:
    sections, _ = sample_texts()
    return [t for t in sections if t.strip()]


def test_the_trained_tokenizer_counts_without_special_tokens(wordpiece: str) -> None:
    from tokenizers import Tokenizer

    encode = tokenizer_function(wordpiece)
    assert encode is not None
    hf = Tokenizer.from_file(wordpiece)
    text = "Anarchism is a political philosophy."
    with_specials = hf.encode(text).tokens
    assert with_specials[0] == "[CLS]" and with_specials[-1] == "[SEP]"
    assert len(encode(text)) == len(with_specials) - 2
    # WordPiece counts white space as nothing.
    assert len(encode("   \n ")) == 0


# The three settings share the sections among them: every section is checked
# once under the trained tokenizer (stock LlamaIndex with a Hugging Face
# tokenizer is the slowest reference of all).
HF_SETTINGS = [(64, 0), (128, 32), (512, 0)]


@pytest.mark.parametrize(
    ("setting", "chunk_size", "chunk_overlap"),
    [(n, size, overlap) for n, (size, overlap) in enumerate(HF_SETTINGS)],
)
def test_every_sample_section_matches_stock_with_a_trained_hf_tokenizer(
    wordpiece: str, setting: int, chunk_size: int, chunk_overlap: int
) -> None:
    texts = _kept_sections()
    fast = FastSentenceSplitter(chunk_size, chunk_overlap, wordpiece)
    assert fast.counting == "generic"
    stock = get_splitter("llama_index", chunk_size, chunk_overlap, wordpiece)
    share = sweep_share(texts, setting, len(HF_SETTINGS))
    assert len(share) > 600
    mismatches = [i for i, t in share if fast.split_text(t) != stock.split_text(t)]
    assert mismatches == []
    # Token counts are the tokenizer's, and spans exact.
    for _, text in share[:100]:
        rows = fast.split_text_with_spans(text)
        assert [(c, n) for c, n, _, _ in rows] == stock.split_text_with_token_counts(
            text
        )
        assert all(text[s:e] == c for c, _, s, e in rows)


@pytest.mark.parametrize(("chunk_size", "chunk_overlap"), [(64, 0), (256, 32)])
def test_every_sample_section_matches_stock_with_o200k(
    chunk_size: int, chunk_overlap: int
) -> None:
    texts = _kept_sections()
    fast = FastSentenceSplitter(chunk_size, chunk_overlap, "o200k_base")
    stock = get_splitter("llama_index", chunk_size, chunk_overlap, "o200k_base")
    mismatches = [
        i for i, t in enumerate(texts) if fast.split_text(t) != stock.split_text(t)
    ]
    assert mismatches == []


def test_o200k_counts_differ_from_cl100k() -> None:
    # The setting is real: another encoding gives other chunks.
    text = _kept_sections()[0] * 3
    assert FastSentenceSplitter(64, 0, "o200k_base").split_text(text) != (
        FastSentenceSplitter(64).split_text(text)
    )
    assert load_tiktoken_encoding("o200k_base").name == "o200k_base"


def test_a_piece_of_zero_tokens_is_carried_as_stock_carries_it(
    wordpiece: str,
) -> None:
    # WordPiece drops the control character: the piece " \x01" counts 0
    # tokens, and stock's overlap step carries it into the next chunk even
    # with overlap 0 (a plain greedy merge would not).
    text = "alpha \x01 " * 100
    for overlap in (0, 3):
        fast = FastSentenceSplitter(16, overlap, wordpiece)
        stock = get_splitter("llama_index", 16, overlap, wordpiece)
        chunks = stock.split_text(text)
        assert chunks[1].startswith("\x01 alpha")
        assert fast.split_text(text) == chunks
        rows = fast.split_text_with_spans(text)
        assert rows[1][2] < rows[0][3]  # the chunks share the carried piece
        assert all(text[s:e] == c for c, _, s, e in rows)


@PROPERTY
@given(texts_of(ANY_PIECE, max_size=200), st.sampled_from([(8, 0), (16, 4), (40, 0)]))
def test_trained_tokenizer_on_mixtures(text: str, setting: tuple[int, int]) -> None:
    # (A function-scoped fixture cannot feed @given: trained once, below.)
    tokenizer = _module_tokenizer()
    assert_same(text, *setting, tokenizer, spans=True)


_TRAINED: list[str] = []


def _module_tokenizer() -> str:
    """The trained tokenizer for the property test, in a folder removed when
    the test process ends."""
    if not _TRAINED:
        import atexit
        import shutil
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="kilt-tokenizer-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _TRAINED.append(
            str(train_wordpiece(folder / "tokenizer.json", _kept_sections()))
        )
    return _TRAINED[0]


def test_missing_tiktoken_encoding_is_not_downloaded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(
        ValueError, match="'r50k_base' is not in the local tiktoken cache"
    ):
        load_tiktoken_encoding("r50k_base")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("cl100k_base", None),
        ("o200k_base", None),
        ("bert", "is neither a tiktoken encoding"),
        ("/no/such/tokenizer.json", "no such tokenizer.json file"),
        (3, "must be a tiktoken encoding name or a tokenizer.json path"),
    ],
)
def test_tokenizer_setting_is_checked(value: object, problem: str | None) -> None:
    found = tokenizer_problem(value)
    if problem is None:
        assert found is None
    else:
        assert found is not None and found.startswith(problem)


def test_describe_tokenizer_names_file_and_digest(wordpiece: str) -> None:
    assert (
        describe_tokenizer("cl100k_base")
        == "tiktoken cl100k_base (allowed_special=all)"
    )
    described = describe_tokenizer(wordpiece)
    assert described.startswith(f"tokenizers file {wordpiece} sha256:")
    assert described.endswith("(no special tokens)")


@pytest.mark.full
def test_worker_processes_chunk_with_the_options(wordpiece: str) -> None:
    """The chunking step hands overlap and tokenizer to its spawned workers:
    two workers give the rows one process gives, with exact offsets."""
    from test_splitting import _sample_section_batches

    from kilt_chunks.build.splitting import split_section_batches

    batches = _sample_section_batches(200)
    options = {"chunk_size": 96, "chunk_overlap": 24, "tokenizer": wordpiece}
    one = pa.Table.from_batches(
        list(split_section_batches(batches, workers=1, **options))
    )
    two = pa.Table.from_batches(
        list(split_section_batches(batches, workers=2, **options))
    )
    assert one.equals(two)
    fast = FastSentenceSplitter(96, 24, wordpiece)
    texts = {
        (row["wikipedia_id"], row["section_order"]): row["section_text"]
        for batch in batches
        for row in batch.to_pylist()
    }
    rows = one.to_pylist()
    assert len(rows) > 500
    for row in rows:
        text = texts[(row["wikipedia_id"], row["section_order"])]
        start, end = row["section_start_char"], row["section_end_char"]
        assert text[start:end] == row["text"]
        assert row["num_tokens"] == fast._count(row["text"])
    # Overlap: some chunk starts before the previous chunk of its section ends.
    assert any(
        a["wikipedia_id"] == b["wikipedia_id"]
        and a["section_order"] == b["section_order"]
        and b["section_start_char"] < a["section_end_char"]
        for a, b in zip(rows, rows[1:], strict=False)
    )


@pytest.mark.parametrize(
    ("tokenizer", "label"),
    [
        ("cl100k_base", "cl100k_base"),
        ("tiktoken o200k_base (allowed_special=all)", "o200k_base"),
        ("/models/bge-small/tokenizer.json", "bge-small/tokenizer.json"),
        (
            "tokenizers file /m/e5/tokenizer.json sha256:ab12 (no special tokens)",
            "e5/tokenizer.json",
        ),
        ("tokenizer.json", "tokenizer.json"),
    ],
)
def test_tokenizer_label_names_the_tokenizer(tokenizer: str, label: str) -> None:
    """Issue 31 item 10: what the statistics, the card and the figure title
    call the tokenizer (they said cl100k_base whatever it was)."""
    from kilt_chunks.export.figures import figure_captions
    from kilt_chunks.splitter.options import tokenizer_label

    assert tokenizer_label(tokenizer) == label
    assert figure_captions(tokenizer)["tokens_per_chunk"] == (
        f"Tokens per chunk ({label}), buckets of 8 tokens"
    )
