"""The summary printed at the end of the main job."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SAMPLE, Build, database_held_by_another_process
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
    with database_held_by_another_process(db) as holder_pid:
        assert main(["summary", "--db", str(db)]) == 1
        err = capsys.readouterr().err
        assert f"database {db} is in use by another process (PID {holder_pid})" in err
        assert "wait for that build to finish" in err


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
    # Issue 21 item 13: `stats` says so too, and exits 1.
    assert main(["stats", "--db", str(db_path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "kilt-chunks corpus statistics"
    assert out.splitlines()[-1] == (
        "  THE LAST dbt RUN did not finish (killed, or a step after the models"
        " failed, e.g. the export); these statistics may be those of an earlier"
        " build: run `dbt build` again"
    )


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


#: Libraries no command needs before it runs: the Hub client and ``datasets``
#: (with pandas) are imported by ``push`` alone, matplotlib by the export.
_HEAVY_FOR_START = ("datasets", "huggingface_hub", "pandas", "matplotlib", "torch")


def test_the_command_line_starts_without_the_hub_datasets_or_pandas() -> None:
    """The entry point imported ``datasets`` (through the push command's
    error class) on every command: about 1.3 of its 2.3 s of start-up, paid
    by `kilt-chunks summary` and by each `from-dump` run alike. Now the
    parser of every command is built, `--help` of each printed, without
    them."""
    code = (
        "import sys, contextlib, io\n"
        "from kilt_chunks.cli import main\n"
        "for argv in (['--version'], ['--help'], ['from-dump', '--help'],"
        " ['push', '--help'], ['summary', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            main(argv)\n"
        "        except SystemExit as exc:\n"
        "            assert exc.code == 0, (argv, exc.code)\n"
        "print(' '.join(sorted(m for m in sys.modules if '.' not in m)))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    loaded = set(run.stdout.split())
    assert "kilt_chunks" in loaded and "duckdb" in loaded
    assert not loaded & set(_HEAVY_FOR_START), loaded & set(_HEAVY_FOR_START)


#: The first table each command needs.
_FIRST_TABLE = {"summary": "kilt_load_audit", "stats": "kilt_corpus_stats"}


@pytest.mark.dbt
def test_summary_and_stats_of_a_build_that_failed_at_the_load(
    tmp_path: Path, capsys
) -> None:
    """Issue 21 item 13: a first build whose input cannot be read stops at the
    loader; `summary` and `stats` then say in one line that the file holds no
    finished build and where the run failed (not DuckDB's Catalog Error)."""
    from conftest import failed_dbt_build

    failed_dbt_build(tmp_path, tmp_path / "missing.jsonl")
    db = tmp_path / "kilt_chunks.duckdb"
    for command, table in (
        ("summary", "kilt_load_audit"),
        ("stats", "kilt_corpus_stats"),
    ):
        assert main([command, "--db", str(db)]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == (
            f"kilt-chunks: {db} holds no finished build: the last dbt run failed"
            f" in: base_kilt__pages, before it made {table}; fix that and run"
            " `dbt build` again\n"
        )


def test_summary_and_stats_of_an_empty_or_foreign_file(tmp_path: Path, capsys) -> None:
    """Issue 21 item 13: an empty file, a file that is not DuckDB's, and a
    DuckDB file without any build each get one line and exit 1."""
    import duckdb

    empty = tmp_path / "empty.duckdb"
    empty.write_bytes(b"")
    text = tmp_path / "notes.duckdb"
    text.write_text("not a database\n" * 1000)
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    expected = {
        empty: f"{empty} is an empty file, not the DuckDB file of a build: run"
        " `dbt build` (KILT_CHUNKS_DB names the file)",
        text: f"{text} is not a DuckDB database file: give the file a `dbt build`"
        " wrote (--db or KILT_CHUNKS_DB)",
    }
    for command, table in (
        ("summary", "kilt_load_audit"),
        ("stats", "kilt_corpus_stats"),
    ):
        for db, line in expected.items():
            assert main([command, "--db", str(db)]) == 1
            assert capsys.readouterr().err == f"kilt-chunks: {line}\n"
        assert main([command, "--db", str(other)]) == 1
        assert capsys.readouterr().err == (
            f"kilt-chunks: {other} holds no finished kilt-chunks build (no table"
            f" {table}): run `dbt build`\n"
        )
    assert empty.read_bytes() == b""


def test_push_without_a_network_is_one_line(tmp_path: Path, capsys) -> None:
    """Issue 21 item 12: the Hub cannot be reached (here an endpoint on a
    closed local port: the real client, no mock): one line naming the folder
    and the repository, exit 1, no traceback."""
    from test_export import _small_export

    root = _small_export(tmp_path / "exports")
    proc = subprocess.run(
        [sys.executable, "-m", "kilt_chunks.cli", "push", "me/kilt"]
        + ["--export-dir", str(root), "--token", "hf_none"],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9"},
        timeout=300,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(
        f"kilt-chunks: push of {root} to me/kilt failed: the Hugging Face Hub"
        " (http://127.0.0.1:9) cannot be reached or refused it: "
    )
    assert "Traceback" not in proc.stderr


@pytest.mark.dbt
def test_a_database_file_name_with_an_apostrophe(tmp_path: Path) -> None:
    """Issue 21 item 14: DuckDB names the database after the file, and
    dbt-duckdb's own SQL cannot quote an apostrophe in that name: the build
    stops before connecting, in one line naming KILT_CHUNKS_DB. (An
    apostrophe in a folder of the path works: the second database of
    test_export's ownership test lives in one.)"""
    from conftest import ROOT, SAMPLE_JSONL, invoke_dbt_in_process
    from kilt_chunks.dbt_command import dbt_build_command, dbt_build_env

    db = tmp_path / "o'brien.duckdb"
    variables = {"kilt_path": str(SAMPLE_JSONL), "export_dir": str(tmp_path / "ex")}
    returncode, output = invoke_dbt_in_process(
        dbt_build_command(ROOT, tmp_path, variables), dbt_build_env(db)
    )
    assert returncode != 0
    assert (
        f"database {str(db)!r} (KILT_CHUNKS_DB): its file name holds an apostrophe,"
        " which dbt-duckdb cannot quote (the database is named after the file);"
        " set KILT_CHUNKS_DB to a file name without one"
    ) in output
    assert "Traceback" not in output and "Parser Error" not in output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "target"]
