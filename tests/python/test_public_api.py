"""The package's public surface: ``kilt_chunks.__all__`` and each module's."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import kilt_chunks


def test_every_public_name_resolves_to_its_module() -> None:
    exported = set(kilt_chunks.__all__) - {"__version__"}
    assert exported == set(kilt_chunks._EXPORTS)
    for name, module in kilt_chunks._EXPORTS.items():
        assert getattr(kilt_chunks, name) is getattr(
            importlib.import_module(module), name
        )


def test_unknown_name_raises_attribute_error() -> None:
    try:
        kilt_chunks.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no attribute 'no_such_name'" in str(error)
    else:
        raise AssertionError("no AttributeError")


def test_import_is_cheap() -> None:
    """``import kilt_chunks`` loads none of the heavy libraries (each spawned
    chunking worker and the dbt plugin import it)."""
    code = (
        "import sys, kilt_chunks; "
        "print(sorted(m for m in ('duckdb', 'pyarrow', 'llama_index', 'nltk') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_every_module_declares_all_and_defines_it() -> None:
    names = [
        info.name
        for info in pkgutil.walk_packages(kilt_chunks.__path__, "kilt_chunks.")
    ]
    assert "kilt_chunks.splitter.tokens" in names
    for name in names:
        module = importlib.import_module(name)
        assert hasattr(module, "__all__"), name
        missing = [n for n in module.__all__ if not hasattr(module, n)]
        assert missing == [], name
