"""The export: a Hugging Face dataset folder (configs, schema, card, figures),
the corpus statistics, `kilt-chunks stats` and `kilt-chunks push`."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from unittest import mock

import datasets
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard, HfApi

from conftest import SAMPLE, SAMPLE_JSONL, Build, read_pages, run_dbt_build
from contracts import contract_schema
from export_kill import Killed, stopped_at, write_configs, write_export, write_qrels
from kilt_chunks.build.records import (
    ExportOwnerError,
    claim_export,
    export_owner_problem,
    owner_record,
)
from kilt_chunks.cli import corpus_stats, main
from kilt_chunks.export.card import LICENSE, check_card, dataset_card
from kilt_chunks.export.figures import FIGURES, draw_figures
from kilt_chunks.export.folder import (
    EXPORT_TABLES,
    ExportSchemaError,
    arrow_type,
    config_files,
    finish_export,
    parquet_file_name,
    prepare_export_dir,
    replace_folder,
    start_export,
    table_schema,
    write_parquet_files,
)
from kilt_chunks.export.publish import REPLACED_PATTERNS, UPLOAD_PATTERNS, push_export

SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("n", pa.int32(), nullable=False),
        pa.field("path", pa.list_(pa.field("element", pa.string(), False)), False),
        pa.field("maybe", pa.string(), nullable=True),
    ]
)


def _batches(start: int, stop: int, maybe: str | None) -> list[pa.RecordBatch]:
    """Rows start..stop-1 in batches of 4, as DuckDB gives them (its types,
    nullable fields)."""
    out = []
    for low in range(start, stop, 4):
        ids = range(low, min(low + 4, stop))
        out.append(
            pa.record_batch(
                {
                    "id": [f"r{i}" for i in ids],
                    "n": pa.array(list(ids), pa.int32()),
                    "path": [["a", str(i)] for i in ids],
                    "maybe": [maybe for _ in ids],
                }
            )
        )
    return out


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])


def test_file_names_are_zero_padded_in_table_order() -> None:
    assert parquet_file_name(0, 12) == "train-00000-of-00012.parquet"
    assert parquet_file_name(11, 12) == "train-00011-of-00012.parquet"
    with pytest.raises(ValueError, match="not one of 12 files"):
        parquet_file_name(12, 12)


def test_files_keep_order_and_one_schema_whatever_the_nulls(tmp_path: Path) -> None:
    """Files cut every 5 rows, named in row order; all-NULL and no-NULL data
    give the same schema (REQUIRED stays REQUIRED, OPTIONAL stays OPTIONAL),
    so the two sets concatenate."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = write_parquet_files(_batches(0, 62, None), SCHEMA, tmp_path / "a", 5)
    b = write_parquet_files(_batches(0, 9, "x"), SCHEMA, tmp_path / "b", 5)
    assert [p.name for p, _ in a][:2] == [
        "train-00000-of-00013.parquet",
        "train-00001-of-00013.parquet",
    ]
    assert [rows for _, rows in a] == [5] * 12 + [2]
    assert [rows for _, rows in b] == [5, 4]
    files = sorted((tmp_path / "a").glob("*.parquet"))
    ids = pq.read_table(files).column("id").to_pylist()
    assert ids == [f"r{i}" for i in range(62)]
    schemas = {str(pq.read_schema(p)) for p, _ in a + b}
    assert schemas == {str(SCHEMA)}
    both = pa.concat_tables([pq.read_table(files), pq.read_table(tmp_path / "b")])
    assert both.num_rows == 71
    assert both.schema.field("maybe").nullable
    assert not both.schema.field("id").nullable
    assert pq.read_metadata(files[0]).schema.column(0).max_definition_level == 0


def test_null_in_a_not_null_column_is_named(tmp_path: Path) -> None:
    bad = pa.record_batch(
        {"id": ["a", None], "n": pa.array([1, 2], pa.int32()), "path": [[], []]}
        | {"maybe": [None, None]}
    )
    with pytest.raises(ValueError, match="column id has 1 NULL values"):
        write_parquet_files([bad], SCHEMA, tmp_path, 10, config="demo")


def test_an_empty_table_gives_one_file_and_files_are_cut_by_size(
    tmp_path: Path,
) -> None:
    (tmp_path / "empty").mkdir()
    (empty,) = write_parquet_files([], SCHEMA, tmp_path / "empty", 10)
    assert empty[0].name == "train-00000-of-00001.parquet" and empty[1] == 0
    assert pq.read_schema(empty[0]).equals(SCHEMA)
    (tmp_path / "small").mkdir()
    cut = write_parquet_files(
        _batches(0, 40, "x"), SCHEMA, tmp_path / "small", 1000, max_file_bytes=1
    )
    # A row group per flush (40 rows: one), then the size closes the file.
    assert sum(rows for _, rows in cut) == 40


