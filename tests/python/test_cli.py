"""The summary printed at the end of the main job."""

from __future__ import annotations

import subprocess
import sys
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


def test_summary_while_a_build_holds_the_database(tmp_path: Path, capsys) -> None:
    """A reader blocked by a running build gets the plain message, with the PID."""
    db = tmp_path / "busy.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]);"
            " print('holding', flush=True); time.sleep(60)",
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "holding\n"
        assert main(["summary", "--db", str(db)]) == 1
        err = capsys.readouterr().err
        assert f"database {db} is in use by another process (PID {holder.pid})" in err
        assert "wait for that build to finish" in err
    finally:
        holder.kill()
        holder.wait()
