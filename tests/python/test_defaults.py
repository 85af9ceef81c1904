"""One default per setting: the package's (kilt_chunks.defaults) are the dbt
vars of dbt_project.yml, and the public signatures use them."""

from __future__ import annotations

import inspect

import yaml

from conftest import ROOT
from kilt_chunks import defaults
from kilt_chunks.chunking_settings import DEFAULT_CHUNKING


def test_package_defaults_equal_the_dbt_vars() -> None:
    """Issue 23 item 3: the chunk-size default was 256 in dbt_project.yml and
    in 8 Python signatures with no shared constant."""
    project = yaml.safe_load((ROOT / "dbt_project.yml").read_text(encoding="utf-8"))
    variables = project["vars"]
    assert {name: variables[name] for name in defaults.DBT_VAR_DEFAULTS} == (
        defaults.DBT_VAR_DEFAULTS
    )


def test_public_signatures_take_their_defaults_from_the_module() -> None:
    from kilt_chunks.build.checkpoint import chunk_sections_resumable
    from kilt_chunks.build.sections import chunk_page
    from kilt_chunks.build.splitting import (
        split_batch,
        split_section,
        split_section_batches,
    )
    from kilt_chunks.splitter import get_splitter

    expected = {
        "splitter": defaults.DEFAULT_SPLITTER,
        "chunk_size": defaults.DEFAULT_CHUNK_SIZE,
        "chunk_overlap": defaults.DEFAULT_CHUNK_OVERLAP,
        "tokenizer": defaults.DEFAULT_TOKENIZER,
        "workers": defaults.DEFAULT_WORKERS,
        "batch_size": defaults.DEFAULT_BATCH_SIZE,
        "name": defaults.DEFAULT_SPLITTER,
        "settings": DEFAULT_CHUNKING,
    }
    checked = 0
    for function in (
        chunk_sections_resumable,
        chunk_page,
        get_splitter,
        split_batch,
        split_section,
        split_section_batches,
    ):
        for name, parameter in inspect.signature(function).parameters.items():
            if name in expected and parameter.default is not inspect.Parameter.empty:
                assert parameter.default == expected[name], (function, name)
                checked += 1
    assert checked >= 10
