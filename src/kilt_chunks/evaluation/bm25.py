"""A BM25 baseline over ``kilt_chunks``: one on-disk index, a TREC run.

Built on `tantivy <https://github.com/quickwit-oss/tantivy-py>`_ (a Rust
inverted index in the manner of Lucene, Python wheels on PyPI, no JVM): the
postings live in files on disk, so the whole corpus is one index, every
query is scored with the document frequencies of the whole corpus (exact
BM25, no shards), and memory is bounded by the indexing buffer
(:data:`WRITER_HEAP_BYTES`) while indexing and by the operating system's page
cache while searching. Scoring is tantivy's BM25 (Lucene's formula with
``k1 = 1.2``, ``b = 0.75``, idf ``ln(1 + (N - n + 0.5) / (n + 0.5))``; the
length normalisation uses tantivy's one-byte field norms, as Lucene does).

Each chunk is indexed as ``title + "\\n" + text`` (its Markdown heading path,
then its text), with its ``rowid`` in ``kilt_chunks`` (storage order) as a
fast field (a column read by document address, :data:`ROW_FIELD`): a search
reads the rows of its hits from that column, and the chunk ids of all hits
of all queries come from ``kilt_chunks`` in one DuckDB query
(:func:`chunk_ids_of_rows`), not from tantivy's document store (index format
1 stored the chunk id there: one store read per hit).

Text analysis, for chunks and queries alike: tantivy's ``simple`` tokenizer
(runs of letters and digits), tokens over 40 bytes dropped, lowercased,
English stop words removed, Snowball English stemmer. A query is the
disjunction (``Should``) of its tokens; a query with no token left (only
stop words) returns no chunk.

Indexing commits every :data:`COMMIT_CHUNKS` chunks and reads the chunks in
``kilt_chunks``'s storage order (``rowid``), so an index killed part way is
resumed at its last commit by the next :func:`build_index` (the number of
committed documents is where to start again; the corpus fingerprint must be
the same); an interrupted build never leaves an index that
:func:`index_is_current` takes for complete (the description file
:data:`META_FILE` is written last). Measured figures at full size (23.7 M
chunks) are in ``bench/RESULTS_BM25.md``, with two engines that prune and
were not taken: PISA (``pyterrier_pisa``: faster search, but a one-thread
index build of about an hour and over 2 GiB at full size, Robertson's idf,
an ASCII-only tokenizer) and Lance (``pylance``: tantivy's scoring, no
faster, more memory, a copy of the text). The engine that prunes is
optional and needs Java: :mod:`kilt_chunks.evaluation.lucene` (Anserini).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path
from typing import Any

import duckdb

from kilt_chunks.evaluation import tasks_in_database, trec_id
from kilt_chunks.progress import Progress

#: Chunks read from the DuckDB file at a time while indexing.
READ_BATCH_ROWS = 50_000
#: Chunks between two commits of the index (the resume points).
COMMIT_CHUNKS = 1_000_000
#: Memory budget of tantivy's index writer, all its threads together (bytes).
WRITER_HEAP_BYTES = 512 * 1024 * 1024
#: Name of the index description file in the index folder (written last).
META_FILE = "kilt_bm25.json"
#: Name of the file that records the corpus of an index being built.
PARTIAL_FILE = "kilt_bm25.partial.json"
#: Name under which the analyzer is registered with the index.
ANALYZER = "kilt_en"
#: Tag written in the last column of the TREC run.
RUN_TAG = "bm25-tantivy"
#: Queries handed to a search thread at a time.
SEARCH_BATCH = 64
#: Layout of the index (recorded in :data:`META_FILE`; an index of another
#: format is rebuilt by ``kilt-chunks bm25`` and refused by :func:`search`).
#: 1: the chunk id as a stored text field; 2: the chunk's ``kilt_chunks``
#: rowid as a u64 fast field (:data:`ROW_FIELD`), nothing stored.
INDEX_FORMAT = 2
#: Name of the fast field that holds a chunk's rowid in ``kilt_chunks``.
ROW_FIELD = "row"


class Bm25Error(RuntimeError):
    """The index cannot be built or used (no chunks, a stale index, ...)."""


def _analyzer() -> Any:
    """The text analysis of chunks and queries (see the module docstring)."""
    from tantivy import Filter, TextAnalyzerBuilder, Tokenizer

    return (
        TextAnalyzerBuilder(Tokenizer.simple())
        .filter(Filter.remove_long(40))
        .filter(Filter.lowercase())
        .filter(Filter.stopword("english"))
        .filter(Filter.stemmer("english"))
        .build()
    )


def _schema() -> Any:
    from tantivy import SchemaBuilder

    builder = SchemaBuilder()
    builder.add_unsigned_field(ROW_FIELD, stored=False, indexed=False, fast=True)
    builder.add_text_field(
        "body", stored=False, tokenizer_name=ANALYZER, index_option="freq"
    )
    return builder.build()


def _open(index_dir: Path) -> Any:
    from tantivy import Index

    index = Index(_schema(), path=str(index_dir), reuse=True)
    index.register_tokenizer(ANALYZER, _analyzer())
    return index


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


def chunk_rows(
    db_path: str | Path, start: int = 0, batch_rows: int = READ_BATCH_ROWS
) -> Iterator[tuple[list[int], list[str]]]:
    """``(rowids, bodies)`` batches of ``kilt_chunks`` in storage order
    (DuckDB keeps insertion order in a scan; the table of a build has rowids
    0 to n - 1), from rowid ``start`` on (body = ``title + "\\n" + text``)."""
    with duckdb.connect(str(db_path), read_only=True) as con:
        reader = con.sql(
            "select rowid as row, title || chr(10) || text as body"
            f" from kilt_chunks where rowid >= {int(start)}"
        ).to_arrow_reader(batch_rows)
        for batch in reader:
            yield batch.column("row").to_pylist(), batch.column("body").to_pylist()


def chunk_ids_of_rows(db_path: str | Path, rows: Sequence[int]) -> list[str | None]:
    """The ``chunk_id`` of each ``kilt_chunks`` rowid in ``rows``, in one
    DuckDB query: a semi join of the distinct rows with the table (one scan
    of its ``chunk_id`` column, ~1-3 s at 23.7 M chunks), its result kept in
    Arrow (no Python object per row but the ids returned).

    Returns:
        The chunk ids in the order of ``rows`` (repeated rows repeated);
        None for a row that is not in the table.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = pa.array(rows, pa.int64())
    with duckdb.connect(str(db_path), read_only=True) as con:
        con.register("wanted_rows", pa.table({"row": pc.unique(wanted)}))
        found = con.sql(
            "select rowid as row, chunk_id from kilt_chunks"
            " where rowid in (select row from wanted_rows)"
        ).to_arrow_table()
    positions = pc.index_in(wanted, value_set=found.column("row"))
    return found.column("chunk_id").take(positions).to_pylist()


