"""``kilt-chunks answer``: answers of an LLM for prompt-ready contexts, scored.

Each context (``kilt-chunks contexts``) becomes the chat of
:func:`kilt_chunks.rag.prompts.answer_messages` (the UDCG system message,
one ``Document:`` line per passage in the context's order), templated as
``kilt-chunks utility`` templates its prompts and answered greedily with
transformers ``generate`` (left padding, batched).

Scores per context: ``contained`` (a gold answer, normalised as KILT /
SQuAD normalise, is a substring of the normalised response: the accuracy of
Cuconasu et al., "The Power of Noise", SIGIR 2024; a gold answer that
normalises to nothing never matches) and KILT's downstream points
(``evaluation.downstream_scores``: accuracy = exact string match, em, f1,
rougel). The answers of each setting are also written as a KILT prediction
file (``<setting>.jsonl``: ``id``, ``output[0].answer`` and the context's
chunks as provenance), which ``kilt-chunks eval --task`` scores like any run.
"""

from __future__ import annotations

__all__ = [
    "MAX_NEW_TOKENS",
    "add_parser",
    "contained",
    "generate_answers",
    "read_contexts",
    "run",
    "score_rows",
    "write_kilt_runs",
]

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kilt_chunks.rag.prompts import answer_messages
from kilt_chunks.rag.utility import (
    DEFAULT_BATCH_SIZE,
    DTYPES,
    UtilityError,
    left_padded,
    load_model,
)

#: Tokens generated per answer (``--max-new-tokens``).
MAX_NEW_TOKENS = 32


def contained(response: str, answers: Sequence[str]) -> float:
    """1.0 when a normalised gold answer (``evaluation.normalize_answer``) is
    a substring of the normalised response, else 0.0 (empty normalised
    answers are ignored)."""
    from kilt_chunks.evaluation import normalize_answer

    text = normalize_answer(response)
    keys = [normalize_answer(a) for a in answers]
    return float(any(key and key in text for key in keys))


def read_contexts(path: str | Path) -> list[dict]:
    """Context rows of a JSON lines file (``kilt-chunks contexts``).

    Raises:
        UtilityError: Naming the file and line of a row without
            ``context_id``, ``query_id``, ``question`` or ``passages``.
    """
    rows = []
    with Path(path).open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                for name in ("context_id", "query_id", "question", "passages"):
                    row[name]  # noqa: B018 - presence check
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise UtilityError(
                    f"{path}, line {number}: not a context row (`context_id`,"
                    f" `query_id`, `question`, `passages`): {exc!r}"
                ) from exc
            rows.append(row)
    return rows


def generate_answers(
    tokenizer: Any,
    model: Any,
    contexts: Sequence[dict],
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_new_tokens: int = MAX_NEW_TOKENS,
    progress: bool = True,
) -> list[str]:
    """Greedy answers, one per context, in order (batches of similar
    length, left-padded; special tokens dropped, white space stripped)."""
    import torch
    from tqdm import tqdm

    prompts = [
        tokenizer.apply_chat_template(
            answer_messages(c["question"], [p.get("text", "") for p in c["passages"]]),
            tokenize=False,
            add_generation_prompt=True,
        )
        for c in contexts
    ]
    sequences = tokenizer(prompts, truncation=True)["input_ids"]
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    answers = [""] * len(sequences)
    device = next(model.parameters()).device
    with tqdm(
        total=len(order), desc="answer", unit="context", disable=not progress
    ) as bar:
        for start in range(0, len(order), batch_size):
            indices = order[start : start + batch_size]
            ids, mask, _ = left_padded(
                [sequences[i] for i in indices], tokenizer.pad_token_id
            )
            with torch.no_grad():
                out = model.generate(
                    input_ids=ids.to(device),
                    attention_mask=mask.to(device),
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    pad_token_id=tokenizer.pad_token_id,
                )
            for row, i in enumerate(indices):
                new = out[row, ids.shape[1] :]
                answers[i] = tokenizer.decode(new, skip_special_tokens=True).strip()
            bar.update(len(indices))
    return answers


