"""A BM25 baseline over ``kilt_chunks``: index the chunks, write a TREC run.

Built on `bm25s <https://github.com/xhluca/bm25s>`_ (BM25 in NumPy/SciPy,
eager sparse scoring, offline from PyPI as a wheel; Lù, *BM25S: Orders of
magnitude faster lexical search via eager sparse scoring*, 2024) with its
defaults: Lucene's BM25 variant, ``k1 = 1.5``, ``b = 0.75``. Each chunk is
indexed as ``title + "\\n" + text`` (its Markdown heading path, then its text:
what the README advises to embed), lowercased, split on ``\\w\\w+``, English
stop words removed and stemmed with the Snowball English stemmer (PyStemmer).
Queries go through the same steps.

Memory: bm25s holds every token of the corpus as a Python list while it
indexes, then a CSC matrix of one float32 score and one int32 row per distinct
(term, chunk) pair. :func:`build_index` indexes ``shard_chunks`` chunks at a
time into separate shards (``shard_0``, ``shard_1``, ...; each scored with its
own document frequencies, so scores of different shards are close to, not
exactly, those of one index) and :func:`search` merges each shard's top k by
score. Measured figures and the full-corpus estimate are in ``bench/RESULTS_BM25.md``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from importlib.metadata import version
from pathlib import Path

import duckdb

from kilt_chunks.evaluation import tasks_in_database

#: Chunks read from the DuckDB file at a time while indexing.
READ_BATCH_ROWS = 50_000
#: Default chunks per index shard (0 = one shard for the whole corpus).
DEFAULT_SHARD_CHUNKS = 0
#: Name of the index description file in the index folder.
META_FILE = "kilt_bm25.json"
#: Tag written in the last column of the TREC run.
RUN_TAG = "bm25s"


class Bm25Error(RuntimeError):
    """The index cannot be built or used (no chunks, a stale index, ...)."""


def _stemmer():
    """The Snowball English stemmer (PyStemmer)."""
    import Stemmer

    return Stemmer.Stemmer("english")


def _tokenizer():
    from bm25s.tokenization import Tokenizer

    return Tokenizer(stopwords="english", stemmer=_stemmer().stemWord)


def corpus_fingerprint(con: duckdb.DuckDBPyConnection) -> dict:
    """What identifies the chunks an index was built from.

    Returns:
        ``num_chunks``, and the first and last ``chunk_id`` of ``kilt_chunks``
        with the build's input and settings (``kilt_build_info``), so that an
        index of another build is not used by mistake.
    """
    num, first, last = con.sql(
        "select count(*), min(chunk_id), max(chunk_id) from kilt_chunks"
    ).fetchall()[0]
    info = con.sql("select kilt_path, splitter, chunk_size from kilt_build_info")
    kilt_path, splitter, chunk_size = info.fetchall()[0]
    return {
        "num_chunks": num,
        "first_chunk_id": first,
        "last_chunk_id": last,
        "kilt_path": kilt_path,
        "splitter": splitter,
        "chunk_size": chunk_size,
    }


def _chunk_batches(
    con: duckdb.DuckDBPyConnection, batch_rows: int
) -> Iterator[tuple[list[str], list[str]]]:
    reader = con.sql(
        "select chunk_id, title || chr(10) || text as body from kilt_chunks"
    ).to_arrow_reader(batch_rows)
    for batch in reader:
        yield batch.column("chunk_id").to_pylist(), batch.column("body").to_pylist()


def build_index(
    db_path: str | Path,
    index_dir: str | Path,
    *,
    shard_chunks: int = DEFAULT_SHARD_CHUNKS,
    batch_rows: int = READ_BATCH_ROWS,
) -> dict:
    """Index every chunk of ``kilt_chunks`` with BM25 into ``index_dir``.

    Args:
        db_path: DuckDB file of a finished build (read-only).
        index_dir: Folder to write (created; files of an earlier index in it
            are replaced): one bm25s index per shard (``shard_<n>/``), the
            chunk ids of each shard (``shard_<n>/chunk_ids.txt``, one per
            line, in index order) and :data:`META_FILE`.
        shard_chunks: Chunks per shard; 0 = a single index.
        batch_rows: Chunks read and tokenized at a time.

    Returns:
        The index description written to :data:`META_FILE`: the corpus
        fingerprint (:func:`corpus_fingerprint`), ``shards``, ``num_tokens``
        (after stop words), ``vocabulary`` (distinct stems, over all shards),
        ``index_seconds`` (wall time, reading and tokenizing included),
        ``bm25s_version``.

    Raises:
        Bm25Error: If ``kilt_chunks`` is empty.
    """
    import bm25s

    start = time.perf_counter()
    index_dir = Path(index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    for old in index_dir.glob("shard_*"):
        for file in old.iterdir():
            file.unlink()
        old.rmdir()
    (index_dir / META_FILE).unlink(missing_ok=True)
    with duckdb.connect(str(db_path), read_only=True) as con:
        fingerprint = corpus_fingerprint(con)
        if not fingerprint["num_chunks"]:
            raise Bm25Error(f"{db_path}: kilt_chunks is empty; nothing to index")
        shards = 0
        num_tokens = 0
        vocabulary: set[str] = set()
        ids: list[str] = []
        tokenizer = _tokenizer()
        tokens: list[list[int]] = []

        def flush() -> None:
            nonlocal shards, ids, tokens, tokenizer, num_tokens
            if not ids:
                return
            vocab = tokenizer.get_vocab_dict()
            retriever = bm25s.BM25()
            retriever.index(
                bm25s.tokenization.Tokenized(ids=tokens, vocab=vocab),
                show_progress=False,
            )
            folder = index_dir / f"shard_{shards}"
            retriever.save(folder, show_progress=False)
            (folder / "chunk_ids.txt").write_text(
                "".join(f"{cid}\n" for cid in ids), encoding="utf-8"
            )
            vocabulary.update(vocab)
            shards += 1
            ids, tokens, tokenizer = [], [], _tokenizer()

        for chunk_ids, bodies in _chunk_batches(con, batch_rows):
            while chunk_ids:
                # A piece never crosses a shard boundary: each shard has a
                # tokenizer (vocabulary) of its own.
                room = shard_chunks - len(ids) if shard_chunks else len(chunk_ids)
                piece, chunk_ids = chunk_ids[:room], chunk_ids[room:]
                texts, bodies = bodies[:room], bodies[room:]
                docs = list(tokenizer.streaming_tokenize(texts))
                tokens += docs
                ids += piece
                num_tokens += sum(len(doc) for doc in docs)
                if shard_chunks and len(ids) >= shard_chunks:
                    flush()
        flush()
    meta = {
        **fingerprint,
        "shards": shards,
        "shard_chunks": shard_chunks,
        "num_tokens": num_tokens,
        "vocabulary": len(vocabulary),
        "index_seconds": round(time.perf_counter() - start, 3),
        "bm25s_version": version("bm25s"),
    }
    (index_dir / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def index_is_current(db_path: str | Path, index_dir: str | Path) -> bool:
    """True when ``index_dir`` holds an index of the chunks now in ``db_path``."""
    meta_file = Path(index_dir) / META_FILE
    if not meta_file.exists():
        return False
    meta = json.loads(meta_file.read_text())
    with duckdb.connect(str(db_path), read_only=True) as con:
        current = corpus_fingerprint(con)
    return all(meta.get(key) == value for key, value in current.items())


def search(
    index_dir: str | Path, queries: Sequence[str], k: int = 100
) -> list[list[tuple[str, float]]]:
    """Top ``k`` chunks of each query by BM25 score.

    Args:
        index_dir: Folder written by :func:`build_index`.
        queries: Query texts.
        k: Chunks per query (fewer when the corpus is smaller).

    Returns:
        Per query, ``(chunk_id, score)`` pairs, best first (ties: index
        order). A query without any indexed term gets chunks of score 0.

    Raises:
        Bm25Error: If ``index_dir`` holds no index.
    """
    import bm25s

    index_dir = Path(index_dir)
    shards = sorted(index_dir.glob("shard_*"), key=lambda p: int(p.name[6:]))
    if not (index_dir / META_FILE).exists() or not shards:
        raise Bm25Error(f"{index_dir}: no BM25 index (run `kilt-chunks bm25 index`)")
    query_tokens = bm25s.tokenize(
        list(queries),
        stopwords="english",
        stemmer=_stemmer(),
        return_ids=False,
        show_progress=False,
    )
    # An empty query (no term left) still needs one token for bm25s.
    query_tokens = [q if q else [""] for q in query_tokens]
    merged: list[list[tuple[str, float]]] = [[] for _ in queries]
    for shard in shards:
        retriever = bm25s.BM25.load(shard, show_progress=False)
        chunk_ids = (shard / "chunk_ids.txt").read_text(encoding="utf-8").split()
        top = min(k, len(chunk_ids))
        docs, scores = retriever.retrieve(
            query_tokens, k=top, show_progress=False, n_threads=1
        )
        for i in range(len(query_tokens)):
            merged[i] += [
                (chunk_ids[int(d)], float(s))
                for d, s in zip(docs[i], scores[i], strict=True)
            ]
    return [
        sorted(hits, key=lambda hit: -hit[1])[:k] if len(shards) > 1 else hits
        for hits in merged
    ]


def write_trec_run(
    path: str | Path,
    query_ids: Sequence[str],
    hits: Sequence[Sequence[tuple[str, float]]],
    tag: str = RUN_TAG,
) -> int:
    """Write a TREC run: ``query_id Q0 chunk_id rank score tag`` per line.

    Args:
        path: File to write (its folder is created).
        query_ids: One id per query (no white space).
        hits: Per query, ``(chunk_id, score)`` best first (:func:`search`).
        tag: Run name, the last column.

    Returns:
        Lines written. Ranks start at 1.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for query_id, query_hits in zip(query_ids, hits, strict=True):
            for rank, (chunk_id, score) in enumerate(query_hits, start=1):
                out.write(f"{query_id} Q0 {chunk_id} {rank} {score:.6f} {tag}\n")
                lines += 1
    return lines


def task_queries(db_path: str | Path, task: str) -> list[tuple[str, str]]:
    """``(query_id, input)`` of a task's usable queries, from ``kilt_queries``.

    Raises:
        Bm25Error: If the task has no queries there (naming the tasks that do).
    """
    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute(
            "select query_id, input from kilt_queries where task = ? order by query_id",
            [task],
        ).fetchall()
        if not rows:
            raise Bm25Error(
                f"task {task!r}: no queries in kilt_queries (tasks there: "
                f"{tasks_in_database(con)})"
            )
    return [(qid, text or "") for qid, text in rows]


def peak_rss_bytes() -> int:
    """Peak resident memory of this process so far (bytes; Linux ru_maxrss)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


__all__ = [
    "Bm25Error",
    "build_index",
    "index_is_current",
    "search",
    "task_queries",
    "write_trec_run",
    "peak_rss_bytes",
]
