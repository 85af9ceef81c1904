"""The JSON-line parsers are package data (kilt_chunks/sql/json_lines.sql):
one copy for the loader, the task reader and the dbt hooks, and the package
reads them from a wheel without the dbt project folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import duckdb

from conftest import ROOT
from kilt_chunks.build.loading import UNREADABLE_INPUT, read_kilt_pages
from kilt_chunks.evaluation.provenance import UNREADABLE_TASKS, read_task_lines
from kilt_chunks.sql_templates import json_lines_macros

#: The reasons both parsers give a line that is no JSON object.
LINE_REASONS = [
    None,
    "empty line",
    "empty line",
    "invalid JSON (truncated or malformed line)",
    "line is not a JSON object",
]


def test_the_marker_is_declared_once() -> None:
    assert UNREADABLE_INPUT == UNREADABLE_TASKS == "unreadable input: "
    assert str(json_lines_macros().unreadable_input_marker()) == UNREADABLE_INPUT
    macro = (ROOT / "macros" / "stop_on_unreadable_input.sql").read_text()
    assert "unreadable input" not in macro
    assert "unreadable_input_marker()" in macro


def test_pages_and_task_lines_give_the_same_line_reasons(tmp_path: Path) -> None:
    page = {"wikipedia_id": "1", "wikipedia_title": "T", "text": ["T\n"]}
    query = {"id": "q", "input": "x", "output": []}
    bad = ["   \r\n", "\n", '{"truncated": \n', "[1, 2]\n"]
    pages = tmp_path / "pages.jsonl"
    pages.write_text(json.dumps(page) + "\n" + "".join(bad))
    tasks = tmp_path / "t-dev-kilt.jsonl"
    tasks.write_text(json.dumps(query) + "\n" + "".join(bad))
    page_reasons = read_kilt_pages(str(pages)).read_all()["reject_reason"]
    task_reasons = read_task_lines(str(tasks)).read_all()["reject_reason"]
    assert page_reasons.to_pylist() == LINE_REASONS
    assert task_reasons.to_pylist() == LINE_REASONS


def test_macro_sql_runs_in_duckdb() -> None:
    """The template renders to SQL DuckDB runs (the dbt hooks render the same
    macros)."""
    macros = json_lines_macros()
    with duckdb.connect() as con:
        con.execute(str(macros.create_task_lines_parser()))
        con.execute(
            "create table lines as select 1::bigint as line_number,"
            """ '{"id": 7, "input": "a"}' as line, null::varchar as read_error"""
        )
        rows = con.sql(
            "select task, query_id, reject_reason"
            " from kilt_task_lines_parsed('lines', 't', 'f')"
        ).fetchall()
        assert rows == [("t", "7", None)]
        con.execute(str(macros.drop_task_lines_parser()))


def test_a_wheel_reads_pages_and_task_lines_without_the_project(
    tmp_path: Path,
) -> None:
    """Built as a wheel and imported from it, in a folder with no dbt project,
    the package finds its SQL (it no longer reads ../macros)."""
    # Built from a copy of what the wheel is made of (setuptools writes its
    # build folder beside pyproject.toml).
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info")
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps"]
        + ["--no-build-isolation", "-q", "-w", str(tmp_path / "wheel")],
        check=True,
    )
    (wheel,) = (tmp_path / "wheel").glob("kilt_chunks-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        assert "kilt_chunks/sql/json_lines.sql" in archive.namelist()
        archive.extractall(site)
    (tmp_path / "t-dev-kilt.jsonl").write_text('{"id": "q", "input": "x"}\n[1]\n')
    (tmp_path / "p.jsonl").write_text('{"wikipedia_id": "1"}\n')
    script = (
        "import kilt_chunks.evaluation.provenance as p\n"
        "import kilt_chunks.build.loading as l\n"
        "print(p.__file__)\n"
        "print(p.read_task_lines('t-dev-kilt.jsonl').read_all()"
        "['reject_reason'].to_pylist())\n"
        "print(l.read_kilt_pages('p.jsonl').read_all()['reject_reason'].to_pylist())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.splitlines() == [
        str(site / "kilt_chunks" / "evaluation" / "provenance.py"),
        "[None, 'line is not a JSON object']",
        "['missing wikipedia_title']",
    ]
