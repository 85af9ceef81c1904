"""docs/recipes.md: every bash block runs, in order, in a copy of the project."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import ROOT, SAMPLE, Build, copy_build, copy_project

RECIPES = ROOT / "docs" / "recipes.md"


def recipe_blocks(text: str) -> list[str]:
    """The ```bash blocks of a Markdown page, in order."""
    return re.findall(r"^```bash\n(.*?)^```$", text, flags=re.S | re.M)


def _run(project: Path, script: str) -> str:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    env.pop("KILT_CHUNKS_DB", None)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, (script, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


def test_recipes_page_has_the_four_recipes() -> None:
    text = RECIPES.read_text(encoding="utf-8")
    blocks = recipe_blocks(text)
    assert len(blocks) == 4
    assert "kilt-chunks eval" in blocks[2] and "chunk_size: 512" in blocks[3]


@pytest.mark.dbt
def test_every_recipe_runs_on_the_sample(tmp_path: Path, sample_build: Build) -> None:
    """As a user after `make demo` (here the shared sample build, which kept
    its scratch database as the re-chunk recipe needs; its export is not
    copied: the recipe that reads exports/ builds it first): each block exits
    0 and prints what it says."""
    project = copy_project(tmp_path / "project")
    (project / ".venv").symlink_to(Path(sys.prefix))
    copy_build(sample_build, project)
    outputs = [
        _run(project, block)
        for block in recipe_blocks(RECIPES.read_text(encoding="utf-8"))
    ]
    assert (
        f"rebuilt {SAMPLE.chunks:,} of {SAMPLE.chunks:,} chunks exactly" in outputs[0]
    )
    kept = SAMPLE.chunks - SAMPLE.chunks_under_32_tokens
    assert f"kept {kept:,} of {SAMPLE.chunks:,} chunks (5.6% under 32" in outputs[1]
    assert (project / "chunks_32_tokens_or_more.parquet").is_file()
    assert "wrote runs/embedded.trec: 11 queries" in outputs[2]
    assert "kilt-chunks eval: handmade-dev-kilt" in outputs[2]
    with duckdb.connect(str(project / "kilt_chunks.duckdb"), read_only=True) as con:
        chunks, most_tokens = con.sql(
            "select count(*), max(num_tokens) from kilt_chunk_spans"
        ).fetchall()[0]
    assert chunks < SAMPLE.chunks  # 512-token chunks: fewer
    assert 256 < most_tokens <= 512 + 8
