"""The `dbt build` command line of this project, for scripts, tests and the
benchmark (one definition of the flags they all pass)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["NO_DBT_VARIABLE", "dbt_build_command", "dbt_build_env", "dbt_executable"]

#: Environment variable the test suite sets, to the test's id, for every test
#: not marked ``dbt`` (tests/python/conftest.py): any dbt command of this
#: project then stops before it connects (kilt_chunks.dbt_plugin), naming the
#: test, so the fast lane (``make test-fast``, ``-m "not dbt"``) can never
#: start a build unnoticed.
NO_DBT_VARIABLE = "KILT_CHUNKS_TEST_WITHOUT_DBT"


def dbt_executable() -> str:
    """The ``dbt`` next to the running Python (the same virtual environment)."""
    return str(Path(sys.executable).with_name("dbt"))


def dbt_build_command(
    project_dir: Path,
    workdir: Path,
    variables: Mapping[str, Any],
    *args: str,
) -> list[str]:
    """`dbt build` of the project in ``project_dir``, writing under ``workdir``.

    Args:
        project_dir: The dbt project folder (holds ``dbt_project.yml`` and
            ``profiles.yml``).
        workdir: Where dbt writes ``target/`` and ``logs/``.
        variables: The ``--vars`` (``kilt_path``, ``export_dir``, ...), as JSON.
        *args: Further dbt flags, e.g. ``"--select", "kilt_chunks"``.

    Returns:
        The argument list for ``subprocess``; run it with :func:`dbt_build_env`
        to choose the DuckDB file.
    """
    return [
        dbt_executable(),
        "build",
        "--project-dir",
        str(project_dir),
        "--profiles-dir",
        str(project_dir),
        "--target-path",
        str(workdir / "target"),
        "--log-path",
        str(workdir / "logs"),
        "--vars",
        json.dumps(dict(variables)),
        *args,
    ]


def dbt_build_env(db_path: Path) -> dict[str, str]:
    """This process's environment with the build pointed at ``db_path``
    (``KILT_CHUNKS_DB``, read by ``profiles.yml``), dbt's usage statistics off
    and Python output unbuffered (progress lines arrive as they are written)."""
    return {
        **os.environ,
        "KILT_CHUNKS_DB": str(db_path),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "PYTHONUNBUFFERED": "1",
    }
