"""The SQL the package ships as package data (``kilt_chunks/sql/*.sql``),
rendered with plain Jinja.

``sql/json_lines.sql`` holds the parsers of KILT's JSON lines (pages and
task files) and their reject reasons as Jinja macros that use no dbt
context: the loader and the task reader render them here, and the dbt
project loads the same folder as a macro path (``dbt_project.yml``), so a
rule is written once and the package needs no dbt project folder (it works
from a wheel).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Any

__all__ = ["json_lines_macros"]


@cache
def json_lines_macros() -> Any:
    """The macros of ``sql/json_lines.sql``, each a callable that returns its
    SQL (a Jinja template module: ``json_lines_macros().task_lines_parsed()``).

    Raises:
        jinja2.TemplateSyntaxError: If the file is not valid Jinja.
    """
    import jinja2

    source = files("kilt_chunks").joinpath("sql").joinpath("json_lines.sql")
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
    return environment.from_string(source.read_text(encoding="utf-8")).module