def score_rows(contexts: Sequence[dict], answers: Sequence[str]) -> list[dict]:
    """Per-context rows: ids, setting, gold position, the answer,
    ``contained`` and KILT's downstream points."""
    from kilt_chunks.evaluation import downstream_scores

    rows = []
    for context, answer in zip(contexts, answers, strict=True):
        gold = [str(a) for a in context.get("answers", []) if str(a).strip()]
        rows.append(
            {
                "context_id": context["context_id"],
                "query_id": context["query_id"],
                "setting": context.get("setting"),
                "gold_position": context.get("gold_position"),
                "answer": answer,
                "contained": contained(answer, gold),
                **downstream_scores(answer, gold),
            }
        )
    return rows


def write_kilt_runs(
    contexts: Sequence[dict], answers: Sequence[str], folder: Path
) -> list[Path]:
    """One KILT prediction file per setting: ``{"id", "output": [{"answer",
    "provenance": [{"chunk_id", "text"}...]}]}`` per context. Returns the
    files."""
    from kilt_chunks.evaluation import is_chunk_id

    folder.mkdir(parents=True, exist_ok=True)
    by_setting: dict[str, list[str]] = {}
    for context, answer in zip(contexts, answers, strict=True):
        provenance = [
            {"chunk_id": p["doc_id"], "text": p.get("text")}
            for p in context["passages"]
            if is_chunk_id(str(p.get("doc_id", "")))
        ]
        line = {
            "id": context["query_id"],
            "output": [{"answer": answer, "provenance": provenance}],
        }
        by_setting.setdefault(str(context.get("setting")), []).append(json.dumps(line))
    paths = []
    for setting, lines in by_setting.items():
        path = folder / f"{setting}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def add_parser(commands: Any) -> None:
    """Register ``kilt-chunks answer`` on the CLI's subparsers."""
    parser = commands.add_parser(
        "answer",
        help="LLM answers for contexts, with contained / KILT downstream scores",
        description="Greedy answers of a transformers chat model for each"
        " context of `kilt-chunks contexts`; writes per-context rows (contained:"
        " a gold answer in the response; KILT's accuracy, em, f1, rougel) and a"
        " KILT prediction file per setting for `kilt-chunks eval`.",
    )
    parser.add_argument("contexts", help="JSON lines of `kilt-chunks contexts`")
    parser.add_argument("--model", required=True, help="model folder or cached hub id")
    parser.add_argument("--out", required=True, help="per-context rows (JSON lines)")
    parser.add_argument(
        "--kilt-dir", help="KILT prediction files (default: <out>.kilt/)"
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda, auto (device_map)")
    parser.add_argument("--dtype", default="float32", choices=DTYPES)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--max-new-tokens", type=int, default=MAX_NEW_TOKENS)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> str:
    """``kilt-chunks answer``: generate, score, write; return the lines to
    print (contained accuracy per setting).

    Raises:
        UtilityError: Bad input (one line).
    """
    contexts = read_contexts(args.contexts)
    started = time.monotonic()
    tokenizer, model = load_model(args.model, args.device, args.dtype)
    answers = generate_answers(
        tokenizer,
        model,
        contexts,
        batch_size=args.batch_size,
        max_new_tokens=args.max_new_tokens,
        progress=not args.no_progress,
    )
    seconds = time.monotonic() - started
    rows = score_rows(contexts, answers)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    kilt_dir = Path(args.kilt_dir or f"{args.out}.kilt")
    paths = write_kilt_runs(contexts, answers, kilt_dir)
    lines = [
        f"answer {out}: {len(rows):,} contexts, {seconds:.1f} s;"
        f" KILT predictions per setting in {kilt_dir}/ ({len(paths)} files)"
    ]
    settings: dict[str, list[float]] = {}
    for row in rows:
        settings.setdefault(str(row["setting"]), []).append(row["contained"])
    for setting, values in settings.items():
        lines.append(
            f"  {setting:<24} contained {sum(values) / len(values):.3f}"
            f" ({len(values)} queries)"
        )
    return "\n".join(lines)