def index_chunks(
    index_dir: str | Path,
    fingerprint: dict,
    batches: Iterable[tuple[list[int], list[str]]]
    | Callable[[int], Iterable[tuple[list[int], list[str]]]]
    | None = None,
    *,
    db_path: str | Path | None = None,
    threads: int | None = None,
    heap_bytes: int = WRITER_HEAP_BYTES,
    commit_chunks: int = COMMIT_CHUNKS,
    progress_seconds: float = 30,
) -> dict:
    """Index chunks into ``index_dir``, resuming an interrupted index there.

    Either ``db_path`` (the chunks of ``kilt_chunks`` in storage order, read
    from the first chunk not yet committed) or ``batches`` (an iterable of
    ``(rows, bodies)`` in a fixed order, which must yield the same chunks
    again on a resume: its first chunks already committed are skipped; or a
    callable taking the number of committed chunks and returning the chunks
    after them) gives the chunks. A chunk's row (its ``kilt_chunks`` rowid,
    or whatever number the caller resolves to a chunk id later) is stored in
    the fast field :data:`ROW_FIELD`.

    Args:
        index_dir: Folder of the index (created). An index of another
            ``fingerprint`` there is removed first.
        fingerprint: What identifies the corpus (:func:`corpus_fingerprint`);
            ``num_chunks`` is the number of chunks to index.
        threads: Indexing threads of tantivy (default: the cores, at most 4).
        heap_bytes: Memory budget of the writer, all threads together.
        commit_chunks: Chunks between two commits (resume points).
        progress_seconds: Seconds between progress lines (0: quiet).

    Returns:
        The index description written to :data:`META_FILE`: the fingerprint,
        ``num_indexed`` (documents in the index), ``resumed_from`` (chunks
        committed by an earlier run), ``index_seconds`` (wall time of this
        run), ``index_bytes``, ``tantivy_version``, ``index_format``
        (:data:`INDEX_FORMAT`).

    Raises:
        Bm25Error: If there is no chunk to index, or the chunks given do not
            add up to ``fingerprint["num_chunks"]``.
    """
    index_dir = Path(index_dir)
    total = fingerprint["num_chunks"]
    if not total:
        raise Bm25Error(f"{index_dir}: kilt_chunks is empty; nothing to index")
    start_time = time.perf_counter()
    partial = index_dir / PARTIAL_FILE
    meta_file = index_dir / META_FILE
    fingerprint = {**fingerprint, "index_format": INDEX_FORMAT}
    if index_dir.exists():
        recorded = (
            json.loads(partial.read_text(encoding="utf-8"))
            if partial.exists()
            else None
        )
        if recorded != fingerprint or meta_file.exists():
            shutil.rmtree(index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    partial.write_text(json.dumps(fingerprint, indent=2) + "\n", encoding="utf-8")
    index = _open(index_dir)
    index.reload()
    done = index.searcher().num_docs
    threads = threads or min(4, os.cpu_count() or 1)
    writer = index.writer(heap_size=heap_bytes, num_threads=threads)
    progress = Progress(
        "bm25 index",
        total_bytes=None,
        interval=progress_seconds,
        unit="chunks",
    )
    if done:
        Progress.note(f"bm25 index: resuming after {done:,} committed chunks")
    from tantivy import Document

    if batches is None:
        if db_path is None:
            raise ValueError("index_chunks needs db_path or batches")
        batches = chunk_rows(db_path, start=done)
        skip = 0
    elif callable(batches):
        batches = batches(done)  # starts after the committed chunks itself
        skip = 0
    else:
        skip = done
    added = done
    since_commit = 0
    try:
        for rows, bodies in batches:
            if skip:
                if skip >= len(rows):
                    skip -= len(rows)
                    continue
                rows, bodies = rows[skip:], bodies[skip:]
                skip = 0
            nbytes = 0
            for row, body in zip(rows, bodies, strict=True):
                document = Document()
                document.add_unsigned(ROW_FIELD, row)
                document.add_text("body", body)
                writer.add_document(document)
                nbytes += len(body)
            added += len(rows)
            since_commit += len(rows)
            progress.update(nbytes, len(rows))
            if since_commit >= commit_chunks:
                writer.commit()
                since_commit = 0
        if added != total:
            raise Bm25Error(
                f"{index_dir}: {added:,} chunks indexed, but the corpus has"
                f" {total:,}; the chunks changed while indexing"
            )
        writer.commit()
        writer.wait_merging_threads()
    except BaseException:
        # Uncommitted documents are dropped; the committed ones stay for the
        # next run, which resumes after them.
        writer.rollback()
        raise
    finally:
        progress.close()
    index_bytes = sum(f.stat().st_size for f in index_dir.iterdir() if f.is_file())
    meta = {
        **fingerprint,
        "num_indexed": added,
        "resumed_from": done,
        "index_seconds": round(time.perf_counter() - start_time, 3),
        "index_bytes": index_bytes,
        "writer_threads": threads,
        "writer_heap_bytes": heap_bytes,
        "tantivy_version": version("tantivy"),
    }
    meta_file.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    partial.unlink()
    return meta


def build_index(
    db_path: str | Path,
    index_dir: str | Path,
    *,
    progress_seconds: float = 30,
    **options: Any,
) -> dict:
    """Index every chunk of ``kilt_chunks`` of ``db_path`` into ``index_dir``.

    A finished index of the same chunks there is replaced; an unfinished one
    (killed) is resumed. See :func:`index_chunks` for ``options``, the
    result and the errors.
    """
    with duckdb.connect(str(db_path), read_only=True) as con:
        fingerprint = corpus_fingerprint(con)
    return index_chunks(
        index_dir,
        fingerprint,
        db_path=db_path,
        progress_seconds=progress_seconds,
        **options,
    )


def _description(index_dir: str | Path) -> dict | None:
    """The description :data:`META_FILE` of the finished index in
    ``index_dir`` (either engine), or None when there is none."""
    meta_file = Path(index_dir) / META_FILE
    if not meta_file.exists():
        return None
    return dict(json.loads(meta_file.read_text(encoding="utf-8")))


def index_engine(index_dir: str | Path) -> str | None:
    """The engine that wrote the finished index in ``index_dir``
    (``"tantivy"`` when its description names none: this module's indexes
    did not before the Lucene engine), or None when there is no finished
    index."""
    meta = _description(index_dir)
    return None if meta is None else str(meta.get("engine", "tantivy"))


def index_format(index_dir: str | Path) -> int | None:
    """The format of the finished tantivy index in ``index_dir`` (1 when its
    description has none: format 1 did not record it), or None when there is
    no finished tantivy index (none, or another engine's)."""
    meta = _description(index_dir)
    if meta is None or meta.get("engine", "tantivy") != "tantivy":
        return None
    return int(meta.get("index_format", 1))


def index_format_problem(index_dir: str | Path) -> str | None:
    """Why ``index_dir`` holds no usable finished index, or None when it does.

    Returns:
        None for a finished tantivy index of format :data:`INDEX_FORMAT`;
        else a sentence: no index there, another engine's index, or one of
        another format (written by another version of kilt-chunks; rebuild
        with ``kilt-chunks bm25 --reindex``, which ``kilt-chunks bm25`` does
        by itself).
    """
    engine = index_engine(index_dir)
    if engine is None:
        return f"{index_dir}: no BM25 index (run `kilt-chunks bm25`)"
    if engine != "tantivy":
        return (
            f"{index_dir}: holds a {engine} BM25 index, not a tantivy"
            f" one (use --engine {engine}, or another --index)"
        )
    found = index_format(index_dir)
    if found != INDEX_FORMAT:
        return (
            f"{index_dir}: BM25 index of format {found}, this kilt-chunks reads"
            f" format {INDEX_FORMAT}; rebuild it (`kilt-chunks bm25 --reindex`)"
        )
    return None


def index_is_current(db_path: str | Path, index_dir: str | Path) -> bool:
    """True when ``index_dir`` holds a finished index of format
    :data:`INDEX_FORMAT` of the chunks now in ``db_path``."""
    if index_format_problem(index_dir) is not None:
        return False
    return index_matches_chunks(db_path, index_dir)


def index_matches_chunks(db_path: str | Path, index_dir: str | Path) -> bool:
    """True when the description :data:`META_FILE` in ``index_dir`` (of
    either engine) was written for the chunks now in ``db_path`` (the same
    :func:`corpus_fingerprint`)."""
    meta = _description(index_dir) or {}
    with duckdb.connect(str(db_path), read_only=True) as con:
        current = corpus_fingerprint(con)
    return all(meta.get(key) == value for key, value in current.items())


def hits_with_chunk_ids(
    index_dir: str | Path, db_path: str | Path, hits: list[list[tuple[int, float]]]
) -> list[list[tuple[str, float]]]:
    """``hits`` (per query, ``(row, score)``) with each row made its chunk
    id, all rows read from ``db_path`` in one query (:func:`chunk_ids_of_rows`).

    Raises:
        Bm25Error: If a row is not in ``kilt_chunks`` (the table changed
            since the index in ``index_dir`` was built).
    """
    rows = [row for found in hits for row, _ in found]
    found_ids = chunk_ids_of_rows(db_path, rows)
    known = [chunk_id for chunk_id in found_ids if chunk_id is not None]
    if len(known) != len(found_ids):
        raise Bm25Error(
            f"{index_dir}: {len(found_ids) - len(known):,} hit rows are not in"
            f" kilt_chunks of {db_path}; the chunks changed since the index was"
            " built (rebuild it: kilt-chunks bm25 --reindex)"
        )
    ids = iter(known)
    return [[(next(ids), score) for _, score in found] for found in hits]


def search(
    index_dir: str | Path,
    queries: Sequence[str],
    k: int = 100,
    *,
    db_path: str | Path,
    threads: int | None = None,
    max_df_share: float | None = None,
) -> list[list[tuple[str, float]]]:
    """Top ``k`` chunks of each query by BM25 score, over the whole index.

    Queries are searched by :func:`search_rows`; the chunk ids of the hits of
    all queries are then read from ``db_path`` in one query
    (:func:`chunk_ids_of_rows`).

    Args:
        index_dir: Folder written by :func:`build_index`.
        queries: Query texts.
        k: Chunks per query (fewer when fewer chunks hold a query term).
        db_path: The DuckDB file the index was built from
            (:func:`index_is_current` says whether it still is).
        threads: Search threads (default: the cores).
        max_df_share: None (the default): exact BM25 of every query term.
            Else drop the query terms held by more than this share of the
            chunks first (see :func:`search_rows`): faster, not BM25 of the
            whole query.

    Returns:
        Per query, ``(chunk_id, score)`` pairs, best first; equal scores in
        storage order (rowid). Of several chunks tied at the k-th score,
        which are returned follows tantivy's document order (segment by
        segment, not storage order). A query without any term after
        analysis gets none.

    Raises:
        Bm25Error: If ``index_dir`` holds no finished index of format
            :data:`INDEX_FORMAT`, or a hit's row is not in ``kilt_chunks``
            (the table changed since the index was built).
    """
    problem = index_format_problem(index_dir)
    if problem is not None:
        raise Bm25Error(problem)
    hits = search_rows(
        index_dir, queries, k, threads=threads, max_df_share=max_df_share
    )
    return hits_with_chunk_ids(index_dir, db_path, hits)


def search_rows(
    index_dir: str | Path,
    queries: Sequence[str],
    k: int = 100,
    *,
    threads: int | None = None,
    max_df_share: float | None = None,
) -> list[list[tuple[int, float]]]:
    """Top ``k`` rows (:data:`ROW_FIELD`) of each query by BM25 score, over
    the chunks committed so far, in a finished index or one still being built
    (the benchmark measures a partial index with it).

    Queries are searched in batches of :data:`SEARCH_BATCH` by ``threads``
    threads (default: the cores; tantivy releases the GIL while it scores).
    A query is the disjunction of its analysed terms, scored by tantivy's
    BM25 over all of them; a hit's row is read from the fast field, not from
    the document store.

    tantivy-py scores every chunk that holds any query term: its
    ``Searcher.search`` always collects through a ``MultiCollector``, which
    has no ``for_each_pruning`` path, so tantivy's block-max WAND (which
    skips chunks that cannot reach the top k) never runs; the CPU time of a
    query grows with the document frequencies of its terms, i.e. linearly
    with the corpus. ``max_df_share`` trades exactness for that time.

    Args:
        max_df_share: None (the default): every analysed term counts (exact
            BM25). A share in (0, 1]: the terms held by more than this share
            of the indexed chunks (``Searcher.doc_freq`` over ``num_docs``)
            are dropped from the query first, keeping at least its rarest
            term; the scores are then BM25 of the terms kept, not of the
            query (``bench/RESULTS_BM25.md`` measures what it changes).

    Returns:
        Per query, ``(row, score)`` pairs, best first (see :func:`search`).

    Raises:
        ValueError: If ``max_df_share`` is not in (0, 1].
    """
    if max_df_share is not None and not 0 < max_df_share <= 1:
        raise ValueError(f"max_df_share must be in (0, 1], not {max_df_share}")
    from tantivy import Occur, Query

    index = _open(Path(index_dir))
    index.reload()
    searcher = index.searcher()
    schema = index.schema
    analyzer = _analyzer()

    most = None if max_df_share is None else max_df_share * searcher.num_docs

    def one(text: str) -> list[tuple[int, float]]:
        terms = analyzer.analyze(text)
        if not terms or k < 1:
            return []
        if most is not None:
            df = {t: searcher.doc_freq("body", t) for t in set(terms)}
            kept = [t for t in terms if df[t] <= most]
            terms = kept or [min(terms, key=lambda t: (df[t], t))]
        query = Query.boolean_query(
            [(Occur.Should, Query.term_query(schema, "body", t)) for t in terms]
        )
        hits = searcher.search(query, k, count=False).hits
        rows = searcher.fast_field_values(ROW_FIELD, [address for _, address in hits])
        found = [
            (row, float(score)) for (score, _), row in zip(hits, rows, strict=True)
        ]
        return sorted(found, key=lambda hit: (-hit[1], hit[0]))

    def batch(texts: Sequence[str]) -> list[list[tuple[int, float]]]:
        return [one(text) for text in texts]

    batches = [
        queries[i : i + SEARCH_BATCH] for i in range(0, len(queries), SEARCH_BATCH)
    ]
    with ThreadPoolExecutor(max_workers=threads or os.cpu_count() or 1) as pool:
        return [hits for result in pool.map(batch, batches) for hits in result]


def write_trec_run(
    path: str | Path,
    query_ids: Sequence[str],
    hits: Sequence[Sequence[tuple[str, float]]],
    tag: str = RUN_TAG,
) -> int:
    """Write a TREC run: ``query_id Q0 chunk_id rank score tag`` per line.

    Args:
        path: File to write (its folder is created).
        query_ids: One id per query (white space in an id is written
            percent-encoded: :func:`trec_id`).
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
            field = trec_id(query_id)
            for rank, (chunk_id, score) in enumerate(query_hits, start=1):
                out.write(f"{field} Q0 {chunk_id} {rank} {score:.6f} {tag}\n")
                lines += 1
    return lines


def task_queries(db_path: str | Path, task: str) -> list[tuple[str, str]]:
    """``(query_id, input)`` of a task's usable queries, from ``kilt_queries``.

    Raises:
        Bm25Error: If the task has no queries there (naming the tasks that do).
    """
    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute(
            "select query_id, input from kilt_queries where task = ?"
            " order by line_number",
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
    "chunk_ids_of_rows",
    "chunk_rows",
    "corpus_fingerprint",
    "hits_with_chunk_ids",
    "index_chunks",
    "index_engine",
    "index_format",
    "index_format_problem",
    "index_is_current",
    "index_matches_chunks",
    "search",
    "search_rows",
    "task_queries",
    "write_trec_run",
    "peak_rss_bytes",
]
