"""Issue 36 item 1: ChunkingSettings, one value for the settings that
determine the chunks, iterated by every store (variable checks, resume
fingerprint, recorded settings, kilt_build_info, summary) instead of listed
in each. A field added to the class reaches them all; the stores that must
still name it (the dbt var, the model config) are checked against the
fields here, so a field added without them fails."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import duckdb
import pytest
import yaml
from pydantic import Field

from conftest import ROOT, Build
from kilt_chunks.build.build_info import build_info
from kilt_chunks.build.checkpoint import sections_fingerprint
from kilt_chunks.checks import int_at_least
from kilt_chunks.chunking_settings import (
    DEFAULT_CHUNKING,
    ChunkingSettings,
    ChunkingSettingsError,
    _checked,
)
from kilt_chunks.settings import KNOWN_VARIABLES

FIELDS = ("splitter", "chunk_size", "chunk_overlap", "tokenizer")

#: A value other than the default for every field: a new field must be added
#: here (the first test fails until it is), and then each store is shown to
#: follow it.
OTHER_VALUES = {
    "splitter": "llama_index",
    "chunk_size": 128,
    "chunk_overlap": 16,
    "tokenizer": "o200k_base",
}


def test_every_field_has_a_default_a_check_and_a_description() -> None:
    assert ChunkingSettings.names() == FIELDS == tuple(OTHER_VALUES)
    for name, field in ChunkingSettings.model_fields.items():
        assert field.description, name
        assert field.default is not None, name
        # The check is in the field's type (a validator in its metadata).
        assert ChunkingSettings.field_problem(name, None) is not None, name
        assert ChunkingSettings.field_problem(name, OTHER_VALUES[name]) is None


def test_the_value_is_frozen_and_checked() -> None:
    settings = ChunkingSettings(chunk_size=128)
    with pytest.raises(ValueError, match="frozen"):
        settings.chunk_size = 64  # type: ignore[misc]
    with pytest.raises(ChunkingSettingsError) as error:
        ChunkingSettings.checked({"chunk_size": True, "chunk_overlap": -1})
    assert str(error.value) == (
        "chunk_size = True: must be a whole number of at least 1; "
        "chunk_overlap = -1: must be a whole number of at least 0"
    )
    with pytest.raises(ChunkingSettingsError, match="must be below chunk_size"):
        ChunkingSettings.checked({"chunk_size": 16, "chunk_overlap": 16})
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        ChunkingSettings(chunk_sise=128)  # type: ignore[call-arg]


def test_the_project_vars_and_the_model_config_name_every_field() -> None:
    """The two stores dbt needs written out: the var (with the field's
    default) and the line of int_sections_chunked's config."""
    project = yaml.safe_load((ROOT / "dbt_project.yml").read_text("utf-8"))
    assert {n: project["vars"][n] for n in FIELDS} == DEFAULT_CHUNKING.model_dump()
    models = yaml.safe_load(
        (
            ROOT / "python_models" / "intermediate" / "_intermediate_python__models.yml"
        ).read_text("utf-8")
    )
    (model,) = [m for m in models["models"] if m["name"] == "int_sections_chunked"]
    assert model["config"]["chunking"] == {n: f"{{{{ var('{n}') }}}}" for n in FIELDS}
    # The variable checks take each field's own check.
    assert set(FIELDS) <= set(KNOWN_VARIABLES)
    assert KNOWN_VARIABLES["chunk_size"](0) == "must be a whole number of at least 1"


@pytest.mark.parametrize("name", FIELDS)
def test_each_field_reaches_the_fingerprint_and_the_build_info(name: str) -> None:
    other = DEFAULT_CHUNKING.model_copy(update={name: OTHER_VALUES[name]})
    with duckdb.connect() as con:
        sections = con.sql(
            "select 1::bigint as page_order, '7' as wikipedia_id,"
            " 0::integer as section_order, 'Some text.' as section_text"
        )
        assert (
            sections_fingerprint(sections, other)[0]
            != sections_fingerprint(sections, DEFAULT_CHUNKING)[0]
        )
    info, default_info = (
        build_info("x.jsonl", other),
        build_info("x.jsonl", DEFAULT_CHUNKING),
    )
    assert set(FIELDS) <= set(info)
    assert [key for key in FIELDS if info[key] != default_info[key]] == [name]


def test_a_new_field_reaches_every_iterating_store() -> None:
    """A subclass with one more field stands for a new chunking setting: the
    checks, the build from the variables and the recorded values, the
    fingerprint and the described values follow it without another edit."""

    class WithMinimum(ChunkingSettings):
        min_chunk_tokens: Annotated[int, _checked(int_at_least(0))] = Field(
            default=0, description="drop chunks of fewer tokens"
        )

    assert WithMinimum.names() == (*FIELDS, "min_chunk_tokens")
    assert WithMinimum.problems({"min_chunk_tokens": -1}) == [
        "min_chunk_tokens = -1: must be a whole number of at least 0"
    ]
    settings, notes = WithMinimum.for_build(
        {"min_chunk_tokens": 0}, {"min_chunk_tokens": 8}, given=()
    )
    assert settings.min_chunk_tokens == 8
    assert notes and notes[0].startswith("min_chunk_tokens = 8, as the database's")
    assert settings.described()["min_chunk_tokens"] == "8"
    assert "min_chunk_tokens=8" in settings.fingerprint()
    assert settings.model_dump()["min_chunk_tokens"] == 8  # what is recorded


def test_a_remembered_setting_is_remembered_whole() -> None:
    """Issue 31 item 9: a rebuild given another tokenizer chunked with
    chunk_overlap 0, the project's default, though the database's chunks had
    32; the recorded value is kept unless given, and the build says so."""
    recorded = {**DEFAULT_CHUNKING.model_dump(), "chunk_overlap": 32}
    project = DEFAULT_CHUNKING.model_dump() | {"tokenizer": "o200k_base"}
    settings, notes = ChunkingSettings.for_build(project, recorded, {"tokenizer"})
    assert (settings.tokenizer, settings.chunk_overlap) == ("o200k_base", 32)
    assert notes == [
        "chunk_overlap = 32, as the database's chunks were built (not the "
        "project's 0): give --vars '{chunk_overlap: ...}' to change it"
    ]
    # Given, the new value wins; a new database takes the project's values.
    given, _ = ChunkingSettings.for_build(
        {**project, "chunk_overlap": 0}, recorded, {"tokenizer", "chunk_overlap"}
    )
    assert given.chunk_overlap == 0
    assert ChunkingSettings.for_build(project, {}, ())[0].tokenizer == "o200k_base"


@pytest.mark.dbt
def test_the_build_records_and_reports_every_field(sample_build: Build) -> None:
    recorded = dict(
        sample_build.query(
            "select setting, value from kilt_build_settings"
            " where model = 'int_sections_chunked'"
        )
    )
    assert sorted(recorded) == sorted(FIELDS)
    (columns,) = sample_build.query(
        "select list(column_name) from duckdb_columns()"
        " where table_name = 'kilt_build_info'"
    )
    assert set(FIELDS) <= set(columns[0])
    (state,) = sample_build.query("select settings from kilt_chunking_state")
    assert ChunkingSettings.model_validate_json(state[0]) == DEFAULT_CHUNKING


def test_tokenizer_paths_are_resolved_against_the_project(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models

    path = tmp_path / "tok.json"
    Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")).save(str(path))
    settings = ChunkingSettings(tokenizer=str(path))
    assert settings.tokenizer == str(path)
    assert settings.described()["tokenizer"].startswith(f"tokenizers file {path} ")
