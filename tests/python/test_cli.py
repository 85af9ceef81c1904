"""The summary printed at the end of the main job."""

from __future__ import annotations

from pathlib import Path

from conftest import Build
from kilt_chunks.cli import build_summary, main


def test_summary_reports_the_sample_counts(sample_build: Build) -> None:
    text = build_summary(str(sample_build.db_path))
    assert "pages read                 106" in text
    assert "sections kept            2,043" in text
    assert "sections dropped           323" in text
    assert "chunks written           3,710" in text
    assert str(sample_build.export_dir) in text


def test_summary_of_missing_database_fails_cleanly(tmp_path: Path, capsys) -> None:
    assert main(["summary", "--db", str(tmp_path / "none.duckdb")]) == 1
    assert "no such DuckDB file" in capsys.readouterr().err
