"""Tiny random models for the RAG tests, built offline in a folder: a
BERT-like sentence-transformers embedder (mean pooling, normalised, with
query and document prompts) and a BERT cross-encoder, with a WordPiece
vocabulary written by hand. Nothing is downloaded."""

from __future__ import annotations

import string
from pathlib import Path

#: Words of the test corpora (the rest is spelt with letters and ##pieces).
WORDS = (
    "the of and a is in to moon saturn river lower saxony albedo snow light"
    " fraction sunlight reflected fresh reflects most icy surface very bright"
    " query passage : which rivers"
).split()


def write_vocab(folder: Path) -> Path:
    """A WordPiece vocabulary: BERT's special tokens, the words, letters,
    digits and punctuation, and their ``##`` continuations."""
    folder.mkdir(parents=True, exist_ok=True)
    pieces = [*string.ascii_lowercase, *string.digits, *string.punctuation]
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokens += dict.fromkeys([*WORDS, *pieces, *(f"##{p}" for p in pieces)])
    path = folder / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return path


def _bert(folder: Path, *, seed: int, classifier: bool) -> Path:
    import torch
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        BertModel,
        BertTokenizerFast,
    )

    tokenizer = BertTokenizerFast(vocab_file=str(write_vocab(folder / "vocab")))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=48,
        max_position_embeddings=128,
        num_labels=1,
    )
    torch.manual_seed(seed)
    model = (BertForSequenceClassification if classifier else BertModel)(config)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def tiny_embedder(folder: Path, *, seed: int = 0) -> Path:
    """Save a tiny sentence-transformers model (BERT, mean pooling,
    Normalize; prompts ``query: `` and ``passage: ``) in ``folder``."""
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers 6
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:  # 5
        from sentence_transformers import models  # type: ignore[no-redef]

    bert = _bert(folder.parent / f"{folder.name}-bert", seed=seed, classifier=False)
    transformer = models.Transformer(str(bert), max_seq_length=64)
    pooling = models.Pooling(
        transformer.get_embedding_dimension()
        if hasattr(transformer, "get_embedding_dimension")
        else transformer.get_word_embedding_dimension(),
        "mean",
    )
    model = SentenceTransformer(
        modules=[transformer, pooling, models.Normalize()],
        prompts={"query": "query: ", "document": "passage: "},
        device="cpu",
    )
    model.save(str(folder))
    return folder


def tiny_cross_encoder(folder: Path, *, seed: int = 1) -> Path:
    """Save a tiny BERT cross-encoder (one output) in ``folder``."""
    return _bert(folder, seed=seed, classifier=True)
