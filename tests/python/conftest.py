"""Shared fixtures: run the real dbt project on a fixture into a temp folder."""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from kilt_chunks.dbt_command import (
    NO_DBT_VARIABLE,
    dbt_build_command,
    dbt_build_env,
    dbt_executable,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAMPLE_JSONL = ROOT / "data" / "kilt_enwiki2016_sample.jsonl"
SAMPLE_PARQUET = ROOT / "data" / "kilt_enwiki2016_sample.hf.parquet"
DBT = dbt_executable()


@dataclass(frozen=True)
class SampleCounts:
    """What the bundled sample gives (SPEC rules 1-7), the one place the
    tests take these numbers from."""

    pages: int = 106
    raw_sections: int = 2366
    sections: int = 2043
    blank_sections: int = 323
    chunks: int = 3710
    chunks_under_32_tokens: int = 209


SAMPLE = SampleCounts()


@dataclass
class Build:
    """A finished `dbt build`: its DuckDB file, export folder and output."""

    db_path: Path
    export_dir: Path
    returncode: int
    output: str

    def query(self, sql: str) -> list[tuple]:
        """Run ``sql`` on the build's DuckDB file (read-only), with its scratch
        database attached as ``kilt_scratch`` when it was kept."""
        with duckdb.connect(str(self.db_path), read_only=True) as con:
            scratch = Path(f"{self.db_path}.scratch")
            if scratch.exists():
                quoted = str(scratch).replace("'", "''")
                con.execute(f"attach '{quoted}' as kilt_scratch (read_only)")
            return con.sql(sql).fetchall()


def dbt_command(workdir: Path, variables: dict, *args: str) -> list[str]:
    """`dbt build` of this project with target, logs and vars under workdir."""
    return dbt_build_command(ROOT, workdir, variables, *args)


def dbt_env(workdir: Path) -> dict[str, str]:
    """Environment that points the build at workdir's DuckDB file."""
    return dbt_build_env(workdir / "kilt_chunks.duckdb")


#: dbt flags that leave the dbt unit tests out of a build.
WITHOUT_UNIT_TESTS = ("--exclude-resource-type", "unit_test")

#: dbt flags that leave the data tests and unit tests out of a build.
WITHOUT_DATA_TESTS = ("--exclude-resource-type", "test", *WITHOUT_UNIT_TESTS)


def run_dbt_build(
    workdir: Path,
    kilt_path: Path | str,
    *,
    select: str | None = None,
    extra_vars: dict | None = None,
    check: bool = True,
    args: tuple[str, ...] = (),
    data_tests: bool = True,
    unit_tests: bool = False,
) -> Build:
    """Run `dbt build` of this project in this test process
    (:func:`invoke_dbt_in_process`), writing under workdir. (Tests of what
    only a process of its own shows, a kill or a second process on the same
    file, start ``dbt`` themselves.)

    ``data_tests=False`` leaves out the project's data tests and unit tests
    (:data:`WITHOUT_DATA_TESTS`): for tests of the build's mechanics (resume,
    settings, export folders) that run the sample again, whose rows the
    shared sample build's data tests already check. They take about a third
    of a small build's node time.

    ``unit_tests=True`` runs the project's dbt unit tests too (SPEC's section
    rules on fixture rows, about 2.5 s of nodes): they read no input, so the
    shared sample build runs them (test_dbt_unit_tests) and other builds
    leave them out."""
    workdir.mkdir(parents=True, exist_ok=True)
    export_dir = workdir / "exports"
    variables = {
        "kilt_path": str(kilt_path),
        "export_dir": str(export_dir),
        "progress_seconds": 0,
        # One chunking worker: the sample chunks in a fraction of a second,
        # and starting a second worker costs each build about 2.5 s. The
        # shared sample build uses two (the pool as a real build runs it).
        "workers": 1,
        **(extra_vars or {}),
    }
    if not data_tests:
        args = (*args, *WITHOUT_DATA_TESTS)
    elif not unit_tests:
        args = (*args, *WITHOUT_UNIT_TESTS)
    cmd = dbt_command(workdir, variables, *args)
    if select:
        cmd += ["--select", select]
    returncode, output = invoke_dbt_in_process(cmd, dbt_env(workdir))
    if check and returncode != 0:
        raise AssertionError(f"dbt build failed ({returncode}):\n{output[-6000:]}")
    return Build(workdir / "kilt_chunks.duckdb", export_dir, returncode, output)


def invoke_dbt_in_process(
    cmd: list[str], env: dict[str, str], cwd: Path = ROOT
) -> tuple[int, str]:
    """Run the dbt command line ``cmd`` (``[dbt, "build", ...]``, any dbt
    command) in this process through dbt's programmatic entry point
    (``dbtRunner``), as the ``dbt`` executable would run it in a new one: in
    ``cwd``, with ``env`` as the whole environment, stdout and stderr
    captured together.

    Returns ``(exit code, output)``, the exit code as dbt's command line gives
    it: 0 success, 1 a node failed, 2 an error stopped dbt.

    Why: a build's new process spends about 6 s before its first node (Python
    and dbt's imports, NLTK's and tiktoken's loads in the chunking model) that
    a test worker pays once this way (docs/internals.md, "Tests"). After
    the run the DuckDB file is closed (dbt-duckdb keeps its connection in a
    class attribute, ``DuckDBConnectionManager._ENV``, for the life of the
    process) and dbt-duckdb's once-per-process warnings are forgotten, so the
    next command starts as a new process would.
    """
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    from dbt.cli.main import dbtRunner

    _reuse_parsed_macros()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    output = io.StringIO()
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            result = dbtRunner().invoke(cmd[1:])
    finally:
        with DuckDBConnectionManager._LOCK:
            if DuckDBConnectionManager._ENV is not None:
                DuckDBConnectionManager._ENV.close()
            DuckDBConnectionManager._ENV = None
            DuckDBConnectionManager._LOGGED_MESSAGES.clear()
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    if result.success:
        return 0, output.getvalue()
    return (1 if result.exception is None else 2), output.getvalue()


#: Macros dbt parsed in this test process, by project folders and macro
#: files' checksums (see :func:`_reuse_parsed_macros`).
_PARSED_MACROS: dict[tuple, tuple[dict, dict]] = {}


def _reuse_parsed_macros() -> None:
    """Let every in-process dbt command after the first take the macros dbt
    parsed for the same macro files (dbt's own about 1,100 and this
    project's) instead of parsing them again: about 1.5 s of each command's
    parse (docs/internals.md, "Tests").

    dbt keeps parsed macros between runs itself (partial parsing), but
    drops all of it when ``--vars`` change, and each test passes its own
    paths. Macros are parsed without vars, so their parse depends only on
    their files: the cache key is the projects' folders and every macro
    file's checksum, and the parsed macros (and their files' records,
    ``depends_on`` worked out) are handed out as deep copies; the manifest's
    macros come out the same (test_dbt_in_process compares them with a fresh
    parse's). A partial parse (same vars) runs dbt's own path.
    Installed once per process, over dbt's ``ManifestLoader``."""
    import copy

    from dbt.parser.manifest import ManifestLoader

    original = ManifestLoader.load_and_parse_macros
    if getattr(original, "reuses_parsed_macros", False):
        return

    def load_and_parse_macros(self, project_parser_files) -> None:
        if self.partially_parsing:
            original(self, project_parser_files)
            return
        file_ids = sorted(
            file_id
            for parser_files in project_parser_files.values()
            for parser in ("MacroParser", "GenericTestParser")
            for file_id in parser_files.get(parser, [])
        )
        key = (
            tuple(
                sorted(
                    (p.project_name, p.project_root) for p in self.all_projects.values()
                )
            ),
            tuple((i, self.manifest.files[i].checksum.checksum) for i in file_ids),
        )
        if key not in _PARSED_MACROS:
            original(self, project_parser_files)
            _PARSED_MACROS[key] = copy.deepcopy(
                (
                    {i: self.manifest.files[i] for i in file_ids},
                    dict(self.manifest.macros),
                )
            )
            return
        files, macros = copy.deepcopy(_PARSED_MACROS[key])
        self.manifest.files.update(files)
        self.manifest.macros.update(macros)
        self.build_macro_resolver()

    load_and_parse_macros.reuses_parsed_macros = True  # type: ignore[attr-defined]
    ManifestLoader.load_and_parse_macros = load_and_parse_macros


@contextlib.contextmanager
def database_held_by_another_process(db_path: Path) -> Iterator[int]:
    """Hold the DuckDB file ``db_path`` open for writing in another Python
    process (DuckDB's file lock, as a running build holds it) for the
    ``with`` block; yields that process's PID. The process is killed after."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]);"
            " print('holding', flush=True); time.sleep(120)",
            str(db_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "holding\n"
        yield holder.pid
    finally:
        holder.kill()
        holder.wait(timeout=30)


def failed_dbt_build(workdir: Path, kilt_path: Path | str, **options) -> str:
    """Run :func:`run_dbt_build` expecting it to fail; return its output.

    Asserts the build failed and printed no Python traceback (every error a
    user can cause is reported as one plain line).
    """
    build = run_dbt_build(workdir, kilt_path, check=False, **options)
    assert build.returncode != 0, build.output[-3000:]
    assert "Traceback" not in build.output, build.output[-3000:]
    return build.output


def shared_build(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    kilt_path: Path | str,
    copy_from: Path | None = None,
    **options,
) -> Build:
    """One :func:`run_dbt_build` per test session, shared by every pytest-xdist
    worker (``make test`` runs two): the first worker to ask builds it under
    the session's common temporary folder while holding a file lock; the
    others wait on the lock and reuse the finished build (recorded in
    ``build.json``). Tests read such a build only (``Build.query`` opens it
    read-only) or copy it (:func:`copy_build`). ``copy_from``: a DuckDB
    file copied into the build's folder first (to rebuild a selection)."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # shared by the workers of this session
    workdir = root / f"shared_{name}"
    record = workdir / "build.json"
    with FileLock(str(root / f"shared_{name}.lock")):
        if record.exists():
            fields = json.loads(record.read_text(encoding="utf-8"))
            return Build(
                Path(fields["db_path"]),
                Path(fields["export_dir"]),
                fields["returncode"],
                fields["output"],
            )
        if copy_from is not None:
            workdir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(copy_from, workdir / copy_from.name)
        build = run_dbt_build(workdir, kilt_path, **options)
        record.write_text(
            json.dumps(
                {
                    "db_path": str(build.db_path),
                    "export_dir": str(build.export_dir),
                    "returncode": build.returncode,
                    "output": build.output,
                }
            ),
            encoding="utf-8",
        )
        return build


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The bundled 106-page sample built from KILT JSON lines, its scratch
    database kept (``kilt_scratch.int_sections_assembled`` and
    ``kilt_scratch.stg_kilt__pages`` can be queried); built once per session."""
    return shared_build(
        tmp_path_factory,
        "sample_jsonl",
        SAMPLE_JSONL,
        extra_vars={"keep_scratch": True, "workers": 2},
        unit_tests=True,
    )


#: The handmade KILT task on the sample (tests/python/fixtures/kilt_tasks).
HANDMADE_TASK = FIXTURES / "kilt_tasks" / "handmade-dev-kilt.jsonl"


@pytest.fixture(scope="session")
def sample_task_build(
    tmp_path_factory: pytest.TempPathFactory, sample_build: Build
) -> Build:
    """The sample build's DuckDB file alone (no scratch database: the
    provenance models read only the main file), with the provenance models
    rebuilt for the handmade task; built once per session (the provenance
    and the LLM-measure tests read it)."""
    return shared_build(
        tmp_path_factory,
        "sample_task",
        SAMPLE_JSONL,
        copy_from=sample_build.db_path,
        select="int_task_lines_read+",
        extra_vars={"kilt_tasks": str(HANDMADE_TASK)},
    )


@pytest.fixture(scope="session")
def sample_parquet_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The same sample built from the Hugging Face Parquet shape (once per
    session), without export or data tests: its test compares its chunks
    with :func:`sample_build`'s, whose data tests and export check them."""
    return shared_build(
        tmp_path_factory,
        "sample_parquet",
        SAMPLE_PARQUET,
        extra_vars={"export_dir": ""},
        data_tests=False,
    )


