"""The scratch database's life in the dbt graph (macros remove_scratch,
drop_after_reload, models_built_from): which models must be built before
kilt_chunks removes it follows from refs, and a model that breaks the rule
stops the build by name."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from conftest import copy_project, invoke_dbt_in_process
from kilt_chunks.dbt_command import dbt_build_command, dbt_build_env

pytestmark = pytest.mark.dbt


def test_a_new_model_reading_the_scratch_database_after_kilt_chunks_is_named(
    tmp_path: Path,
) -> None:
    """A model that refs the loaded pages but is not an ancestor of
    kilt_chunks would run after the scratch database is gone: the build
    stops at its start, before any model runs, naming the model and the line
    to add."""
    project = copy_project(tmp_path / "project")
    (project / "models" / "marts" / "page_count.sql").write_text(
        "select count(*) as num_pages from {{ ref('stg_kilt__pages') }}\n",
        encoding="utf-8",
    )
    pages = tmp_path / "pages.jsonl"
    page = {"wikipedia_id": "1", "wikipedia_title": "One", "text": ["One\n", "B.\n"]}
    pages.write_text(json.dumps(page) + "\n", encoding="utf-8")
    workdir = tmp_path / "work"
    variables = {"kilt_path": str(pages), "export_dir": "", "progress_seconds": 0}
    returncode, output = invoke_dbt_in_process(
        dbt_build_command(project, workdir, variables, "--select", "base_kilt__pages"),
        dbt_build_env(workdir / "kilt_chunks.duckdb"),
        cwd=project,
    )
    assert returncode != 0, output[-3000:]
    assert (
        "model page_count reads the scratch database but is not built before "
        "kilt_chunks, whose post-hook removes it: add `-- depends_on: "
        "{{ ref('page_count') }}` to models/marts/kilt_chunks.sql"
    ) in output
    assert "Traceback" not in output
    # Stopped before any model ran: nothing was loaded.
    with duckdb.connect(str(workdir / "kilt_chunks.duckdb.scratch")) as con:
        assert con.sql("select table_name from duckdb_tables()").fetchall() == []
