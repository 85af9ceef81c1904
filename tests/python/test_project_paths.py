"""Relative paths resolve against the project folder, whatever the current one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import DBT, WITHOUT_DATA_TESTS, copy_project, invoke_dbt_in_process
from kilt_chunks.cli import main
from kilt_chunks.settings import project_path


def test_project_path_joins_only_relative_paths() -> None:
    assert project_path("data/x.jsonl", "/proj") == "/proj/data/x.jsonl"
    assert project_path("/abs/x.jsonl", "/proj") == "/abs/x.jsonl"
    for kept in ("", "~/x", "hf://facebook/kilt_wikipedia", ":memory:", "s3://b/k"):
        assert project_path(kept, "/proj") == kept
    # No project folder known (outside dbt, or dbt run in the project): as given.
    assert project_path("data/x.jsonl", "") == "data/x.jsonl"


@pytest.mark.dbt
def test_a_build_from_another_folder_writes_only_into_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """`dbt build --project-dir P --profiles-dir P` from elsewhere, with every
    path left at its relative default: the input is found, the database,
    scratch, logs, target and export all land in P, nothing in the current
    folder, and `kilt-chunks summary --db` from there reports P's export.
    (The copy's sample, at the default input path, is cut to its first 10
    pages: the paths are the point, not the rows.)"""
    project = copy_project(tmp_path / "project")
    sample = project / "data" / "kilt_enwiki2016_sample.jsonl"
    first_pages = sample.read_text(encoding="utf-8").splitlines(keepends=True)[:10]
    sample.write_text("".join(first_pages), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILT_CHUNKS_")}
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    returncode, output = invoke_dbt_in_process(
        [
            DBT,
            "build",
            "--project-dir",
            "../project",
            "--profiles-dir",
            "../project",
            "--vars",
            '{"progress_seconds": 0, "workers": 1}',
            *WITHOUT_DATA_TESTS,  # the sample's rows: the shared build checks them
        ],
        env,
        cwd=elsewhere,
    )
    assert returncode == 0, output[-4000:]
    assert sorted(os.listdir(elsewhere)) == []
    assert (project / "kilt_chunks.duckdb").is_file()
    assert not (project / "kilt_chunks.duckdb.scratch").exists()  # removed
    export = project / "exports"
    assert (export / "data" / "chunks").is_dir() and (export / "README.md").is_file()
    for name in [k for k in os.environ if k.startswith("KILT_CHUNKS_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(elsewhere)
    assert main(["summary", "--db", str(project / "kilt_chunks.duckdb")]) == 0
    summary = capsys.readouterr().out
    assert f"export            {export}/  (chunks 1 file" in summary
    assert f"kilt-chunks build of {project / 'data'}" in summary