def copy_build(build: Build, workdir: Path) -> None:
    """Copy a build's DuckDB file, and its scratch database if kept, into
    workdir (where :func:`run_dbt_build` points ``KILT_CHUNKS_DB``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(build.db_path, workdir / "kilt_chunks.duckdb")
    scratch = Path(f"{build.db_path}.scratch")
    if scratch.exists():
        shutil.copyfile(scratch, workdir / "kilt_chunks.duckdb.scratch")


#: What a clone holds that a build needs (the task fixtures for the recipes).
PROJECT_PARTS = (
    "dbt_project.yml",
    "profiles.yml",
    "models",
    "python_models",
    "macros",
    "src/kilt_chunks/sql",
    "seeds",
    "tests/dbt",
    "tests/python/fixtures/kilt_tasks",
    "analyses",
    "data",
)


def copy_project(project: Path) -> Path:
    """Copy what a clone holds that a build needs (:data:`PROJECT_PARTS`)
    into the new folder ``project``; return it."""
    for part in PROJECT_PARTS:
        source, target = ROOT / part, project / part
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    return project


def read_pages(path: Path) -> list[dict]:
    """Pages of a KILT JSON lines file."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(autouse=True)
def _no_dbt_unless_marked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test not marked ``dbt`` that starts dbt (directly or in a
    subprocess) fails at once, naming itself (kilt_chunks.dbt_plugin stops
    any dbt command of this project while the variable is set): the fast
    lane cannot hold a build."""
    if request.node.get_closest_marker("dbt") is None:
        monkeypatch.setenv(NO_DBT_VARIABLE, request.node.nodeid)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "dbt: runs dbt (a build); `make test-fast` leaves these out"
    )
    config.addinivalue_line(
        "markers",
        "full: among the slowest tests without dbt (engine comparisons with"
        " Ray, process kills, the longest property sweep); only `make test`"
        " runs them, `make test-fast` leaves these out",
    )
    config.addinivalue_line(
        "markers",
        "rag: needs the rag extra (torch, sentence-transformers, faiss, Ray);"
        " `make test-fast` leaves these out",
    )
    # One Ray token for every Ray of this test process (local ones and the
    # cluster that test_dump_pageprops starts). Ray reads RAY_AUTH_TOKEN before
    # ~/.ray/auth_token and caches the token it read for the life of the
    # process: a test that set a token of its own made every later local Ray
    # of the same xdist worker fail to start ("InvalidAuthToken"). Set before
    # xdist starts its workers, so they all inherit it.
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
    # A home of the test session's own: no test reads or writes the user's
    # (Ray's ~/.ray, the Hugging Face and pip caches, dbt's ~/.dbt). The Ray
    # token above comes from the environment, so the driver and Ray's own
    # processes (which may look up the home in /etc/passwd) agree on it.
    # xdist workers inherit both from the controller.
    if not hasattr(config, "workerinput"):
        home = tempfile.mkdtemp(prefix="kilt-chunks-test-home-")
        config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
        os.environ["HOME"] = home


#: The longest test files, in the order pytest-xdist hands them out (make
#: test runs ``--dist loadfile --no-loadscope-reorder``: a worker takes a
#: whole file, the next one in this order when it is nearly done). Longest
#: first, so the two workers end together instead of one running a long file
#: alone at the end; the first file builds the shared sample build while the
#: other worker runs splitter sweeps that need no build (by the seconds each
#: file took in a full run, docs/internals.md "Tests"). Files not named
#: follow in collection order. Only the order changes, never what runs.
LONGEST_FILES_FIRST = (
    "test_provenance.py",
    "test_splitter_tokenizer.py",
    "test_splitter_overlap.py",
    "test_recipes.py",
    "test_export.py",
    "test_resume.py",
    "test_bad_input.py",
    "test_build_guards.py",
    "test_bm25_lucene.py",
    "test_rechunk.py",
    "test_rag_dense.py",
    "test_splitter_sentence.py",
    "test_rag_utility.py",
    "test_dump_pageprops.py",
    "test_cli.py",
    "test_pipeline_e2e.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the test files by :data:`LONGEST_FILES_FIRST` (a stable sort:
    the tests of a file keep their order)."""
    rank = {name: i for i, name in enumerate(LONGEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
