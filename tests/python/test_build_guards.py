"""Issue 31 items 11-14: what a build refuses before anything runs, and what
it warns about.

One small scenario on a copy of the shared sample build (no new sample
build): a build of another input is refused (item 12); with
``replace_other_input`` it runs, on one page that has no text to chunk and
the hand-made task with three bad lines (item 13), while a second database's
build into its export folder is refused at its start (item 14). The re-chunk
recipe on a build without its scratch database (item 11) refuses in one line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import (
    FIXTURES,
    ROOT,
    SAMPLE_JSONL,
    WITHOUT_UNIT_TESTS,
    Build,
    copy_project,
    dbt_command,
    dbt_env,
    run_dbt_build,
)
from kilt_chunks.build.records import claim_export
from kilt_chunks.build.replacing import (
    claim_export_dir,
    input_identity,
    other_input_problem,
    replacing_problems_json,
)
from kilt_chunks.export.folder import OWNER_FILE

TASKS = FIXTURES / "kilt_tasks" / "handmade-dev-kilt.jsonl"

#: A model, test or seed started (a hook's START line is not one).
NODE_STARTED = re.compile(r"START (sql|python|test|seed|unit_test)")


def _make_targets(target: str) -> str:
    """The commands `make -n <target>` would run (nothing is run)."""
    return subprocess.run(
        ["make", "-n", "--always-make", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


# -- item 12: nothing of another input replaced without asking -----------------


def test_demo_dump_uses_its_own_database_and_export_folder() -> None:
    """Item 12: `make demo-dump` built into the project's kilt_chunks.duckdb
    and exports/ (where a full build lives); it now builds, and reports,
    dump_demo/kilt_chunks.duckdb and dump_demo/exports."""
    commands = _make_targets("demo-dump")
    (build,) = [line for line in commands.splitlines() if "dbt build" in line]
    assert build.startswith("KILT_CHUNKS_DB=dump_demo/kilt_chunks.duckdb ")
    assert "export_dir: dump_demo/exports" in commands
    assert "kilt-chunks summary --db dump_demo/kilt_chunks.duckdb" in commands


def test_a_build_of_other_input_is_one_line_naming_both(tmp_path: Path) -> None:
    """Item 12, the check itself: the database's recorded input and the
    export folder's (its owner file, when the folder is this database's)
    against this build's; the same input through another spelling is the
    same; another database's folder is left to the owner check."""
    old, new = tmp_path / "full.json", tmp_path / "sample.jsonl"
    database = str(tmp_path / "kilt_chunks.duckdb")
    assert other_input_problem(str(old), "", "", database) is None  # new database
    assert (
        other_input_problem(f"{tmp_path}/./full.json", str(old), "", database) is None
    )
    line = other_input_problem(str(new), str(old), "", database)
    assert line == (
        f"the database {database!r} holds the build of {str(old)!r}; this build "
        f"reads {str(new)!r} and would replace it: give it its own database and "
        "export folder (KILT_CHUNKS_DB, export_dir), or pass "
        "replace_other_input: true to replace them"
    )
    exports = tmp_path / "exports"
    exports.mkdir()
    claim_export(exports, str(exports), database, "b1", str(old))
    assert json.loads((exports / OWNER_FILE).read_text())["input"] == str(old)
    # The database was deleted, its export kept: the export still counts.
    line = other_input_problem(str(new), "", str(exports), database)
    assert line is not None and line.startswith(
        f"export_dir {str(exports)!r} the export of {str(old)!r}; this build reads"
    )
    # The qrels writer claims again without an input: the input is kept.
    claim_export(exports, str(exports), database, "b2")
    assert json.loads((exports / OWNER_FILE).read_text())["input"] == str(old)
    # A copy with its times (a copied project) is the same input; a changed
    # file is not.
    copy = tmp_path / "copy" / "full.json"
    copy.parent.mkdir()
    old.write_text("{}\n")
    shutil.copy2(old, copy)
    assert other_input_problem(str(copy), str(old), "", database) is None
    copy.write_text("{} \n")
    assert other_input_problem(str(copy), str(old), "", database) is not None
    other = str(tmp_path / "other.duckdb")
    assert other_input_problem(str(new), "", str(exports), other) is None
    # replace_other_input: true skips it; a build that does not read its
    # input (a partial build of the task models) is not checked.
    given = {"kilt_path": str(new), "database_input": str(old), "export_dir": ""}
    assert replacing_problems_json(
        json.dumps({**given, "checks_input": True}), database
    )
    for flags in ({"checks_input": True, "replace": True}, {"checks_input": False}):
        assert replacing_problems_json(json.dumps({**given, **flags}), database) == ""