def test_schemas_declare_spec_types_and_nullability() -> None:
    """The files' schemas come from the contracts (tests/python/contracts.py
    makes each a DuckDB table and reads it back as the export does)."""
    assert [t.config for t in EXPORT_TABLES] == [
        "chunks",
        "chunk_spans",
        "queries",
        "qrels_pages",
        "qrels_chunks",
    ]
    # The task tables are exported only when a build read kilt_tasks.
    assert [t.only_if_rows for t in EXPORT_TABLES] == [False, False] + [True] * 3
    chunks = contract_schema("kilt_chunks")
    nullable = [f.name for f in chunks if f.nullable]
    assert nullable == ["pageid", "parentid", "revid", "timestamp", "url"] + [
        "wikidata_id"
    ]
    assert chunks.field("chunk_order").type == pa.int32()
    assert chunks.field("section").type == pa.list_(
        pa.field("element", pa.string(), nullable=False)
    )
    assert not any(f.nullable for f in contract_schema("kilt_chunk_spans"))
    queries = contract_schema("kilt_queries")
    assert [f.name for f in queries if not f.nullable] == ["task", "query_id"]
    assert queries.field("answers").type == pa.list_(pa.string())
    assert queries.field("evidence_sets").type == pa.list_(pa.list_(pa.string()))
    assert queries.field("line_number").type == pa.int64()
    qrels = contract_schema("kilt_qrels_chunks")
    assert [f.name for f in qrels if not f.nullable] == [
        "task",
        "query_id",
        "chunk_id",
        "relevance",
    ]
    assert qrels.field("max_overlap_fraction").type == pa.float64()


def test_arrow_types_of_duckdb_types() -> None:
    assert arrow_type("VARCHAR", True) == pa.string()
    assert arrow_type("INTEGER[][]", False) == pa.list_(
        pa.field(
            "element",
            pa.list_(pa.field("element", pa.int32(), nullable=False)),
            nullable=False,
        )
    )
    with pytest.raises(KeyError):
        arrow_type("HUGEINT[]", True)


def test_a_type_without_arrow_type_is_named_with_table_and_column() -> None:
    with duckdb.connect() as con:
        con.execute(
            "create table t (a varchar not null, b hugeint, c struct(x int)[],"
            " d bigint)"
        )
        with pytest.raises(ExportSchemaError) as error:
            table_schema(con, "t")
        with pytest.raises(LookupError, match="no table missing"):
            table_schema(con, "missing")
    assert str(error.value) == (
        "export: table t has columns of a type with no Arrow type: b (HUGEINT),"
        " c (STRUCT(x INTEGER)[]) (add the type to"
        " kilt_chunks.export.folder.ARROW_TYPES"
        " or cast the column in the model)"
    )


def test_null_in_a_not_null_list_element_is_named(tmp_path: Path) -> None:
    schema = contract_schema("kilt_chunks")
    row = {f.name: pa.array([_value(f)], f.type) for f in schema}
    row["section"] = pa.array([["a", None]])
    with pytest.raises(ValueError, match="column section has 1 NULL values"):
        write_parquet_files(
            [pa.record_batch(row)], schema, tmp_path, 10, config="chunks"
        )


def _value(field: pa.Field) -> object:
    """One value of a field's type: NULL where allowed."""
    if field.nullable:
        return None
    if pa.types.is_list(field.type):
        return []
    if pa.types.is_string(field.type):
        return "0"
    return True if pa.types.is_boolean(field.type) else 0


def _small_export(root: Path, *, figures: bool = True) -> Path:
    """A finished export of two tiny configs, through the real writer, card
    and figures."""
    partial = start_export(str(root))
    exported = write_configs(
        partial,
        lambda schema: pa.record_batch(
            {f.name: pa.array([_value(f)], f.type) for f in schema}
        ),
    )
    figure_paths = []
    if figures:
        (partial / "figures").mkdir()
        drawn = draw_figures(
            [
                {"histogram": "tokens_per_chunk", "bucket_start": 0}
                | {"bucket_end": 8, "num_items": 1},
            ],
            [],
            partial / "figures",
        )
        figure_paths = [p.relative_to(partial).as_posix() for p in drawn]
    card = dataset_card(
        exported,
        {"kilt_path": "x.jsonl", "chunk_size": "256", "kilt_chunks_version": "0.1"},
        {"lines_read": 1, "chunks_written": 1},
        [{"statistic": "share_under_32_tokens", "value": 1.0, "description": "s"}],
        figure_paths,
    )
    card.save(partial / "README.md")
    return finish_export(partial)


