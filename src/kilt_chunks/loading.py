"""Read KILT knowledge-source pages from any supported input into one shape.

Supported inputs, chosen by ``kilt_path`` alone:

* KILT JSON lines (``kilt_knowledgesource.json``, ``.jsonl``, optionally ``.gz``),
  one file or a directory of shards;
* the Hugging Face ``facebook/kilt_wikipedia`` shape as Parquet (``.parquet``,
  one file or a directory of shards);
* a folder written by ``datasets.Dataset.save_to_disk`` or ``DatasetDict``;
* ``hf://<dataset name>[:<config>[:<split>]]``, loaded with
  ``datasets.load_dataset`` (needs the hub or a local ``datasets`` cache).

Every shape becomes the same raw page rows (:data:`RAW_PAGE_SCHEMA`): one row per
input line or record, with a ``reject_reason`` that is NULL for a usable page and
names the problem otherwise, so no line is ever dropped silently. JSON is read
line by line with explicit column types (never sampled), and history integers
become decimal text, so both shapes give identical pages.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path
from typing import Literal

import duckdb
import pyarrow as pa

InputKind = Literal["jsonl", "parquet", "hf_disk", "hf_hub"]

#: Largest JSON line accepted (bytes). KILT has pages of tens of MB.
MAX_LINE_BYTES = 256 * 1024 * 1024

#: Columns of the raw page table, in order.
RAW_PAGE_SCHEMA = pa.schema(
    [
        ("source_file", pa.string()),
        ("line_number", pa.int64()),
        ("kilt_id", pa.string()),
        ("wikipedia_id", pa.string()),
        ("wikipedia_title", pa.string()),
        ("text", pa.list_(pa.string())),
        ("categories", pa.string()),
        ("pageid", pa.string()),
        ("parentid", pa.string()),
        ("revid", pa.string()),
        ("timestamp", pa.string()),
        ("url", pa.string()),
        ("wikidata_id", pa.string()),
        ("reject_reason", pa.string()),
    ]
)

_JSON_SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz", ".ndjson")

# The page fields read from each JSON line, with their types written out.
# History values are read as text so that a string ``revid`` does not stop a
# 35 GB load; the staging model parses them.
_JSON_STRUCTURE = """{
    "_id": "VARCHAR",
    "wikipedia_id": "VARCHAR",
    "wikipedia_title": "VARCHAR",
    "text": "VARCHAR[]",
    "categories": "VARCHAR",
    "history": {
        "pageid": "VARCHAR",
        "parentid": "VARCHAR",
        "revid": "VARCHAR",
        "timestamp": "VARCHAR",
        "url": "VARCHAR"
    },
    "wikidata_info": {"wikidata_id": "VARCHAR"}
}"""


class KiltInputError(ValueError):
    """The KILT input cannot be read at all (missing path, unknown format)."""


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _json_files(path: Path) -> list[Path]:
    return sorted(
        p for p in path.iterdir() if p.is_file() and p.name.endswith(_JSON_SUFFIXES)
    )


def detect_input_kind(kilt_path: str) -> InputKind:
    """Tell which reader a ``kilt_path`` needs.

    Args:
        kilt_path: A file, a directory of shards, a ``save_to_disk`` folder, or
            ``hf://<name>``.

    Returns:
        ``"jsonl"``, ``"parquet"``, ``"hf_disk"`` or ``"hf_hub"``.

    Raises:
        KiltInputError: If the path does not exist, or is a file or directory
            with no recognised KILT content.
    """
    if kilt_path.startswith("hf://"):
        return "hf_hub"
    path = Path(kilt_path)
    if not path.exists():
        raise KiltInputError(f"kilt_path {kilt_path!r}: no such file or directory")
    if path.is_dir():
        if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
            return "hf_disk"
        if _json_files(path):
            return "jsonl"
        if sorted(path.glob("*.parquet")):
            return "parquet"
        raise KiltInputError(
            f"kilt_path {kilt_path!r}: directory holds no .json/.jsonl(.gz), "
            ".parquet or datasets save_to_disk files"
        )
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(_JSON_SUFFIXES) or name.endswith(".gz"):
        return "jsonl"
    with path.open("rb") as f:
        head = f.read(4)
    if head == b"PAR1":
        return "parquet"
    if head[:2] == b"\x1f\x8b" or head[:1] in (b"{", b""):
        return "jsonl"
    raise KiltInputError(
        f"kilt_path {kilt_path!r}: not KILT JSON lines or Parquet "
        "(expected .json, .jsonl, .gz or .parquet)"
    )


def _jsonl_query(kilt_path: str) -> str:
    path = Path(kilt_path)
    files = _json_files(path) if path.is_dir() else [path]
    file_list = "[" + ", ".join(_sql_str(str(f)) for f in files) + "]"
    # Each line is read whole as text (0x1F never occurs unescaped in JSON), then
    # parsed with an explicit structure, so nothing is sampled or skipped.
    return f"""
    with lines as (
        select
            filename as source_file,
            row_number() over (partition by filename) as line_number,
            line
        from read_csv(
            {file_list},
            columns = {{'line': 'VARCHAR'}},
            delim = '\\x1f',
            quote = '',
            escape = '',
            header = false,
            auto_detect = false,
            new_line = '\\n',
            max_line_size = {MAX_LINE_BYTES},
            buffer_size = {2 * MAX_LINE_BYTES},
            filename = true
        )
    ),

    parsed as (
        select
            source_file,
            line_number,
            json_valid(line) as is_valid,
            case when json_valid(line) then json_type(line) end as line_type,
            case when json_valid(line) then json_type(line, '$.text') end
                as text_type,
            case when json_valid(line) then json_type(line, '$.text[*]') end
                as paragraph_types,
            case when json_valid(line) then json_type(line, '$.wikipedia_id') end
                as id_type,
            case when json_valid(line) then json_type(line, '$.wikipedia_title') end
                as title_type,
            case when json_valid(line) then
                json_transform(line, '{_JSON_STRUCTURE}')
            end as page
        from lines
    )

    select
        source_file,
        line_number,
        page._id as kilt_id,
        page.wikipedia_id,
        page.wikipedia_title,
        page.text,
        page.categories,
        page.history.pageid,
        page.history.parentid,
        page.history.revid,
        page.history.timestamp,
        page.history.url,
        page.wikidata_info.wikidata_id,
        case
            when not is_valid then 'invalid JSON (truncated or malformed line)'
            when line_type <> 'OBJECT' then 'line is not a JSON object'
            when id_type is null or id_type = 'NULL' then 'missing wikipedia_id'
            when id_type not in ('VARCHAR', 'UBIGINT', 'BIGINT')
                then 'wikipedia_id is not a string'
            when title_type is null or title_type = 'NULL'
                then 'missing wikipedia_title'
            when title_type <> 'VARCHAR' then 'wikipedia_title is not a string'
            when text_type is null or text_type = 'NULL' then 'missing text'
            when text_type <> 'ARRAY' then 'text is not a list'
            when len(paragraph_types) = 0 then 'text is empty (no title line)'
            when list_bool_or([t <> 'VARCHAR' for t in paragraph_types])
                then 'paragraph '
                    || (list_position(
                        [t <> 'VARCHAR' for t in paragraph_types], true
                    ) - 1)::varchar
                    || ' is '
                    || lower(paragraph_types[list_position(
                        [t <> 'VARCHAR' for t in paragraph_types], true
                    )])
                    || ', not a string'
        end as reject_reason
    from parsed
    """


def _hf_shape_query(relation: str) -> str:
    """Normalise rows of the ``facebook/kilt_wikipedia`` shape to raw pages."""
    return f"""
    select
        source_file,
        line_number,
        kilt_id,
        wikipedia_id,
        wikipedia_title,
        text.paragraph as text,
        categories,
        history.pageid::varchar as pageid,
        history.parentid::varchar as parentid,
        history.revid::varchar as revid,
        history.timestamp::varchar as timestamp,
        history.url::varchar as url,
        wikidata_info.wikidata_id::varchar as wikidata_id,
        case
            when wikipedia_id is null then 'missing wikipedia_id'
            when wikipedia_title is null then 'missing wikipedia_title'
            when text.paragraph is null then 'missing text'
            when len(text.paragraph) = 0 then 'text is empty (no title line)'
            when list_bool_or([p is null for p in text.paragraph])
                then 'paragraph '
                    || (list_position([p is null for p in text.paragraph], true)
                        - 1)::varchar
                    || ' is null, not a string'
        end as reject_reason
    from {relation}
    """


def _parquet_query(kilt_path: str) -> str:
    path = Path(kilt_path)
    pattern = str(path / "*.parquet") if path.is_dir() else str(path)
    return _hf_shape_query(
        "(select *, filename as source_file,"
        " row_number() over (partition by filename) as line_number"
        f" from read_parquet({_sql_str(pattern)}, filename = true))"
    )


def _load_hf_dataset(kilt_path: str) -> pa.Table:
    import datasets

    if kilt_path.startswith("hf://"):
        name, _, rest = kilt_path[len("hf://") :].partition(":")
        config, _, split = rest.partition(":")
        ds = datasets.load_dataset(name, config or None, split=split or "full")
    else:
        ds = datasets.load_from_disk(kilt_path)
    if isinstance(ds, datasets.DatasetDict):
        split = "full" if "full" in ds else next(iter(ds))
        ds = ds[split]
    return ds.with_format("arrow")[:]


def kilt_pages_relation(
    con: duckdb.DuckDBPyConnection, kilt_path: str
) -> duckdb.DuckDBPyRelation:
    """Build a lazy DuckDB relation of raw page rows for ``kilt_path``.

    Args:
        con: Connection that will run the query.
        kilt_path: Input path (see module docstring).

    Returns:
        A relation with the columns of :data:`RAW_PAGE_SCHEMA`, one row per input
        line (JSON) or record (Parquet, datasets), in input order.

    Raises:
        KiltInputError: If the path is missing or not a KILT input.
    """
    kind = detect_input_kind(kilt_path)
    if kind == "jsonl":
        return con.sql(_jsonl_query(kilt_path))
    if kind == "parquet":
        return con.sql(_parquet_query(kilt_path))
    table = _load_hf_dataset(kilt_path)
    con.register("kilt_hf_pages", table)
    return con.sql(
        _hf_shape_query(
            f"(select *, {_sql_str(kilt_path)} as source_file,"
            " row_number() over () as line_number from kilt_hf_pages)"
        )
    )


def explain_read_error(kilt_path: str, exc: Exception) -> KiltInputError:
    """Turn a DuckDB read error into a short message naming file, line and problem.

    Args:
        kilt_path: The input being read.
        exc: The error DuckDB raised while reading it.

    Returns:
        A :class:`KiltInputError` to raise (the original is kept as its cause).
    """
    message = str(exc)
    file_match = re.search(r"file = (.+)", message) or re.search(
        r"GZIP stream: (.+)", message
    )
    line_match = re.search(r"on Line: (\d+)", message)
    where = f"kilt_path {kilt_path!r}"
    if file_match:
        where += f": file {file_match.group(1).strip()}"
    if line_match:
        where += f", line {line_match.group(1)}"
    if "Invalid unicode" in message:
        problem = "invalid UTF-8 bytes (KILT files are UTF-8); fix or drop the line"
    elif "GZIP" in message or "gzip" in message:
        problem = (
            "truncated or corrupt gzip file (a partial download?): "
            + message.splitlines()[0]
        )
    elif "Maximum line size" in message:
        problem = f"a line is longer than {MAX_LINE_BYTES:,} bytes"
    else:
        problem = message.splitlines()[0]
    return KiltInputError(f"{where}: {problem}")


def _check_not_empty(kilt_path: str, kind: InputKind) -> None:
    if kind != "jsonl":
        return
    path = Path(kilt_path)
    files = _json_files(path) if path.is_dir() else [path]
    for file in files:
        if file.name.endswith(".gz"):
            with gzip.open(file, "rb") as f:
                try:
                    if f.read(1):
                        return
                except (OSError, EOFError):
                    return  # corrupt: the reader reports it with its file name
        elif file.stat().st_size > 0:
            return
    raise KiltInputError(f"kilt_path {kilt_path!r}: input is empty (no lines to read)")


def read_kilt_pages(kilt_path: str, batch_size: int = 2048) -> pa.RecordBatchReader:
    """Stream raw page rows of ``kilt_path`` as Arrow record batches.

    Runs on a private in-memory DuckDB connection, so it works inside a dbt
    source plugin, a notebook or a test alike.

    Args:
        kilt_path: Input path (see module docstring).
        batch_size: Rows per Arrow batch.

    Returns:
        A reader with schema :data:`RAW_PAGE_SCHEMA`.

    Raises:
        KiltInputError: If the path is missing or empty, or a file cannot be
            decoded: invalid UTF-8, truncated gzip (the message names the file,
            the line where known, and the problem).
    """
    _check_not_empty(kilt_path, detect_input_kind(kilt_path))
    con = duckdb.connect(config={"threads": os.cpu_count() or 1})
    relation = kilt_pages_relation(con, kilt_path)
    try:
        reader = relation.to_arrow_reader(batch_size)
    except duckdb.Error as exc:
        raise explain_read_error(kilt_path, exc) from exc
    return pa.RecordBatchReader.from_batches(
        RAW_PAGE_SCHEMA, _cast_batches(reader, kilt_path, con)
    )


def _cast_batches(reader: pa.RecordBatchReader, kilt_path: str, con):
    try:
        for batch in reader:
            yield batch.cast(RAW_PAGE_SCHEMA)
    except duckdb.Error as exc:
        raise explain_read_error(kilt_path, exc) from exc
    finally:
        con.close()
