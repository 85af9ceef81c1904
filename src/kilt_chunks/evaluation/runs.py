"""Runs: a TREC run or KILT predictions read into one ranking (and
answer, and contexts) per query; chunk texts from a build for a chunk run."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kilt_chunks.evaluation.ids import (
    EvaluationError,
    dedupe,
    is_chunk_id,
    kilt_str,
    untrec_id,
)


@dataclass
class Prediction:
    """One query of a run.

    Attributes:
        ranking: Page or chunk ids, best first, as given (stripped for a KILT
            prediction; entries without ``wikipedia_id`` skipped).
        contexts: KILT prediction: the ``text`` of each provenance entry in
            order (None without one); a chunk run: filled from the build.
        answer: The predicted answer, if the prediction has one.
    """

    ranking: list[str]
    contexts: list[str | None] = field(default_factory=list)
    answer: str | None = None


@dataclass
class Run:
    """A run read by :func:`read_run`."""

    predictions: dict[str, Prediction]
    format: str
    notes: dict[str, int] = field(default_factory=dict)

    @property
    def is_chunk_run(self) -> bool:
        """True when the run ranks chunk ids."""
        return any(
            is_chunk_id(d) for p in self.predictions.values() for d in p.ranking[:1]
        )

    @property
    def has_answers(self) -> bool:
        """True when any prediction carries an answer."""
        return any(p.answer is not None for p in self.predictions.values())


def read_run(path: str | Path) -> Run:
    """Read a run in TREC format or KILT's prediction format.

    TREC: ``query_id Q0 doc_id rank score [tag]`` per line, ids as
    :func:`trec_id` writes them; each query's documents ordered by score
    (highest first), ties by the rank column. KILT: JSON lines with ``id``
    and ``output``, read as KILT's ``filter_answers`` and ``_get_ids_list``
    do (rules 3-5); an entry with a ``chunk_id`` key ranks that chunk.

    Raises:
        EvaluationError: Naming the file and line of a malformed line, or of
            a score that is NaN or infinite (it has no place in a ranking).
        FileNotFoundError: If the file does not exist.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        lines = f.read().splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("{"):
        return _read_kilt_run(path, lines)
    scored: dict[str, list[tuple[float, int, str]]] = {}
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) not in (5, 6):
            raise EvaluationError(
                f"{path}, line {number}: expected `query_id Q0 doc_id rank score"
                f" [tag]`, got {len(fields)} fields"
            )
        try:
            rank, score = int(fields[3]), float(fields[4])
        except ValueError as exc:
            raise EvaluationError(
                f"{path}, line {number}: rank {fields[3]!r} or score {fields[4]!r}"
                " is not a number"
            ) from exc
        if not math.isfinite(score):
            raise EvaluationError(
                f"{path}, line {number}: score {fields[4]!r} is not a finite"
                " number (NaN and infinities cannot be ranked)"
            )
        scored.setdefault(untrec_id(fields[0]), []).append(
            (-score, rank, untrec_id(fields[2]))
        )
    return Run(
        {
            q: Prediction(dedupe(d for _, _, d in sorted(docs)))
            for q, docs in scored.items()
        },
        "trec",
    )


def _read_kilt_run(path: Path, lines: list[str]) -> Run:
    predictions: dict[str, Prediction] = {}
    notes = Counter[str]()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            query_id = kilt_str(item["id"])
            outputs = item.get("output") or []
            with_provenance = [o for o in outputs if "provenance" in o]
            with_answer = [o for o in outputs if "answer" in o]
            entries = with_provenance[0]["provenance"] or [] if with_provenance else []
            ranking = dedupe(
                kilt_str(e["chunk_id"] if "chunk_id" in e else e["wikipedia_id"])
                for e in entries
                if "chunk_id" in e or "wikipedia_id" in e
            )
            contexts = [e.get("text") for e in entries]
            answer = with_answer[0]["answer"] if with_answer else None
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise EvaluationError(
                f"{path}, line {number}: not a KILT prediction (a JSON object with"
                f" `id` and a list `output`): {exc!r}"
            ) from exc
        if query_id in predictions:
            notes["duplicate prediction ids (first kept; KILT refuses the file)"] += 1
            continue
        if len(with_provenance) == 0:
            notes[
                "predictions without an output with provenance (page scores 0;"
                " KILT's eval_retrieval refuses the file)"
            ] += 1
        elif len(with_provenance) > 1:
            notes[
                "predictions with several outputs with provenance (first used;"
                " KILT refuses the file)"
            ] += 1
        skipped = sum(
            1 for e in entries if "chunk_id" not in e and "wikipedia_id" not in e
        )
        if skipped:
            notes["provenance entries without wikipedia_id (skipped, as KILT)"] += (
                skipped
            )
        predictions[query_id] = Prediction(ranking, contexts, answer)
    return Run(predictions, "kilt", dict(notes))


def chunk_texts_from_database(
    db_path: str | Path,
) -> Callable[[list[str]], dict[str, str]]:
    """A ``chunk_texts`` for :func:`evaluate`: the text of chunk ids from the
    build's ``kilt_chunks`` (one join per call)."""

    def lookup(chunk_ids: list[str]) -> dict[str, str]:
        import duckdb
        import pyarrow as pa

        wanted = pa.table({"chunk_id": pa.array(chunk_ids, pa.string())})
        with duckdb.connect(str(db_path), read_only=True) as con:
            con.register("wanted_chunks", wanted)
            rows = con.sql(
                "select c.chunk_id, c.text from kilt_chunks as c"
                " semi join wanted_chunks as w on c.chunk_id = w.chunk_id"
            ).fetchall()
        return dict(rows)

    return lookup
