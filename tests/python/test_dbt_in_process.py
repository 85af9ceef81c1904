"""The tests' in-process dbt runner (conftest.invoke_dbt_in_process): what it
reuses between commands gives the manifest a fresh parse gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import conftest
from conftest import SAMPLE_JSONL, dbt_command, dbt_env, invoke_dbt_in_process


def _parsed_macros(workdir: Path, variables: dict) -> dict:
    """``dbt parse`` in this process; the manifest's macros without their
    creation times."""
    cmd = dbt_command(workdir, variables)
    cmd[1:2] = ["parse"]
    returncode, output = invoke_dbt_in_process(cmd, dbt_env(workdir))
    assert returncode == 0, output[-3000:]
    manifest = json.loads((workdir / "target" / "manifest.json").read_text())
    return {
        unique_id: {k: v for k, v in macro.items() if k != "created_at"}
        for unique_id, macro in manifest["macros"].items()
    }


@pytest.mark.dbt
def test_reused_macros_equal_a_fresh_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two parses with other vars (dbt parses everything again): the second
    takes the macros the first parsed (conftest._reuse_parsed_macros); its
    manifest's macros, their dependencies included, equal the first's."""
    monkeypatch.setattr(conftest, "_PARSED_MACROS", {})
    first = _parsed_macros(tmp_path / "a", {"kilt_path": str(SAMPLE_JSONL)})
    assert len(conftest._PARSED_MACROS) == 1  # parsed, and kept
    second = _parsed_macros(tmp_path / "b", {"kilt_path": str(tmp_path / "x.jsonl")})
    assert len(conftest._PARSED_MACROS) == 1  # reused, not parsed again
    assert len(first) > 500
    assert second == first
    assert any(macro["depends_on"]["macros"] for macro in second.values())
