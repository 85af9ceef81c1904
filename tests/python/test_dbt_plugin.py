"""The project's dbt-duckdb plugin: checks before dbt connects."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLE_JSONL, dbt_command, dbt_env, invoke_dbt_in_process
from kilt_chunks.dbt_command import NO_DBT_VARIABLE


@pytest.mark.full
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
    # In this process, as the tests run dbt (conftest.invoke_dbt_in_process,
    # which hands dbt this process's environment, the variable included).
    returncode, output = invoke_dbt_in_process(
        dbt_command(tmp_path, variables), dbt_env(tmp_path)
    )
    assert returncode != 0
    assert (
        "test_a_test_not_marked_dbt_cannot_start_dbt started dbt but is not marked"
        " dbt: mark it @pytest.mark.dbt"
    ) in output
    assert not (tmp_path / "kilt_chunks.duckdb").exists()


def test_the_default_memory_limit_is_a_share_of_the_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 31 item 16: the default was a fixed 512MB, which refused a
    300 MB corpus of long pages on any machine ("KILT_CHUNKS_MEMORY_LIMIT (488
    MiB) is below the 583 MiB this input needs"). Unset, the limit is now half
    of the machine's memory as DuckDB finds it; a given value is kept."""
    import os

    import duckdb
    import yaml

    from kilt_chunks import dbt_plugin
    from kilt_chunks.database import memory_limit_bytes

    profile = yaml.safe_load((ROOT / "profiles.yml").read_text(encoding="utf-8"))
    assert profile["kilt_chunks"]["outputs"]["dev"]["settings"]["memory_limit"] == (
        "{{ env_var('KILT_CHUNKS_MEMORY_LIMIT', '') }}"
    )
    assert dbt_plugin.default_memory_limit(8 * 2**30) == f"{4 * 2**30}B"
    monkeypatch.setattr(dbt_plugin, "machine_memory_bytes", lambda: 16 * 2**30)
    for unset in ("", None, "  "):
        settings = {"memory_limit": unset}
        dbt_plugin.resolve_memory_limit(settings)
        assert settings == {"memory_limit": f"{8 * 2**30}B"}
        dbt_plugin.check_memory_limit(settings)
    given = {"memory_limit": "2GB"}
    dbt_plugin.resolve_memory_limit(given)
    assert given == {"memory_limit": "2GB"}
    monkeypatch.undo()
    # The machine as DuckDB reads it: its own default limit is 80% of it,
    # and it is no more than the physical memory.
    with duckdb.connect() as con:
        duckdb_default = memory_limit_bytes(con)
    machine = dbt_plugin.machine_memory_bytes()
    assert abs(machine * 0.8 - duckdb_default) <= 0.1 * 2**30
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 64 * 2**20 < machine <= physical * 1.02