def test_a_finished_dataset_export_replaces_the_previous_one_whole(
    tmp_path: Path,
) -> None:
    """Everything is staged in .export.partial and moved into place when
    complete; an unfinished staging folder leaves the previous export whole;
    the qrels and a user's own files are left alone."""
    root = tmp_path / "exports"
    (root / "qrels").mkdir(parents=True)
    (root / "qrels" / "t.qrels").write_text("q 0 c 1\n")
    (root / "notes.txt").write_text("mine\n")
    _small_export(root)
    assert sorted(p.name for p in root.iterdir()) == [
        "README.md",
        "data",
        "figures",
        "notes.txt",
        "qrels",
    ]
    card = (root / "README.md").read_text()
    partial = start_export(str(root))
    (partial / "data").mkdir()
    with pytest.raises(FileNotFoundError, match="no finished export"):
        finish_export(partial)
    assert (root / "README.md").read_text() == card
    assert [p.name for p in config_files(root, "chunks")] == [
        "train-00000-of-00001.parquet"
    ]


def test_card_metadata_is_what_the_hub_and_datasets_read(tmp_path: Path) -> None:
    root = _small_export(tmp_path / "exports")
    card = check_card(root / "README.md")
    assert isinstance(card, DatasetCard)
    assert card.data.license == LICENSE == "cc-by-sa-3.0"
    configs = {c["config_name"]: c for c in card.data.configs}
    assert configs["chunks"]["default"] is True
    assert configs["chunk_spans"]["data_files"] == [
        {"split": "train", "path": "data/chunk_spans/train-*.parquet"}
    ]
    infos = {i["config_name"]: i for i in card.data.dataset_info}
    assert infos["chunks"]["splits"][0]["num_examples"] == 1
    features = {f["name"]: f for f in infos["chunks"]["features"]}
    assert features["section"] == {"name": "section", "list": "string"}
    assert features["chunk_order"] == {"name": "chunk_order", "dtype": "int32"}
    for name in FIGURES:
        assert f"](figures/{name}.png)" in card.text
        assert _png_size(root / "figures" / f"{name}.png") == (1000, 500)
    for key in ("petroni-etal-2021-kilt", "kilt_corpus_wiki_dump2019"):
        assert key in card.text
    assert "2505.15561" in card.text and "2510.21440" in card.text
    assert "CC BY-SA 3.0" in card.text
    (root / "figures" / "sections_per_page.png").unlink()
    with pytest.raises(ValueError, match="sections_per_page.png, which is missing"):
        check_card(root / "README.md")


def test_push_uploads_the_folder_and_only_the_upload_is_mocked(
    tmp_path: Path, capsys
) -> None:
    root = _small_export(tmp_path / "exports")
    (root / "qrels").mkdir()
    with (
        mock.patch.object(HfApi, "create_repo") as create_repo,
        mock.patch.object(HfApi, "upload_folder") as upload_folder,
    ):
        upload_folder.return_value = mock.Mock(commit_url="https://hub/commit/1")
        code = main(["push", "me/kilt", "--export-dir", str(root), "--private"])
    assert code == 0, capsys.readouterr()
    assert "uploaded" in capsys.readouterr().out
    create_repo.assert_called_once_with(
        "me/kilt", repo_type="dataset", private=True, exist_ok=True
    )
    kwargs = upload_folder.call_args.kwargs
    assert kwargs["repo_id"] == "me/kilt" and kwargs["repo_type"] == "dataset"
    assert Path(kwargs["folder_path"]) == root
    assert kwargs["allow_patterns"] == UPLOAD_PATTERNS
    assert kwargs["delete_patterns"] == REPLACED_PATTERNS
    # What upload_folder would send, by huggingface_hub's own filter.
    from huggingface_hub.utils import filter_repo_objects

    sent = sorted(
        filter_repo_objects(
            [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()],
            allow_patterns=UPLOAD_PATTERNS,
        )
    )
    assert sent == [
        "README.md",
        "data/chunk_spans/train-00000-of-00001.parquet",
        "data/chunks/train-00000-of-00001.parquet",
        *(f"figures/{name}.png" for name in sorted(FIGURES)),
    ]


