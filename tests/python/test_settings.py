"""The build's variables are checked before any input is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import failed_dbt_build, run_dbt_build
from kilt_chunks.build.records import recorded_settings_problems
from kilt_chunks.settings import KNOWN_VARIABLES, SPLITTER_CHOICES, settings_problems
from kilt_chunks.splitter import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_TOKENIZER,
    SPLITTER_NAMES,
)

DEFAULTS = {
    "kilt_path": "data/kilt_enwiki2016_sample.jsonl",
    "export_dir": "exports",
    "export_rows_per_file": 500000,
    "splitter": "fast",
    "chunk_size": 256,
    "chunk_overlap": DEFAULT_CHUNK_OVERLAP,
    "tokenizer": DEFAULT_TOKENIZER,
    "workers": 0,
    "batch_size": 2000,
    "progress_seconds": 30,
    "kilt_tasks": "",
    "min_overlap": 1,
    "compress_text": False,
    "keep_scratch": False,
    "replace_other_input": False,
}


def test_defaults_pass_and_every_project_variable_is_known() -> None:
    assert settings_problems({}, DEFAULTS) == []
    project = (Path(__file__).parents[2] / "dbt_project.yml").read_text()
    for name in KNOWN_VARIABLES:
        assert f"\n  {name}:" in project
    assert SPLITTER_CHOICES == SPLITTER_NAMES


def test_unknown_names_get_the_closest_known_one() -> None:
    problems = settings_problems({"kilt_pth": "/data/kilt.json"}, DEFAULTS)
    assert len(problems) == 1
    assert problems[0].startswith(
        "unknown variable 'kilt_pth' (did you mean 'kilt_path'?)"
    )
    assert "(did you mean" not in settings_problems({"zzz": 1}, DEFAULTS)[0]


def test_each_bad_value_is_one_line() -> None:
    bad = {
        **DEFAULTS,
        "splitter": "sentence",
        "workers": -1,
        "chunk_size": "256",
        "batch_size": 0,
        "export_rows_per_file": 0,
        "progress_seconds": -5,
        "compress_text": "maybe",
    }
    problems = settings_problems({}, bad)
    assert problems == [
        "export_rows_per_file = 0: must be a whole number of at least 1",
        "splitter = 'sentence': must be one of 'fast', 'llama_index'",
        "chunk_size = '256': must be a whole number of at least 1",
        "workers = -1: must be a whole number of at least 0",
        "batch_size = 0: must be a whole number of at least 1",
        "progress_seconds = -5: must be a number of at least 0",
        "compress_text = 'maybe': must be true or false",
    ]
    assert settings_problems({}, {**DEFAULTS, "workers": True}) != []
    assert settings_problems({}, {**DEFAULTS, "progress_seconds": 0.5}) == []


def test_min_overlap_is_characters_or_a_fraction() -> None:
    for good in (0, 0.5, 1, 20):
        assert settings_problems({}, {**DEFAULTS, "min_overlap": good}) == []
    assert settings_problems({}, {**DEFAULTS, "min_overlap": 2.5}) == [
        "min_overlap = 2.5: characters must be a whole number (or give a fraction"
        " below 1)"
    ]
    (problem,) = settings_problems({}, {**DEFAULTS, "min_overlap": "half"})
    assert problem.startswith("min_overlap = 'half': must be a number")


def test_chunk_overlap_and_tokenizer_are_checked(tmp_path: Path) -> None:
    for good in (0, 1, 255):
        assert settings_problems({}, {**DEFAULTS, "chunk_overlap": good}) == []
    assert settings_problems({}, {**DEFAULTS, "chunk_overlap": 256}) == [
        "chunk_overlap = 256: must be below chunk_size (256): consecutive chunks"
        " share at most chunk_overlap tokens"
    ]
    assert settings_problems({}, {**DEFAULTS, "chunk_overlap": -1}) == [
        "chunk_overlap = -1: must be a whole number of at least 0"
    ]
    assert settings_problems({}, {**DEFAULTS, "tokenizer": "o200k_base"}) == []
    (problem,) = settings_problems({}, {**DEFAULTS, "tokenizer": "bert-base"})
    assert problem.startswith(
        "tokenizer = 'bert-base': is neither a tiktoken encoding (cl100k_base"
    )
    missing = str(tmp_path / "tokenizer.json")
    assert settings_problems({}, {**DEFAULTS, "tokenizer": missing}) == [
        f"tokenizer = '{missing}': no such tokenizer.json file"
    ]
    # Issue 31 item 8: a file that is not a tokenizer.json passed this check,
    # and the build failed after loading and sectioning the input, with two
    # tracebacks. The check loads it now: one line.
    (tmp_path / "tokenizer.json").write_text("{}")
    assert settings_problems({}, {**DEFAULTS, "tokenizer": missing}) == [
        f"tokenizer = '{missing}': tokenizer file '{missing}' is not a Hugging "
        "Face tokenizer.json: Model missing. at line 1 column 2"
    ]
    from tokenizers import Tokenizer, models

    Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]")).save(missing)
    assert settings_problems({}, {**DEFAULTS, "tokenizer": missing}) == []


def test_an_export_dir_that_is_a_file_is_refused_before_the_build(
    tmp_path: Path,
) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder\n")
    assert settings_problems({}, {**DEFAULTS, "export_dir": str(a_file)}) == [
        f"export_dir = '{a_file}': is a file, not a folder: set export_dir to a "
        'folder (or "" to skip the export)'
    ]
    for fine in ("", str(tmp_path), str(tmp_path / "new" / "folder")):
        assert settings_problems({}, {**DEFAULTS, "export_dir": fine}) == []


@pytest.mark.dbt
def test_a_typo_stops_the_build_before_the_input_is_read(tmp_path: Path) -> None:
    broken = tmp_path / "broken" / "tokenizer.json"
    broken.parent.mkdir()
    broken.write_text('{"model": ')
    build = run_dbt_build(
        tmp_path,
        tmp_path / "not_there.jsonl",
        extra_vars={
            "chunk_overlp": 32,
            "splitter": "sentence",
            "tokenizer": str(broken),
        },
        check=False,
    )
    assert build.returncode != 0
    assert "unknown variable 'chunk_overlp' (did you mean 'chunk_overlap'?)" in (
        build.output
    )
    assert "splitter = 'sentence': must be one of 'fast', 'llama_index'" in (
        build.output
    )
    # Issue 31 item 8: a broken tokenizer.json stops it there too, one line.
    assert (
        f"tokenizer = '{broken}': tokenizer file '{broken}' is not a Hugging Face"
        " tokenizer.json: "
    ) in build.output
    assert "no such file or directory" not in build.output
    assert "Traceback" not in build.output


@pytest.mark.dbt
def test_an_export_dir_below_a_file_is_refused_before_the_build(
    tmp_path: Path,
) -> None:
    """Issue 21 item 11: export_dir `afile/sub` (a folder to be created below
    a file) is refused by the settings check, in one line, before the input
    is read (the input here does not even exist)."""
    a_file = tmp_path / "afile"
    a_file.write_text("not a folder\n")
    for below in (a_file / "sub", a_file / "sub" / "deeper"):
        assert settings_problems({}, {**DEFAULTS, "export_dir": str(below)}) == [
            f"export_dir = '{below}': is below '{a_file}', which is a file, not a "
            'folder: set export_dir to a folder (or "" to skip the export)'
        ]
    output = failed_dbt_build(
        tmp_path,
        tmp_path / "not_there.jsonl",
        extra_vars={"export_dir": str(a_file / "sub")},
    )
    assert (
        f"export_dir = '{a_file / 'sub'}': is below '{a_file}', which is a file"
    ) in output
    assert "no such file or directory" not in output
    assert a_file.read_text() == "not a folder\n"


def test_given_values_are_checked_against_the_recorded_settings() -> None:
    """Issue 21 item 6: a value given with --vars that contradicts the value a
    table was built with is refused unless this build rebuilds that table; a
    new setting (chunk_overlap, issue 24) is checked by the same rule once its
    model records it."""
    recorded = [
        {"model": "int_sections_chunked", "setting": "chunk_size", "value": "128"},
        {"model": "int_sections_chunked", "setting": "splitter", "value": '"fast"'},
        {"model": "int_sections_chunked", "setting": "chunk_overlap", "value": "0"},
    ]
    assert recorded_settings_problems({"chunk_size": 256}, recorded, []) == [
        "chunk_size = 256: the database's int_sections_chunked was built with "
        "chunk_size = 128; rebuild it with the new value (--select "
        "int_sections_chunked+) or leave chunk_size out to use the recorded one"
    ]
    assert recorded_settings_problems(
        {"chunk_overlap": 32, "splitter": "fast"}, recorded, ["kilt_corpus_stats"]
    ) == [
        "chunk_overlap = 32: the database's int_sections_chunked was built with "
        "chunk_overlap = 0; rebuild it with the new value (--select "
        "int_sections_chunked+) or leave chunk_overlap out to use the recorded one"
    ]
    # Rebuilding the model that records them, equal values, or none given.
    rebuilt = ["int_sections_chunked", "kilt_chunks"]
    assert recorded_settings_problems({"chunk_size": 256}, recorded, rebuilt) == []
    assert recorded_settings_problems({"chunk_size": 128}, recorded, []) == []
    assert recorded_settings_problems({}, recorded, []) == []