def test_the_export_folder_is_claimed_once_and_refused_to_another(
    tmp_path: Path,
) -> None:
    """Item 14, the claim: a folder without owner is claimed for the first
    database (created if missing, build left empty, input recorded); the
    second gets the owner check's line; the first claims again freely and
    an export's owner record is not overwritten."""
    exports = tmp_path / "new" / "exports"
    first, second = str(tmp_path / "a.duckdb"), str(tmp_path / "b.duckdb")
    assert claim_export_dir(str(exports), first, "pages.jsonl") is None
    assert json.loads((exports / OWNER_FILE).read_text()) == {
        "database": first,
        "build": "",
        "input": input_identity("pages.jsonl"),
    }
    line = claim_export_dir(str(exports), second, "pages.jsonl")
    assert line == (
        f"export_dir {str(exports)!r} holds the export of database {first!r}, not "
        f"of this build's database {second!r} (KILT_CHUNKS_DB): set export_dir to "
        "another folder, or delete that folder to let this database export there"
    )
    claim_export(exports, str(exports), first, "build-1", "/in.jsonl")
    assert claim_export_dir(str(exports), first, "pages.jsonl") is None
    assert json.loads((exports / OWNER_FILE).read_text())["build"] == "build-1"
    assert claim_export_dir("", first, "x") is None


@dataclass
class Scenario:
    """The outputs of the scenario's builds."""

    refused: Build
    replaced: Build
    second: Build
    claimed_before_export: bool
    exports: Path