def test_push_refuses_a_folder_without_a_valid_card(tmp_path: Path, capsys) -> None:
    api = mock.Mock(spec=HfApi)
    with pytest.raises(FileNotFoundError, match="no dataset card"):
        push_export(tmp_path, "me/kilt", api=api)
    root = _small_export(tmp_path / "exports")
    card = (root / "README.md").read_text()
    (root / "README.md").write_text(card.replace("cc-by-sa-3.0", "mit", 1))
    assert main(["push", "me/kilt", "--export-dir", str(root)]) == 1
    assert "license 'mit'" in capsys.readouterr().err
    api.upload_folder.assert_not_called()


# -- on real builds ---------------------------------------------------------


@pytest.mark.dbt
def test_sample_export_loads_every_config_in_table_order(
    sample_build: Build, tmp_path: Path
) -> None:
    """`load_dataset(export_dir)` gives the default config, chunks; each
    config comes back in table order, with the table's values."""
    root = sample_build.export_dir
    cache = str(tmp_path / "cache")
    chunks = datasets.load_dataset(str(root), split="train", cache_dir=cache)
    spans = datasets.load_dataset(
        str(root), "chunk_spans", split="train", cache_dir=cache
    )
    stored = sample_build.query("select chunk_id, num_tokens from kilt_chunk_spans")
    assert chunks["chunk_id"] == [chunk_id for chunk_id, _ in stored]
    assert list(zip(spans["chunk_id"], spans["num_tokens"], strict=True)) == stored
    assert chunks[0]["section"] == [] and chunks.num_rows == SAMPLE.chunks
    named = datasets.load_dataset(str(root), "chunks", split="train", cache_dir=cache)
    assert named["text"][:50] == [
        text for (text,) in sample_build.query("select text from kilt_chunks limit 50")
    ]
    card = check_card(root / "README.md")
    assert f"| chunks | {SAMPLE.chunks:,} |" in card.text
    assert "| share of chunks under 32 tokens | 5.63% |" in card.text
    assert f"| `lines_read` | {SAMPLE.pages} |" in card.text
    assert "| `splitter` | `fast` |" in card.text
    exported = sample_build.query(
        "select config, path, num_rows from kilt_export order by path"
    )
    assert exported == [
        (None, "README.md", None),
        ("chunk_spans", "data/chunk_spans/train-00000-of-00001.parquet", SAMPLE.chunks),
        ("chunks", "data/chunks/train-00000-of-00001.parquet", SAMPLE.chunks),
        *((None, f"figures/{name}.png", None) for name in sorted(FIGURES)),
    ]
    assert not (root / ".export.partial").exists()


@pytest.mark.dbt
def test_corpus_statistics_match_the_tables(sample_build: Build) -> None:
    """The SQL statistics agree with counts taken straight from the tables."""
    stats = dict(sample_build.query("select statistic, value from kilt_corpus_stats"))
    (short,) = sample_build.query(
        "select count(*) from kilt_chunk_spans where num_tokens < 32"
    )[0]
    assert short == 209
    assert stats["chunks"] == SAMPLE.chunks and stats["chunks_under_32_tokens"] == short
    assert stats["share_under_32_tokens"] == pytest.approx(
        SAMPLE.chunks_under_32_tokens / SAMPLE.chunks
    )
    assert stats["pages"] == SAMPLE.pages and stats["sections"] == SAMPLE.sections
    assert stats["tokens"] == 622_155
    assert stats["tokens_per_chunk_max"] == 256
    assert (
        stats["sections_per_page_max"]
        == sample_build.query("select max(num_sections) from kilt_chunks")[0][0]
    )
    totals = dict(
        sample_build.query(
            "select histogram, sum(num_items) from kilt_corpus_histograms group by 1"
        )
    )
    assert totals == {
        "tokens_per_chunk": SAMPLE.chunks,
        "chunks_per_section": SAMPLE.sections,
        "sections_per_page": SAMPLE.pages,
    }
    depths = sample_build.query(
        "select section_depth, num_chunks from kilt_section_depth_stats"
    )
    assert depths == sample_build.query(
        "select len(section), count(*) from kilt_chunks group by 1 order by 1"
    )
    text = corpus_stats(str(sample_build.db_path))
    assert "share of chunks under 32 tokens" in text and "5.63%" in text
    assert main(["stats", "--db", str(sample_build.db_path)]) == 0


