"""``kilt-chunks utility``: each passage's utility (``1 - no_res_prob``) for an
LLM, batched, cached and resumable.

For a question q and one passage p the LLM is asked to answer from p alone or
say NO-RESPONSE (Amiraz, Cuconasu, Filice, Karnin, "The Distracting Effect",
ACL 2025); ``no_res_prob`` is the probability of the first token of
"NO-RESPONSE" at the answer position, ``1 - no_res_prob`` the passage's
utility (its distracting effect when p is irrelevant).

The numbers are those of the released UDCG code, GiovanniTRA/UDCG
``src/compute_abstention_probability.py`` (MIT licence, (c) 2025 its
authors; arXiv 2510.21440), reimplemented here, not copied: the same messages
(:mod:`kilt_chunks.rag.prompts`), ``apply_chat_template(tokenize=False,
add_generation_prompt=True)``, then the tokenizer called on that text with
its defaults (``add_special_tokens=True``: a Llama 3 tokenizer adds a second
``<|begin_of_text|>`` after the template's own, and so do we),
``truncation=True`` with ``truncation_side="left"``, the first id of
``tokenizer.encode("NO-RESPONSE", add_special_tokens=False)``, and a softmax
over the logits of the last position in the model's dtype.

What is ours: prompts are scored in batches of similar length, left-padded
with an attention mask and position ids counted from each prompt's first real
token, so each prompt gives what it gives alone (to float tolerance); each
score is kept in a Parquet cache keyed by model, dtype, prompt version,
question and passage text, so a repeated or killed run computes only the
missing pairs; the output is the released JSON format and a DuckDB table.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DTYPES",
    "FLUSH_PAIRS",
    "TABLE",
    "ScoreReport",
    "UtilityCache",
    "UtilityError",
    "abstention_prompt",
    "add_parser",
    "is_json_input",
    "items_from_run",
    "left_padded",
    "load_model",
    "no_response_token_id",
    "pair_key",
    "read_items",
    "run",
    "score_items",
    "score_token_ids",
    "write_json",
    "write_table",
]

import argparse
import copy
import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kilt_chunks.rag.prompts import NO_RESPONSE, PROMPT_VERSION, abstention_messages
from kilt_chunks.ray_engine import init_ray

#: Torch dtypes accepted by ``--dtype`` (those of the released script).
DTYPES = ("float32", "float16", "bfloat16")
#: Prompts per forward pass (``--batch-size``).
DEFAULT_BATCH_SIZE = 8
#: Scores written to the cache at least this often (pairs).
FLUSH_PAIRS = 256
#: The DuckDB table of the scores (``--sql-db``).
TABLE = "llm_utility"


class UtilityError(ValueError):
    """Bad input of ``kilt-chunks utility``: the message names the file and
    the problem (printed as one line by the CLI)."""


# ------------------------------------------------------------------ inputs


def read_items(path: str | Path) -> list[dict]:
    """Items of a JSON file in the released input format: a list of objects
    with ``question`` (str) and ``passages`` (a list of objects; ``text`` is
    read, the rest kept).

    Raises:
        UtilityError: Naming the file and the first item that is not so.
        FileNotFoundError: If the file does not exist.
    """
    path = Path(path)
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UtilityError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(items, list):
        raise UtilityError(f"{path}: expected a JSON list of items, not {items!r:.40}")
    for number, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("question"), str)
            or not isinstance(item.get("passages", []), list)
            or not all(isinstance(p, dict) for p in item.get("passages", []))
        ):
            raise UtilityError(
                f"{path}, item {number}: expected an object with a string"
                " `question` and a list of objects `passages`"
            )
    return items


def items_from_run(
    run_path: str | Path, db_path: str | Path, task: str, k: int
) -> list[dict]:
    """Items in the released format from a chunk run of this project (TREC
    lines as ``kilt-chunks bm25`` writes them): one per query of the task
    (``bm25.task_queries``, in task order), its top-``k`` chunks as passages.

    Each item: ``example_id`` (query id), ``question`` (the query's input),
    ``answers`` (gold answers); each passage: ``doc_id`` (chunk id), ``rank``
    (1-based), ``text``, ``is_relevant`` (a chunk qrel of the build with
    relevance > 0: KILT provenance) and ``has_answer`` (a gold answer inside
    the chunk, KILT's normalisation: ``evaluation.answer_in_context``).

    Raises:
        UtilityError: If k < 1, the run ranks no chunk ids, or a chunk of the
            run is not in the build.
    """
    from kilt_chunks import evaluation
    from kilt_chunks.evaluation import bm25

    if k < 1:
        raise UtilityError(f"--k must be at least 1, not {k}")
    run = evaluation.read_run(run_path)
    if run.predictions and not run.is_chunk_run:
        raise UtilityError(f"{run_path}: ranks pages, not chunk ids of a build")
    queries = bm25.task_queries(db_path, task)
    task_gold = evaluation.gold_from_database(db_path, task)
    gold = {q.query_id: q for q in task_gold.queries}
    qrels = task_gold.chunk_qrels
    rankings = {
        q: run.predictions[q].ranking[:k] if q in run.predictions else []
        for q, _ in queries
    }
    wanted = evaluation.dedupe(c for ranking in rankings.values() for c in ranking)
    texts = evaluation.chunk_texts_from_database(db_path)(wanted)
    missing = [c for c in wanted if c not in texts]
    if missing:
        raise UtilityError(
            f"{run_path}: {len(missing)} chunk ids not in kilt_chunks of {db_path}"
            f" (first: {missing[0]}); a run of another build?"
        )
    items = []
    for query_id, question in queries:
        answers = gold[query_id].answers if query_id in gold else []
        relevant = qrels.get(query_id, {})
        items.append(
            {
                "example_id": query_id,
                "question": question,
                "answers": answers,
                "passages": [
                    {
                        "doc_id": chunk,
                        "rank": rank,
                        "text": texts[chunk],
                        "is_relevant": relevant.get(chunk, 0) > 0,
                        "has_answer": bool(
                            evaluation.answer_in_context(answers, [texts[chunk]], 1)
                        ),
                    }
                    for rank, chunk in enumerate(rankings[query_id], start=1)
                ],
            }
        )
    return items


def is_json_input(path: str | Path) -> bool:
    """True when the file's first non-blank character is ``[`` (the released
    JSON format); else it is read as a run."""
    with Path(path).open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                return line.lstrip().startswith("[")
    return False


# ------------------------------------------------------------------ cache


def pair_key(model: str, dtype: str, question: str, text: str) -> str:
    """The cache key of one pair: SHA-256 of the model string as given, the
    dtype, :data:`PROMPT_VERSION`, the question and the passage text."""
    payload = json.dumps([model, dtype, PROMPT_VERSION, question, text])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass
class UtilityCache:
    """Scores kept as Parquet files in a folder, one file per flush
    (``part-<uuid>.parquet``, written to a temporary name and renamed, so a
    killed run leaves only whole files). Columns: ``key``
    (:func:`pair_key`), ``model``, ``dtype``, ``prompt_version``,
    ``question``, ``passage_sha256``, ``no_res_prob``."""

    folder: Path
    pending: list[dict] = field(default_factory=list)

    def load(self) -> dict[str, float]:
        """Every cached ``key -> no_res_prob`` (the last written wins)."""
        import pyarrow.parquet as pq

        scores: dict[str, float] = {}
        for part in sorted(self.folder.glob("part-*.parquet"), key=os.path.getmtime):
            table = pq.read_table(part, columns=["key", "no_res_prob"])
            scores.update(
                zip(
                    table.column("key").to_pylist(),
                    table.column("no_res_prob").to_pylist(),
                    strict=True,
                )
            )
        return scores

    def add(self, row: dict) -> None:
        """Queue one row (written by :meth:`flush`)."""
        self.pending.append(row)

    def flush(self) -> None:
        """Write the queued rows as one new part file (nothing when none)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self.pending:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"part-{uuid.uuid4().hex}.parquet"
        tmp = self.folder / f".{name}.tmp"
        pq.write_table(pa.Table.from_pylist(self.pending), tmp)
        os.replace(tmp, self.folder / name)
        self.pending = []

    def size_bytes(self) -> int:
        """Bytes of the part files."""
        return sum(p.stat().st_size for p in self.folder.glob("part-*.parquet"))


# ------------------------------------------------------------------ model


def load_model(model_id: str, device: str, dtype: str) -> tuple[Any, Any]:
    """Tokenizer and model as the released script loads them: the tokenizer
    with ``padding_side="left"``, ``truncation_side="left"`` and the EOS
    token as pad token when it has none; the model with ``dtype`` and
    ``device_map=device``. Local files only (nothing is downloaded: a hub id
    must be in the local cache).

    Raises:
        UtilityError: If ``dtype`` is not one of :data:`DTYPES`, or the model
            is neither a local folder nor in the local hub cache.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if dtype not in DTYPES:
        raise UtilityError(f"--dtype {dtype!r}: one of {', '.join(DTYPES)}")
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            model_id, padding_side="left", truncation_side="left", local_files_only=True
        )
        model = AutoModelForCausalLM.from_pretrained(
            model_id,
            dtype=getattr(torch, dtype),
            device_map=device,
            local_files_only=True,
        )
    except OSError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        raise UtilityError(
            f"--model {model_id}: not a model folder nor in the local Hugging"
            f" Face cache (nothing is downloaded): {first}"
        ) from exc
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model.eval()
    return tokenizer, model


def abstention_prompt(tokenizer: Any, question: str, passage_text: str) -> str:
    """The chat-templated text of one pair (``format_abstention_prompt``)."""
    return tokenizer.apply_chat_template(
        abstention_messages(question, passage_text),
        tokenize=False,
        add_generation_prompt=True,
    )


def no_response_token_id(tokenizer: Any) -> int:
    """The first token id of "NO-RESPONSE" (without special tokens).

    Raises:
        UtilityError: If the tokenizer gives no token for it.
    """
    ids = tokenizer.encode(NO_RESPONSE, add_special_tokens=False)
    if not ids:
        raise UtilityError(f"the tokenizer gives no token for {NO_RESPONSE!r}")
    return int(ids[0])


def left_padded(
    sequences: Sequence[Sequence[int]], pad_id: int
) -> tuple[Any, Any, Any]:
    """``input_ids``, ``attention_mask`` and ``position_ids`` (long tensors,
    shape ``[batch, longest]``) of token id lists padded on the left; a
    prompt's positions count from 0 at its first real token (pads get 0), as
    when it runs alone."""
    import torch

    longest = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), longest), dtype=torch.long)
    for row, seq in enumerate(sequences):
        if seq:
            ids[row, longest - len(seq) :] = torch.tensor(list(seq), dtype=torch.long)
            mask[row, longest - len(seq) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids, mask, positions


def score_token_ids(
    model: Any,
    sequences: Sequence[Sequence[int]],
    token_id: int,
    pad_id: int,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_batch: Callable[[list[int], list[float]], None] | None = None,
) -> list[float]:
    """Probability of ``token_id`` after each sequence: the softmax of the
    last position's logits (in the model's dtype, as the released code).

    Sequences are sorted by length and scored ``batch_size`` at a time
    (:func:`left_padded`); ``on_batch(indices, probabilities)`` is called
    after each batch (cache, progress).

    Returns:
        One probability per sequence, in the input order.
    """
    import torch

    if batch_size < 1:
        raise UtilityError(f"--batch-size must be at least 1, not {batch_size}")
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    result = [0.0] * len(sequences)
    device = next(model.parameters()).device
    for start in range(0, len(order), batch_size):
        indices = order[start : start + batch_size]
        ids, mask, positions = left_padded([sequences[i] for i in indices], pad_id)
        with torch.no_grad():
            logits = model(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                position_ids=positions.to(device),
                logits_to_keep=1,
            ).logits[:, -1, :]
            probs = torch.softmax(logits, dim=-1)[:, token_id].tolist()
        for i, p in zip(indices, probs, strict=True):
            result[i] = float(p)
        if on_batch is not None:
            on_batch(indices, probs)
    return result


# ------------------------------------------------------------------ scoring


@dataclass
class ScoreReport:
    """What :func:`score_items` did: pairs in the input, taken from the
    cache, computed, and passages left without a score (no ``text``)."""

    pairs: int = 0
    cached: int = 0
    computed: int = 0
    without_text: int = 0
    seconds: float = 0.0
    cache_bytes: int = 0


def _pairs(items: Sequence[dict]) -> Iterator[tuple[int, int, str, str]]:
    for i, item in enumerate(items):
        for j, passage in enumerate(item.get("passages", [])):
            if isinstance(passage.get("text"), str):
                yield i, j, item["question"], passage["text"]


def score_items(
    items: Sequence[dict],
    model_id: str,
    *,
    cache_dir: str | Path,
    device: str = "cpu",
    dtype: str = "float32",
    batch_size: int = DEFAULT_BATCH_SIZE,
    engine: str = "local",
    ray_workers: int = 1,
    gpus_per_worker: float = 0.0,
    ray_address: str | None = None,
    progress: bool = True,
) -> tuple[list[dict], ScoreReport]:
    """``no_res_prob`` of every (question, passage) of the items.

    A passage without a string ``text`` gets no score (the released code
    prints an error and skips it). Pairs found in the cache are not
    computed; the others are computed (``engine`` ``local``: here;
    ``ray``: Ray Data on a local Ray or the cluster at ``ray_address``,
    :func:`_score_with_ray`) and written to the cache
    every :data:`FLUSH_PAIRS` pairs.

    Returns:
        A deep copy of the items with ``passages[].models_info[model_id] =
        {"no_res_prob": p}`` (the released format, keyed by the model string
        as given), and a :class:`ScoreReport`.
    """
    from tqdm import tqdm

    started = time.monotonic()
    cache = UtilityCache(Path(cache_dir))
    known = cache.load()
    pairs = list(_pairs(items))
    keys = [pair_key(model_id, dtype, q, t) for _, _, q, t in pairs]
    report = ScoreReport(
        pairs=len(pairs),
        without_text=sum(len(it.get("passages", [])) for it in items) - len(pairs),
    )
    todo: dict[str, tuple[str, str]] = {}
    for key, (_, _, question, text) in zip(keys, pairs, strict=True):
        if key not in known and key not in todo:
            todo[key] = (question, text)
    report.cached = sum(1 for key in keys if key in known)
    todo_keys = list(todo)
    tokenizer: Any = None
    model: Any = None
    if todo_keys and engine != "ray":  # loaded before the bar starts its clock
        tokenizer, model = load_model(model_id, device, dtype)
    bar = tqdm(
        total=len(todo_keys),
        desc=f"utility {model_id}",
        unit="pair",
        disable=not progress or not todo_keys,
    )

    def done(indices: list[int], probs: list[float]) -> None:
        for i, p in zip(indices, probs, strict=True):
            key = todo_keys[i]
            question, text = todo[key]
            known[key] = p
            cache.add(
                {
                    "key": key,
                    "model": model_id,
                    "dtype": dtype,
                    "prompt_version": PROMPT_VERSION,
                    "question": question,
                    "passage_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                    "no_res_prob": float(p),
                }
            )
        if len(cache.pending) >= FLUSH_PAIRS:
            cache.flush()
        bar.update(len(indices))

    try:
        if todo_keys and engine == "ray":
            _score_with_ray(
                [todo[k] for k in todo_keys],
                model_id,
                device=device,
                dtype=dtype,
                batch_size=batch_size,
                workers=ray_workers,
                gpus_per_worker=gpus_per_worker,
                address=ray_address,
                on_batch=done,
            )
        elif todo_keys:
            sequences = tokenizer(
                [abstention_prompt(tokenizer, q, t) for q, t in todo.values()],
                truncation=True,
            )["input_ids"]
            score_token_ids(
                model,
                sequences,
                no_response_token_id(tokenizer),
                tokenizer.pad_token_id,
                batch_size,
                on_batch=done,
            )
    finally:
        cache.flush()
        bar.close()
    report.computed = len(todo_keys)
    out = [copy.deepcopy(item) for item in items]
    for key, (i, j, _, _) in zip(keys, pairs, strict=True):
        passage = out[i]["passages"][j]
        passage.setdefault("models_info", {})[model_id] = {"no_res_prob": known[key]}
    report.seconds = time.monotonic() - started
    report.cache_bytes = cache.size_bytes()
    return out, report


class _RayScorer:
    """A Ray Data actor: one model per worker, scoring batches of prompts."""

    def __init__(self, model_id: str, device: str, dtype: str, batch_size: int):
        self.tokenizer, self.model = load_model(model_id, device, dtype)
        self.token_id = no_response_token_id(self.tokenizer)
        self.batch_size = batch_size

    def __call__(self, batch: dict) -> dict:
        sequences = self.tokenizer(
            [
                abstention_prompt(self.tokenizer, q, t)
                for q, t in zip(batch["question"], batch["text"], strict=True)
            ],
            truncation=True,
        )["input_ids"]
        probs = score_token_ids(
            self.model,
            sequences,
            self.token_id,
            self.tokenizer.pad_token_id,
            self.batch_size,
        )
        return {"index": batch["index"], "no_res_prob": probs}


def _score_with_ray(
    pairs: Sequence[tuple[str, str]],
    model_id: str,
    *,
    device: str,
    dtype: str,
    batch_size: int,
    workers: int,
    gpus_per_worker: float,
    address: str | None,
    on_batch: Callable[[list[int], list[float]], None],
) -> None:
    """Score pairs with Ray Data: ``map_batches`` over ``workers`` actors
    (:class:`_RayScorer`, each with ``gpus_per_worker`` GPUs: one model per
    GPU), results streamed back to the driver, which feeds ``on_batch``
    (cache, progress). Connects to the cluster at ``address`` (``auto``,
    ``ray://host:10001``) when given, else starts a Ray of its own on this
    machine (``address="local"``: never another process's cluster found
    through /tmp/ray) and shuts it down at the end; an already initialised
    Ray is used as it is."""
    ray, started = init_ray(
        address, os.cpu_count() or 1, UtilityError, "kilt-chunks[rag]"
    )
    try:
        _stream_ray_scores(
            ray, pairs, model_id, device, dtype, batch_size, workers,
            gpus_per_worker, on_batch,
        )  # fmt: skip
    finally:
        if started:
            ray.shutdown()


def _stream_ray_scores(
    ray: Any,
    pairs: Sequence[tuple[str, str]],
    model_id: str,
    device: str,
    dtype: str,
    batch_size: int,
    workers: int,
    gpus_per_worker: float,
    on_batch: Callable[[list[int], list[float]], None],
) -> None:
    dataset = ray.data.from_items(
        [{"index": i, "question": q, "text": t} for i, (q, t) in enumerate(pairs)]
    ).map_batches(
        _RayScorer,
        fn_constructor_kwargs={
            "model_id": model_id,
            "device": device,
            "dtype": dtype,
            "batch_size": batch_size,
        },
        batch_size=batch_size * 4,
        batch_format="numpy",
        concurrency=workers,
        num_gpus=gpus_per_worker or None,
    )
    for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
        on_batch(
            [int(i) for i in batch["index"]],
            [float(p) for p in batch["no_res_prob"]],
        )


# ------------------------------------------------------------------ outputs


def write_json(items: Sequence[dict], path: str | Path) -> None:
    """Write items as the released ``write_json`` does (``indent=2``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(list(items), indent=2), encoding="utf-8")


def write_table(
    items: Sequence[dict], model_id: str, dtype: str, db_path: str | Path
) -> int:
    """Replace this model's, dtype's and prompt version's rows of the DuckDB
    table :data:`TABLE` with the scores of the items: one row per passage
    with a score (``example_id``, ``question``, ``passage_index``,
    ``doc_id``, ``rank``, ``model``, ``dtype``, ``prompt_version``,
    ``no_res_prob``, ``utility`` = 1 - no_res_prob, ``is_relevant``,
    ``has_answer``; absent fields are NULL). Returns rows written."""
    import duckdb
    import pyarrow as pa

    rows = [
        {
            "example_id": None
            if item.get("example_id") is None
            else str(item["example_id"]),
            "question": item["question"],
            "passage_index": j,
            "doc_id": None if p.get("doc_id") is None else str(p["doc_id"]),
            "rank": p.get("rank"),
            "model": model_id,
            "dtype": dtype,
            "prompt_version": PROMPT_VERSION,
            "no_res_prob": p["models_info"][model_id]["no_res_prob"],
            "utility": 1.0 - p["models_info"][model_id]["no_res_prob"],
            "is_relevant": p.get("is_relevant"),
            "has_answer": p.get("has_answer"),
        }
        for item in items
        for j, p in enumerate(item.get("passages", []))
        if model_id in p.get("models_info", {})
    ]
    schema = pa.schema(
        [
            ("example_id", pa.string()),
            ("question", pa.string()),
            ("passage_index", pa.int32()),
            ("doc_id", pa.string()),
            ("rank", pa.int32()),
            ("model", pa.string()),
            ("dtype", pa.string()),
            ("prompt_version", pa.string()),
            ("no_res_prob", pa.float64()),
            ("utility", pa.float64()),
            ("is_relevant", pa.bool_()),
            ("has_answer", pa.bool_()),
        ]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    with duckdb.connect(str(db_path)) as con:
        con.register("new_rows", table)
        con.execute(
            f"create table if not exists {TABLE} as select * from new_rows limit 0"
        )
        con.execute(
            f"delete from {TABLE} where model = ? and dtype = ? and prompt_version = ?",
            [model_id, dtype, PROMPT_VERSION],
        )
        con.execute(f"insert into {TABLE} select * from new_rows")
    return len(rows)


# ------------------------------------------------------------------ CLI


def add_parser(commands: Any, default_db: str) -> None:
    """Register ``kilt-chunks utility`` on the CLI's subparsers."""
    parser = commands.add_parser(
        "utility",
        help="each passage's no_res_prob / utility for an LLM (UDCG's released code)",
        description="no_res_prob of every (question, passage): the probability"
        " of the first token of NO-RESPONSE when the LLM is given the passage"
        " alone, equal to GiovanniTRA/UDCG compute_abstention_probability.py;"
        " batched, cached (Parquet) and resumable. INPUT is a JSON file in the"
        " released format or a run of this project (with --task and --k).",
    )
    parser.add_argument("input", help="released-format JSON, or a TREC chunk run")
    parser.add_argument("--model", required=True, help="model folder or cached hub id")
    parser.add_argument(
        "--out", required=True, help="JSON file to write (released format)"
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda, auto (device_map)")
    parser.add_argument("--dtype", default="float32", choices=DTYPES)
    parser.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        help="prompts per forward pass",
    )
    parser.add_argument(
        "--cache", help="cache folder (default: <out>.cache/ beside the output)"
    )
    parser.add_argument("--task", help="task of the run's queries (run input)")
    parser.add_argument(
        "--k", type=int, default=10, help="top chunks per query (run input)"
    )
    parser.add_argument(
        "--db", default=default_db, help="DuckDB file of the build (run input)"
    )
    parser.add_argument(
        "--sql-db",
        help=f"DuckDB file to write the table {TABLE} into (default: none)",
    )
    parser.add_argument("--engine", choices=("local", "ray"), default="local")
    parser.add_argument(
        "--ray-workers", type=int, default=1, help="Ray actors (models)"
    )
    parser.add_argument(
        "--gpus-per-worker",
        type=float,
        default=0.0,
        help="GPUs per Ray actor (1: one model per GPU)",
    )
    parser.add_argument(
        "--ray-address",
        help="existing Ray cluster, e.g. auto or ray://host:10001 (default: a"
        " local Ray of its own)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> str:
    """``kilt-chunks utility``: score, write the JSON (and the table), return
    the lines to print.

    Raises:
        UtilityError: Bad input (one line naming the file).
        FileNotFoundError: If the input or DuckDB file does not exist.
    """
    if is_json_input(args.input):
        items = read_items(args.input)
        source = "released JSON"
    else:
        if not args.task:
            raise UtilityError(f"{args.input}: a run needs --task (and --k, --db)")
        if not Path(args.db).exists():
            raise FileNotFoundError(f"{args.db}: no such DuckDB file; run `dbt build`")
        items = items_from_run(args.input, args.db, args.task, args.k)
        source = f"run, task {args.task}, top {args.k}"
    cache = Path(args.cache or f"{args.out}.cache")
    scored, report = score_items(
        items,
        args.model,
        cache_dir=cache,
        device=args.device,
        dtype=args.dtype,
        batch_size=args.batch_size,
        engine=args.engine,
        ray_workers=args.ray_workers,
        gpus_per_worker=args.gpus_per_worker,
        ray_address=args.ray_address,
        progress=not args.no_progress,
    )
    write_json(scored, args.out)
    rate = report.computed / report.seconds if report.computed and report.seconds else 0
    lines = [
        f"utility {args.out}: {len(scored):,} items ({source}), {report.pairs:,} pairs:"
        f" {report.cached:,} from the cache, {report.computed:,} computed"
        f" ({rate:.1f} pairs/s, {report.seconds:.1f} s)",
        f"  cache {cache}/: {report.cache_bytes / 1e6:.2f} MB",
    ]
    if report.without_text:
        lines.append(
            f"  {report.without_text:,} passages without `text`: no score (as the"
            " released code, which skips them)"
        )
    if args.sql_db:
        rows = write_table(scored, args.model, args.dtype, args.sql_db)
        lines.append(f"  table {TABLE} in {args.sql_db}: {rows:,} rows")
    return "\n".join(lines)
