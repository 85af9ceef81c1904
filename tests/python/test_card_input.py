"""Issue 31 item 19: the card's license comes from the input, the task
configs' split from the task file's name, the columns are described in the
card itself, and the note to the publisher is printed, not published."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow as pa
import pytest
from huggingface_hub import DatasetCard

from kilt_chunks.export.card import (
    LICENSE,
    LICENSE_SINCE_2023,
    check_card,
    dataset_card,
    describe_source,
    license_of,
)
from kilt_chunks.export.folder import (
    EXPORT_TABLES,
    finish_export,
    start_export,
    task_split,
    write_config,
)
from kilt_chunks.export.publish import publisher_note


def _from_dump_pages(root: Path, dump_date: str | None) -> Path:
    """A `from-dump` output folder: manifest.json beside pages/."""
    pages = root / "pages"
    pages.mkdir(parents=True)
    (pages / "part-00000.jsonl").write_text("{}\n")
    manifest = {"wiki": "enwiki", "dump_date": dump_date, "siteinfo": {"lang": "en"}}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return pages


def test_the_license_follows_the_input(tmp_path: Path) -> None:
    """KILT's 2019 pages and a dump from before June 2023: CC BY-SA 3.0; a
    dump from June 2023 on, or one whose file name gave no date: 4.0 (the
    date is the dump's, in from-dump's manifest.json); other KILT-format
    pages: 3.0."""
    assert describe_source("/d/kilt_knowledgesource.json")["license"] == LICENSE
    for date, expected in (
        ("20160501", "cc-by-sa-3.0"),
        ("20230520", "cc-by-sa-3.0"),
        ("20230601", "cc-by-sa-4.0"),
        ("20250101", "cc-by-sa-4.0"),
        (None, "cc-by-sa-4.0"),
    ):
        pages = _from_dump_pages(tmp_path / str(date), date)
        assert describe_source(f"{pages}/")["license"] == expected, date
        assert license_of("dump", date) == expected
    assert describe_source(str(tmp_path / "mine.jsonl"))["license"] == LICENSE
    assert LICENSE_SINCE_2023 == "cc-by-sa-4.0"


def test_task_queries_are_in_the_split_their_file_names() -> None:
    """KILT's dev files were exported as split `train`."""
    assert task_split("nq-dev-kilt") == "validation"
    assert task_split("hotpotqa-train-kilt") == "train"
    assert task_split("nq-test_without_answers-kilt") == "test"
    assert task_split("handmade-dev-kilt") == "validation"
    assert task_split("my-own-tasks") == "train"
    assert task_split("dev") == "train"


def _value(field: pa.Field) -> object:
    if pa.types.is_list(field.type):
        return ["a"]
    if pa.types.is_boolean(field.type):
        return True
    if pa.types.is_integer(field.type):
        return 1
    if pa.types.is_floating(field.type):
        return 1.0
    return "x"


def _schema(names: list[str]) -> pa.Schema:
    return pa.schema([pa.field(name, pa.string(), nullable=False) for name in names])


@pytest.fixture
def export(tmp_path: Path) -> Path:
    """A finished export through the real writer and card: chunks (19
    columns), and queries of a dev task file in split validation; the input
    a dump of 2025."""
    pages = _from_dump_pages(tmp_path / "enwiki-20250101", "20250101")
    partial = start_export(str(tmp_path / "exports"))
    tables = {table.config: table for table in EXPORT_TABLES}
    chunk_columns = [f"c{i}" for i in range(19)]
    exported = [
        write_config(
            tables["chunks"],
            _schema(chunk_columns),
            [pa.record_batch({name: ["x"] for name in chunk_columns})],
            partial / "data",
            10,
            {},
        ),
        write_config(
            tables["queries"],
            _schema(["task", "query_id"]),
            [pa.record_batch({"task": ["nq-dev-kilt"], "query_id": ["q1"]})],
            partial / "data",
            10,
            {},
            task_split("nq-dev-kilt"),
        ),
    ]
    card = dataset_card(
        exported,
        {"kilt_path": str(pages), "chunk_size": "256", "chunk_overlap": "0"},
        {"lines_read": 1},
        [],
        [],
        {"kilt_chunks": {"c3": "The section's | first chunk.", "c0": "Its id."}},
    )
    card.save(partial / "README.md")
    return finish_export(partial)


def test_the_card_names_the_license_splits_and_columns(
    export: Path, tmp_path: Path
) -> None:
    card = check_card(export / "README.md")
    assert card.data.license == "cc-by-sa-4.0"
    assert "[CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/)" in (
        card.text
    )
    assert "CC BY-SA 3.0" not in card.text
    configs = {c["config_name"]: c for c in card.data.configs}
    assert configs["queries"]["data_files"] == [
        {"split": "validation", "path": "data/queries/validation-*.parquet"}
    ]
    assert [p.name for p in (export / "data" / "queries").iterdir()] == [
        "validation-00000-of-00001.parquet"
    ]
    infos = {i["config_name"]: i for i in card.data.dataset_info}
    assert [s["name"] for s in infos["queries"]["splits"]] == ["validation"]
    loaded = datasets.load_dataset(
        str(export), "queries", split="validation", cache_dir=str(tmp_path / "c")
    )
    assert loaded["query_id"] == ["q1"]
    assert 'queries_validation = load_dataset("PATH_OR_REPO_ID", "queries", ' in (
        card.text
    )
    # The columns are described in the card, not by a reference to SPEC.
    assert "SPEC" not in card.text
    assert "19 columns:" in card.text
    assert "| `c0` | string | no | Its id. |" in card.text
    assert "| `c3` | string | no | The section's \\| first chunk. |" in card.text
    assert "| `c4` | string | no |  |" in card.text


def test_the_publisher_note_is_printed_not_published(export: Path) -> None:
    text = (export / "README.md").read_text(encoding="utf-8")
    assert "check them before" not in text
    assert "released by KILT under the MIT license" in text
    note = publisher_note(export)
    assert note == (
        "note: the configs queries come from KILT's task files (MIT); the "
        "datasets they were made from (Natural Questions, HotpotQA, FEVER, ...) "
        "keep their own licenses and terms, listed in KILT's repository: check "
        "them before you publish these configs"
    )
    assert publisher_note(export.parent / "nothing") is None
    assert DatasetCard.load(export / "README.md").data.license == "cc-by-sa-4.0"
