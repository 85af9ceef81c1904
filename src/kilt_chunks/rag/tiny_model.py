"""A tiny random Llama-style chat model written to a folder, offline.

For tests and ``make demo-rag`` only: its weights are random, so what it
answers and the probabilities it gives mean nothing; it exercises the same
code paths as a real chat model (a byte-level BPE tokenizer trained here with
``tokenizers``, a Llama-3-style chat template that starts with the BOS token
the tokenizer adds again, left padding, a :class:`transformers.LlamaConfig`).
Nothing is downloaded.
"""

from __future__ import annotations

__all__ = [
    "CHAT_TEMPLATE",
    "MAX_TOKENS",
    "SPECIAL_TOKENS",
    "chunk_texts",
    "main",
    "make_tiny_chat_model",
]

from collections.abc import Iterable
from pathlib import Path

#: Llama-3's chat template, shortened (no tools, no dates): each message is
#: ``<|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>`` after the
#: BOS token, and the generation prompt opens an assistant header.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    " + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)

#: Longest prompt (tokens): a context of ten chunks fits.
MAX_TOKENS = 32768

SPECIAL_TOKENS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
]

_TRAINING_TEXT = [
    "You are given a question and you must respond based on the provided "
    "documents. Respond directly without providing any premise or explanation. "
    "If none of the documents contain the answer, please respond with "
    "NO-RESPONSE. Do not try to respond based on your own knowledge.",
    "Document: Question: Answer: system user assistant",
    "Albedo is the fraction of sunlight reflected. Enceladus is a moon of Saturn.",
]


def make_tiny_chat_model(
    folder: str | Path,
    texts: Iterable[str] = (),
    *,
    vocab_size: int = 512,
    hidden_size: int = 32,
    layers: int = 2,
    seed: int = 0,
) -> Path:
    """Train a tokenizer on ``texts`` and write it with a random Llama model.

    Args:
        folder: Where to write (``config.json``, ``model.safetensors``,
            ``tokenizer.json``, ``tokenizer_config.json``); created.
        texts: Extra training text for the tokenizer (e.g. chunk texts).
        vocab_size: BPE vocabulary size (the 256 byte tokens included).
        hidden_size: Model width (4 attention heads, 2 key-value heads).
        layers: Decoder layers.
        seed: ``torch.manual_seed`` for the weights.

    Returns:
        ``folder`` as a Path, loadable with ``AutoModelForCausalLM`` and
        ``AutoTokenizer`` (``local_files_only=True``).
    """
    import torch
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([*_TRAINING_TEXT, *texts], trainer=trainer)
    bos = tokenizer.token_to_id("<|begin_of_text|>")
    # As Llama 3's tokenizer: every encode with special tokens adds BOS.
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A",
        pair="<|begin_of_text|> $A <|begin_of_text|> $B",
        special_tokens=[("<|begin_of_text|>", bos)],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<|begin_of_text|>",
        eos_token="<|eot_id|>",
        model_max_length=MAX_TOKENS,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_TOKENS,
        bos_token_id=bos,
        eos_token_id=fast.eos_token_id,
        tie_word_embeddings=False,
        # Wider than the default 0.02, so that probabilities differ between
        # prompts and a padding mistake shows.
        initializer_range=0.5,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = fast.eos_token_id
    model.save_pretrained(folder)
    return folder


def chunk_texts(db_path: str | Path, limit: int = 5000) -> list[str]:
    """Up to ``limit`` chunk texts of a build (tokenizer training text)."""
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute(
            "select text from kilt_chunks order by chunk_id limit ?", [limit]
        ).fetchall()
    return [text for (text,) in rows]


def main(argv: list[str] | None = None) -> None:
    """``python -m kilt_chunks.rag.tiny_model FOLDER [--db DB]``: write the
    tiny random model (tokenizer trained on the build's chunks when --db is
    given, so prompts are fewer tokens)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("folder")
    parser.add_argument("--db", help="DuckDB file of a build: train on its chunks")
    parser.add_argument("--vocab-size", type=int, default=4096)
    args = parser.parse_args(argv)
    texts = chunk_texts(args.db) if args.db else []
    folder = make_tiny_chat_model(args.folder, texts, vocab_size=args.vocab_size)
    print(
        "tiny random chat model (RANDOM weights: its answers mean nothing)"
        f" in {folder}/"
    )


if __name__ == "__main__":
    main()
