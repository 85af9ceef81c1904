"""The summary printed at the end of the main job."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SAMPLE, Build
from kilt_chunks.cli import build_summary, main


@pytest.mark.dbt
def test_summary_reports_the_sample_counts(sample_build: Build) -> None:
    text = build_summary(str(sample_build.db_path))
    assert f"pages read {SAMPLE.pages:>19,}" in text
    assert f"sections kept {SAMPLE.sections:>16,}" in text
    assert f"sections dropped {SAMPLE.blank_sections:>13,}" in text
    assert f"chunks written {SAMPLE.chunks:>15,}" in text
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


@pytest.mark.dbt
def test_summary_says_when_the_last_build_did_not_finish(
    tmp_path: Path, capsys, sample_build: Build
) -> None:
    """A build that stops (here at its settings: export_dir is a file) after
    a finished one: the summary then exits 1 and says so, instead of
    describing the tables as the new build's."""
    from conftest import SAMPLE_JSONL, copy_build, failed_dbt_build

    copy_build(sample_build, tmp_path)
    db_path = tmp_path / "kilt_chunks.duckdb"
    assert main(["summary", "--db", str(db_path)]) == 0
    assert "build wall time" in capsys.readouterr().out
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder\n")
    failed = failed_dbt_build(
        tmp_path, SAMPLE_JSONL, extra_vars={"export_dir": str(a_file)}
    )
    assert f"export_dir = '{a_file}': is a file, not a folder" in failed
    assert main(["summary", "--db", str(db_path)]) == 1
    out = capsys.readouterr().out
    assert f"chunks written {SAMPLE.chunks:>15,}" in out
    assert "THE LAST dbt RUN did not finish" in out


@pytest.mark.dbt
def test_version_and_a_closed_pipe(sample_build: Build) -> None:
    version = subprocess.run(
        [sys.executable, "-m", "kilt_chunks.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.startswith("kilt-chunks 0.")
    # `kilt-chunks summary | head -0`: the reader has closed the pipe before
    # the summary is written (it starts in well under the import time).
    summary = subprocess.Popen(
        [sys.executable, "-m", "kilt_chunks.cli", "summary", "--db"]
        + [str(sample_build.db_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    summary.stdout.close()
    assert summary.wait() == 0
    assert "Traceback" not in summary.stderr.read()