@pytest.mark.dbt
def test_many_files_and_null_metadata_keep_order_and_schema(
    tmp_path: Path, sample_build: Build
) -> None:
    """A build with export_rows_per_file 300 (13 files) of the sample with the
    history of every other page removed (NULL pageid ... url) and Wikidata ids
    on the others (the sample has none): files in table order, and the same
    schema as the sample's export, whose pageid has no NULL and wikidata_id
    only NULL; the two builds' files concatenate. export_dir has a quote."""
    pages = read_pages(SAMPLE_JSONL)
    for index, page in enumerate(pages):
        if index % 2:
            page.pop("history", None)
        else:
            page["wikidata_info"] = {"wikidata_id": f"Q{index}"}
    source = tmp_path / "mixed.jsonl"
    source.write_text("".join(json.dumps(page) + "\n" for page in pages))
    export_dir = tmp_path / "it's exports"
    build = run_dbt_build(
        tmp_path / "build",
        source,
        extra_vars={"export_dir": str(export_dir), "export_rows_per_file": 300},
        data_tests=False,  # the export's layout is the point here
    )
    files = config_files(export_dir, "chunks")
    assert [f.name for f in files] == [
        f"train-{i:05d}-of-00013.parquet" for i in range(13)
    ]
    assert [pq.read_metadata(f).num_rows for f in files] == [300] * 12 + [110]
    stored = build.query("select chunk_id, pageid, wikidata_id from kilt_chunks")
    assert any(row[1] is None for row in stored)
    assert any(row[2] is not None for row in stored)
    mixed = pq.read_table(files)
    assert mixed.column("chunk_id").to_pylist() == [row[0] for row in stored]
    sample_files = config_files(sample_build.export_dir, "chunks")
    schemas = {pq.read_schema(f).remove_metadata() for f in files + sample_files}
    assert schemas == {contract_schema("kilt_chunks")}
    both = pa.concat_tables([pq.read_table(sample_files), mixed])
    assert both.num_rows == 2 * SAMPLE.chunks
    span_files = config_files(export_dir, "chunk_spans") + config_files(
        sample_build.export_dir, "chunk_spans"
    )
    assert len(span_files) == 14
    assert {pq.read_schema(f).remove_metadata() for f in span_files} == {
        contract_schema("kilt_chunk_spans")
    }
    loaded = datasets.load_dataset(
        str(export_dir), split="train", cache_dir=str(tmp_path / "cache")
    )
    assert loaded["chunk_id"] == [row[0] for row in stored]
    assert loaded["pageid"] == [row[1] for row in stored]
    with duckdb.connect() as con:
        assert con.sql(
            f"select count(*) from read_parquet({[str(f) for f in files]})"
        ).fetchall() == [(SAMPLE.chunks,)]