def _one_page_without_text(path: Path) -> Path:
    """A KILT page whose only paragraph is its title: loaded, nothing to
    chunk (pages_without_text)."""
    page = {
        "wikipedia_id": "9001",
        "wikipedia_title": "Title Only",
        "text": ["Title Only\n"],
        "anchors": [],
        "categories": "",
        "history": {},
    }
    path.write_text(json.dumps(page) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory, sample_build: Build) -> Scenario:
    root = tmp_path_factory.mktemp("guards")
    first = root / "first"
    first.mkdir()
    shutil.copyfile(sample_build.db_path, first / "kilt_chunks.duckdb")
    pages = _one_page_without_text(root / "one_page.jsonl")
    exports = root / "shared_exports"
    refused = run_dbt_build(
        first,
        pages,
        extra_vars={"export_dir": str(exports)},
        check=False,
        data_tests=False,
    )
    # The same build, allowed, run in the background (its data tests give
    # the warnings checked below; the dbt unit tests run in the shared sample
    # build only); a second database's build into its export folder is
    # started as soon as the folder is claimed.
    variables = {
        "kilt_path": str(pages),
        "export_dir": str(exports),
        "kilt_tasks": str(TASKS),
        "replace_other_input": True,
        "progress_seconds": 0,
        "workers": 1,
    }
    log = root / "first.out"
    with log.open("w") as out:
        process = subprocess.Popen(
            dbt_command(first, variables, *WITHOUT_UNIT_TESTS),
            cwd=ROOT,
            env=dbt_env(first),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 600
        while not (exports / OWNER_FILE).exists() and process.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        claimed_before_export = not re.search(
            r"START .*kilt_export", log.read_text(encoding="utf-8")
        )
        second = run_dbt_build(
            root / "second",
            pages,
            extra_vars={"export_dir": str(exports)},
            check=False,
            data_tests=False,
        )
        returncode = process.wait(timeout=900)
    replaced = Build(
        first / "kilt_chunks.duckdb",
        exports,
        returncode,
        log.read_text(encoding="utf-8"),
    )
    return Scenario(refused, replaced, second, claimed_before_export, exports)


@pytest.mark.dbt
def test_a_build_of_other_input_is_refused_before_anything_runs(
    scenario: Scenario, sample_build: Build
) -> None:
    """Item 12: a default-settings build over a database that holds the
    build of another input replaced it silently; now it stops in one line
    naming both inputs and the flag, before any node runs; with
    `replace_other_input: true` it runs."""
    output = scenario.refused.output
    assert scenario.refused.returncode != 0
    assert "Traceback" not in output and not NODE_STARTED.search(output)
    assert (
        f"holds the build of {str(SAMPLE_JSONL)!r}; this build reads "
        f"{str(scenario.exports.parent / 'one_page.jsonl')!r} and would replace it"
    ) in output
    assert "replace_other_input: true" in output
    assert scenario.replaced.returncode == 0, scenario.replaced.output[-3000:]
    assert scenario.replaced.query("select kilt_path from kilt_build_info") == [
        (str(scenario.exports.parent / "one_page.jsonl"),)
    ]


@pytest.mark.dbt
def test_zero_pages_chunked_and_rejected_task_lines_are_warnings(
    scenario: Scenario,
) -> None:
    """Item 13: a build that chunked no page ended `WARN=0`, and the task
    file's three bad lines gave no warning; both are dbt warnings now."""
    output = scenario.replaced.output
    assert scenario.replaced.query(
        "select pages_loaded, pages_chunked, pages_without_text from kilt_load_audit"
    ) == [(1, 0, 1)]
    assert re.search(r"WARN 1 at_least_one_page_chunked", output), output[-3000:]
    assert re.search(r"WARN 3 warn_on_rejected_task_lines", output)
    assert "WARN=0" not in output


@pytest.mark.dbt
def test_a_second_database_into_a_claimed_export_is_refused_at_its_start(
    scenario: Scenario,
) -> None:
    """Item 14: the export folder was claimed only at kilt_export, so a
    second database's build ran whole and died there with an
    ExportOwnerError traceback; now the first build claims it before
    anything runs and the second stops at its start, one line."""
    assert scenario.claimed_before_export
    output = scenario.second.output
    assert scenario.second.returncode != 0
    assert "Traceback" not in output and not NODE_STARTED.search(output)
    assert (
        f"export_dir {str(scenario.exports)!r} holds the export of database "
        f"{str(scenario.exports.parent / 'first' / 'kilt_chunks.duckdb')!r}"
    ) in output
    owner = json.loads((scenario.exports / OWNER_FILE).read_text())
    assert owner["database"].endswith("first/kilt_chunks.duckdb")
    assert owner["build"]  # the finished export recorded its build


# -- item 11: the re-chunk recipe after a plain build --------------------------


def test_make_demo_keeps_the_scratch_database_the_recipe_needs() -> None:
    """Item 11: docs/recipes.md's re-chunk recipe is pasted after `make
    demo`, whose build deleted the scratch database it reads; `make demo`
    keeps it (a few MB for the sample), as the recipe test's build does."""
    (build,) = [
        line for line in _make_targets("demo").splitlines() if "dbt build" in line
    ]
    assert "--vars '{keep_scratch: true}'" in build


@pytest.mark.dbt
def test_the_rechunk_recipe_without_scratch_refuses_in_one_line(
    tmp_path: Path,
    sample_build: Build,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    """Item 11: after a build that did not keep its scratch database, the
    recipe's commands, pasted as they are, ended in a Catalog Error traceback
    and then printed the old numbers as if they had worked. Now the build
    stops in one line saying what to run first, the second command does not
    run, and `kilt-chunks summary` reports the intact build, not a failed
    run."""
    from test_recipes import RECIPES, recipe_blocks

    project = copy_project(tmp_path / "project")
    (project / ".venv").symlink_to(Path(sys.prefix))
    shutil.copyfile(sample_build.db_path, project / "kilt_chunks.duckdb")
    block = recipe_blocks(RECIPES.read_text(encoding="utf-8"))[3]
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    env.pop("KILT_CHUNKS_DB", None)
    # Pasted into an interactive shell: no `set -e`.
    proc = subprocess.run(
        ["bash", "-c", block],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Traceback" not in output and "Catalog Error" not in output
    assert (
        "int_sections_chunked, kilt_chunks read int_sections_assembled, which is "
        "gone: a build deletes its scratch database ("
    ) in output
    assert "Run the whole build once with --vars '{keep_scratch: true}'" in output
    assert "most_tokens" not in output  # the second command did not run
    # `kilt-chunks summary` in the project folder (run in this process).
    from kilt_chunks.cli import main

    monkeypatch.delenv("KILT_CHUNKS_DB", raising=False)
    monkeypatch.chdir(project)
    capsys.readouterr()
    assert main(["summary"]) == 0
    summary = capsys.readouterr().out
    assert "kilt_chunks.duckdb" in summary
    assert "THE LAST dbt RUN" not in summary


@pytest.mark.dbt
def test_the_real_card_describes_columns_and_names_the_task_split(
    scenario: Scenario,
) -> None:
    """Item 19 on a real build: the hand-made dev task's queries are the
    split `validation` (they were `train`); the card describes each column
    from the models' dbt docs (persisted as column comments) with no
    reference to SPEC, and holds no note to its publisher."""
    from huggingface_hub import DatasetCard

    queries = scenario.exports / "data" / "queries"
    assert [p.name for p in queries.iterdir()] == ["validation-00000-of-00001.parquet"]
    card = DatasetCard.load(scenario.exports / "README.md")
    assert card.data.license == "cc-by-sa-3.0"
    configs = {c["config_name"]: c for c in card.data.configs}
    assert configs["queries"]["data_files"] == [
        {"split": "validation", "path": "data/queries/validation-*.parquet"}
    ]
    text = card.text
    assert "SPEC" not in text and "check them before" not in text
    assert "19 columns:" in text
    assert (
        "| `chunk_order` | int32 | no | 0-based position of the chunk in its section. |"
    ) in text
    assert "| `pageid` | string | yes | Taken from the page's `history` as " in text
