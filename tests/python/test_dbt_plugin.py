"""The project's dbt-duckdb plugin: checks before dbt connects."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import ROOT, SAMPLE_JSONL, dbt_command, dbt_env
from kilt_chunks.dbt_command import NO_DBT_VARIABLE


def test_a_test_not_marked_dbt_cannot_start_dbt(tmp_path: Path) -> None:
    """Issue 23 item 6: the fast lane chose tests by guessing from their
    source and let a full build through (test_project_paths, 144 s). Every
    test not marked dbt runs with NO_DBT_VARIABLE set (conftest), and any dbt
    command of the project then stops before it connects, naming the test.
    This test is itself not marked dbt, so the build below is refused."""
    assert os.environ[NO_DBT_VARIABLE].endswith(
        "test_dbt_plugin.py::test_a_test_not_marked_dbt_cannot_start_dbt"
    )
    variables = {"kilt_path": str(SAMPLE_JSONL), "export_dir": ""}
    proc = subprocess.run(
        dbt_command(tmp_path, variables),
        cwd=ROOT,
        env=dbt_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert (
        "test_a_test_not_marked_dbt_cannot_start_dbt started dbt but is not marked"
        " dbt: mark it @pytest.mark.dbt"
    ) in proc.stdout
    assert not (tmp_path / "kilt_chunks.duckdb").exists()