def test_export_dir_with_a_tilde_is_made_where_duckdb_writes(
    tmp_path: Path, monkeypatch
) -> None:
    """A leading "~" is the home folder, not "./~"."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert prepare_export_dir("~/kilt/exports") == (
        tmp_path / "home" / "kilt" / "exports"
    )
    assert (tmp_path / "home" / "kilt" / "exports").is_dir()
    assert not (tmp_path / "~").exists()


def test_a_finished_export_replaces_the_previous_one_whole(tmp_path: Path) -> None:
    """The export is written beside its folder and moved into place: until
    then the previous export stays whole; a missing one changes nothing."""
    target = tmp_path / "kilt_chunks"
    target.mkdir()
    (target / "kilt_chunks_0.parquet").write_text("old")
    with pytest.raises(FileNotFoundError, match="no finished export"):
        replace_folder(tmp_path / ".kilt_chunks.partial", target)
    assert (target / "kilt_chunks_0.parquet").read_text() == "old"
    partial = tmp_path / ".kilt_chunks.partial"
    partial.mkdir()
    (partial / "kilt_chunks_0.parquet").write_text("new")
    replace_folder(partial, target)
    assert [p.name for p in tmp_path.iterdir()] == ["kilt_chunks"]
    assert (target / "kilt_chunks_0.parquet").read_text() == "new"


def test_an_export_dir_that_is_a_file_is_refused_by_name(tmp_path: Path) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder\n")
    with pytest.raises(NotADirectoryError) as error:
        prepare_export_dir(str(a_file))
    assert str(error.value) == (
        f"export_dir '{a_file}' is a file, not a folder: set export_dir to a "
        'folder (or "" to skip the export)'
    )
    assert prepare_export_dir("") is None


# -- issue 21: a kill at any step leaves one whole export; one owner -------


def _run_killed(
    root: Path, marker: str, rows: int, kill_at: int, exchange: bool, *extra: str
) -> bool:
    """Write the export (or with "qrels" the qrels files) of ``rows`` rows
    marked ``marker`` into ``root``, stopped before step ``kill_at``; whether
    it finished."""
    write = write_qrels if extra == ("qrels",) else write_export
    try:
        with stopped_at(kill_at, exchange):
            write(root, marker, rows)
    except Killed:
        return False
    return True


def _loaded_ids(root: Path, cache: Path) -> tuple[list[str], list[str]]:
    """The chunk ids of the two configs, as `datasets.load_dataset` reads the
    folder (offline, a fresh cache per call)."""
    ids = []
    for config in ("chunks", "chunk_spans"):
        loaded = datasets.load_dataset(
            str(root), config, split="train", cache_dir=str(cache / config)
        )
        ids.append(list(loaded["chunk_id"]))
    return ids[0], ids[1]


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two_renames"])
def test_a_kill_at_any_step_of_the_export_leaves_one_whole_export(
    tmp_path: Path, exchange: bool
) -> None:
    """Issue 21 item 5. The old export (2 rows, a user's notes, qrels) is
    replaced by a new one (3 rows), stopped before each file-system step of
    the export in turn (tests/python/export_kill.py). After every stop,
    `load_dataset` reads the whole old or the whole new export (both configs
    from the same one, with the card), and the user's files are there; the
    next run repairs what the stop left and puts the new export in place.
    Without the atomic exchange (two_renames), the one moment between the two
    renames leaves the old export whole beside the folder, and the next run
    puts it back."""
    old = (["old-0", "old-1"], ["old-0", "old-1"])
    new = (["new-0", "new-1", "new-2"],) * 2
    outcomes = []
    for kill_at in range(40):
        root = tmp_path / f"k{kill_at}" / "exports"
        write_export(root, "old", 2)
        (root / "notes.txt").write_text("mine\n")
        (root / "qrels").mkdir()
        (root / "qrels" / "t.qrels").write_text("q 0 old-0 1\n")
        if _run_killed(root, "new", 3, kill_at, exchange):
            assert _loaded_ids(root, tmp_path / f"c{kill_at}") == new
            break
        if root.exists():
            state = _loaded_ids(root, tmp_path / f"c{kill_at}")
            assert state in (old, new), (kill_at, state)
            outcomes.append("old" if state == old else "new")
            assert (root / "notes.txt").read_text() == "mine\n"
            assert (root / "qrels" / "t.qrels").read_text() == "q 0 old-0 1\n"
        else:
            # Only without the exchange: the old export is set aside whole.
            assert not exchange, kill_at
            aside = root.with_name(".exports.old")
            assert _loaded_ids(aside, tmp_path / f"c{kill_at}") == old
            outcomes.append("aside")
        assert _run_killed(root, "new", 3, -1, exchange)
        assert _loaded_ids(root, tmp_path / f"r{kill_at}") == new
        assert (root / "notes.txt").read_text() == "mine\n"
        assert sorted(p.name for p in root.parent.iterdir()) == ["exports"]
    else:
        pytest.fail("the export never finished")
    # Stops before and after the switch were both tried.
    assert "old" in outcomes and "new" in outcomes
    assert ("aside" in outcomes) == (not exchange)


def test_a_kill_at_any_step_of_the_qrels_leaves_one_whole_set(tmp_path: Path) -> None:
    """Issue 21 item 5, the qrels files: the old set (2 queries) is replaced
    by a new one (3), stopped before each file-system step;
    after every stop `qrels/` holds the whole old or the whole new set, a
    user's file in it is kept, and the next run puts the new set in place."""
    old_lines = ["q0 0 old-0 1", "q1 0 old-1 1"]
    new_lines = ["q0 0 new-0 1", "q1 0 new-1 1", "q2 0 new-2 1"]
    outcomes = []
    for kill_at in range(40):
        root = tmp_path / f"k{kill_at}" / "exports"
        assert _run_killed(root, "old", 2, -1, True, "qrels")
        (root / "qrels" / "mine.txt").write_text("mine\n")
        finished = _run_killed(root, "new", 3, kill_at, True, "qrels")
        qrels = root / "qrels"
        lines = (qrels / "t.qrels").read_text().splitlines()
        topics = (qrels / "t.topics.tsv").read_text().splitlines()
        assert (lines, len(topics)) in ((old_lines, 2), (new_lines, 3)), kill_at
        assert (qrels / "mine.txt").read_text() == "mine\n"
        if finished:
            assert lines == new_lines
            break
        outcomes.append(lines == new_lines)
        assert _run_killed(root, "new", 3, -1, True, "qrels")
        assert (qrels / "t.qrels").read_text().splitlines() == new_lines
        assert sorted(p.name for p in root.iterdir()) == ["qrels"]
    else:
        pytest.fail("the qrels were never written")
    assert False in outcomes and True in outcomes


def test_an_export_of_another_database_is_refused_by_name(tmp_path: Path) -> None:
    """Issue 21 item 6: the owner file names the database that wrote the
    export; another database is refused in one line naming both, and nothing
    in the folder changes; the owner itself may write again."""
    root = write_export(tmp_path / "exports", "old", 2)
    first, second = str(tmp_path / "first.duckdb"), str(tmp_path / "second.duckdb")
    assert export_owner_problem(str(root), second) is None  # no owner yet
    claim_export(root, str(root), first, "build-1")
    assert owner_record(root) == {"database": first, "build": "build-1"}
    before = {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    line = (
        f"export_dir '{root}' holds the export of database '{first}' (build "
        f"build-1), not of this build's database '{second}' (KILT_CHUNKS_DB): "
        "set export_dir to another folder, or delete that folder to let this "
        "database export there"
    )
    assert export_owner_problem(str(root), second) == line
    with pytest.raises(ExportOwnerError) as error:
        claim_export(root, str(root), second, "build-2")
    assert str(error.value) == line
    assert {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} == before
    assert export_owner_problem(str(root), first) is None


@pytest.mark.dbt
def test_a_second_database_keeps_out_of_the_first_export_and_uses_its_settings(
    sample_build: Build, tmp_path: Path
) -> None:
    """Issue 21 item 6, on real builds. A second database, a copy of the
    sample build in a folder whose name holds an apostrophe (item 14), next
    to the sample build:

    * its partial build `--select tag:stats+` into the sample's export folder
      is refused before anything runs, naming both databases; the sample's
      export is unchanged;
    * re-chunking it at chunk_size 128 (`--select int_sections_chunked+`) is
      allowed and records 128;
    * a partial build `--select tag:stats+` with `chunk_size: 256` is then
      refused, naming the recorded 128; no statistic changes;
    * without the value it computes with the recorded 128 (chunks over
      chunk_size), and the card and kilt_build_info say 128.
    """
    from conftest import copy_build

    workdir = tmp_path / "o'brien's"
    copy_build(sample_build, workdir)
    second_db = workdir / "kilt_chunks.duckdb"
    first_export = sample_build.export_dir
    first_files = {
        p: p.read_bytes() for p in sorted(first_export.rglob("*")) if p.is_file()
    }
    (first_build,) = sample_build.query(
        "select distinct invocation_id from kilt_build_settings"
    )[0]

    refused = run_dbt_build(
        workdir,
        SAMPLE_JSONL,
        select="tag:stats+",
        extra_vars={"export_dir": str(first_export)},
        check=False,
        data_tests=False,
    )
    assert refused.returncode != 0
    assert (
        f"export_dir {str(first_export)!r} holds the export of database "
        f"{str(sample_build.db_path.resolve())!r} (build {first_build}), not of "
        f"this build's database {str(second_db.resolve())!r} (KILT_CHUNKS_DB)"
    ) in refused.output
    assert "Traceback" not in refused.output
    assert {
        p: p.read_bytes() for p in sorted(first_export.rglob("*")) if p.is_file()
    } == first_files

    second = run_dbt_build(
        workdir,
        SAMPLE_JSONL,
        select="int_sections_chunked+",
        extra_vars={"chunk_size": 128, "keep_scratch": True},
        data_tests=False,
    )
    assert second.query(
        "select setting, value from kilt_build_settings order by setting"
    ) == [
        ("chunk_overlap", "0"),
        ("chunk_size", "128"),
        ("splitter", '"fast"'),
        ("tokenizer", '"cl100k_base"'),
    ]
    stats_sql = "select statistic, value from kilt_corpus_stats order by all"
    stats = second.query(stats_sql)

    contradicted = run_dbt_build(
        workdir,
        SAMPLE_JSONL,
        select="tag:stats+",
        extra_vars={"chunk_size": 256},
        check=False,
        data_tests=False,
    )
    assert contradicted.returncode != 0
    assert (
        "chunk_size = 256: the database's int_sections_chunked was built with "
        "chunk_size = 128; rebuild it with the new value (--select "
        "int_sections_chunked+) or leave chunk_size out to use the recorded one"
    ) in contradicted.output
    assert second.query(stats_sql) == stats

    run_dbt_build(workdir, SAMPLE_JSONL, select="tag:stats+", data_tests=False)
    compiled = (
        workdir / "target/run/kilt_pipeline/models/marts/stats/kilt_corpus_stats.sql"
    ).read_text()
    assert re.search(r"where num_tokens > 128\s*\)", compiled)
    assert second.query(stats_sql) == stats
    assert second.query("select chunk_size from kilt_build_info") == [("128",)]
    assert "| `chunk_size` | `128` |" in (second.export_dir / "README.md").read_text()
    owner = json.loads((second.export_dir / ".kilt_chunks_export.json").read_text())
    assert owner["database"] == str(second_db.resolve())


@pytest.mark.dbt
def test_an_export_built_under_an_unusual_path_publishes_no_path_of_it(
    tmp_path: Path,
) -> None:
    """Issue 25 item 1: the card, every Parquet file's metadata and the
    queries' source_file column held the building machine's absolute paths,
    and the card named facebook/kilt_wikipedia as the source of any input.
    Built under a folder with spaces and non-ASCII letters, with a task file:
    nothing of the export holds that folder, and the card describes the
    actual input, its limitations and the task data's license."""
    import shutil

    import pyarrow.parquet as pq
    from huggingface_hub import DatasetCard

    from conftest import FIXTURES, SAMPLE_JSONL, run_dbt_build

    root = tmp_path / "Données d'essai – ünïcode dir"
    root.mkdir()
    pages = root / "my pages.jsonl"
    shutil.copy(SAMPLE_JSONL, pages)
    tasks = root / "tâches"
    shutil.copytree(FIXTURES / "kilt_tasks", tasks)
    build = run_dbt_build(
        root / "build", pages, extra_vars={"kilt_tasks": str(tasks)}, data_tests=False
    )
    needles = {str(root), str(root.resolve()), root.name}
    files = [p for p in build.export_dir.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    for path in files:
        if path.suffix == ".parquet":
            table = pq.read_table(path)
            texts = [value for value in (table.schema.metadata or {}).values()] + [
                str(v).encode()
                for column in table.columns
                if str(column.type) in ("string", "large_string")
                for v in column.to_pylist()
            ]
            blob = b"\n".join(texts).decode("utf-8", "replace")
        else:
            blob = path.read_bytes().decode("utf-8", "replace")
        for needle in needles:
            assert needle not in blob, (path, needle)
    queries = pq.read_table(
        sorted((build.export_dir / "data" / "queries").glob("*.parquet"))
    )
    assert set(queries.column("source_file").to_pylist()) == {"handmade-dev-kilt.jsonl"}
    card = DatasetCard.load(build.export_dir / "README.md")
    assert card.data.source_datasets is None
    assert "KILT-format pages from `my pages.jsonl`" in card.text
    assert "## Limitations" in card.text
    assert "This is **not** the published corpus" in card.text
    assert "released by KILT under the MIT license" in card.text
    assert "| `kilt_path` | `my pages.jsonl` |" in card.text
    assert "`export_dir`" not in card.text


def test_the_card_names_kilt_as_source_only_for_kilt_pages() -> None:
    """describe_source: KILT's knowledge source by its file or Hub name, a
    from-dump output by its manifest, anything else by its file name."""
    from kilt_chunks.export.card import describe_source, published_build_info

    kilt = describe_source("/data/kilt/kilt_knowledgesource.json")
    assert kilt["source_datasets"] == ["facebook/kilt_wikipedia"]
    assert kilt["kind"] == "kilt"
    assert describe_source("hf://facebook/kilt_wikipedia:2019-08-01")["kind"] == "kilt"
    other = describe_source("/home/me/x/pages.jsonl.gz")
    assert (other["kind"], other["source_datasets"]) == ("pages", [])
    assert other["sentence"] == "KILT-format pages from `pages.jsonl.gz`"
    info = published_build_info(
        {
            "kilt_path": "/home/me/x/pages.jsonl.gz",
            "export_dir": "/home/me/x/exports",
            "tokenizer": "tokenizers file /home/me/tok/tokenizer.json sha256:ab"
            " (no special tokens)",
            "chunk_size": "256",
        }
    )
    assert info == {
        "kilt_path": "pages.jsonl.gz",
        "tokenizer": "tokenizers file tokenizer.json sha256:ab (no special tokens)",
        "chunk_size": "256",
    }


def test_the_card_describes_a_dump_by_its_manifest(tmp_path: Path) -> None:
    import json

    from kilt_chunks.export.card import describe_source

    (tmp_path / "pages").mkdir()
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {"wiki": "bgwiki", "dump_date": "2026-11-01", "siteinfo": {"lang": "bg"}}
        )
    )
    source = describe_source(str(tmp_path / "pages"))
    assert source["kind"] == "dump"
    assert source["language"] == "bg"
    assert "MediaWiki dump of bgwiki of 2026-11-01" in source["sentence"]
