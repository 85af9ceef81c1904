"""The build's DuckDB file: the DuckDB CLI users install opens it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import SAMPLE, Build
from kilt_chunks.database import STORAGE_COMPATIBILITY_VERSION, connect

#: The DuckDB CLI of the ``duckdb-cli`` package (a dev dependency, pinned to the
#: release line users get from ``pip install duckdb-cli``).
DUCKDB_CLI = Path(sys.executable).with_name("duckdb")


def _cli(db: Path, sql: str) -> str:
    proc = subprocess.run(
        [str(DUCKDB_CLI), "-readonly", "-csv", "-noheader", str(db), "-c", sql],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.dbt
def test_the_duckdb_cli_opens_the_built_file_and_its_scratch(
    sample_build: Build,
) -> None:
    """Issue 25 item 2: DuckDB 2.x wrote a file the installable CLI (1.5.x)
    refused ("version number 69 ... only versions between 64 and 68")."""
    version = subprocess.run(
        [str(DUCKDB_CLI), "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert version.startswith("v1.5."), version
    assert _cli(sample_build.db_path, "select count(*) from kilt_chunks") == str(
        SAMPLE.chunks
    )
    scratch = Path(f"{sample_build.db_path}.scratch")
    assert _cli(scratch, "select count(*) from kilt_pages") == str(SAMPLE.pages)


def test_a_file_the_package_creates_is_in_the_build_storage_format(
    tmp_path: Path,
) -> None:
    """The settings check opens the database file before dbt does, so it
    creates it: in the same storage format as the build."""
    path = tmp_path / "new.duckdb"
    connect(str(path)).close()
    with duckdb.connect(str(path), read_only=True) as con:
        (row,) = con.sql(
            "select tags['storage_version'] from duckdb_databases()"
            " where database_name = 'new'"
        ).fetchall()
    assert row[0].startswith(STORAGE_COMPATIBILITY_VERSION), row
    assert _cli(path, "select 42") == "42"
