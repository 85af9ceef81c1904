"""Checks of setting values: each returns None when a value is allowed, else
what is wrong with it (the end of a line such as ``workers = -1: must be a
whole number of at least 0``). Shared by the dbt variables
(:data:`kilt_chunks.settings.KNOWN_VARIABLES`) and the fields of
:class:`kilt_chunks.chunking_settings.ChunkingSettings`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "Check",
    "boolean",
    "int_at_least",
    "is_int",
    "number_at_least",
    "one_of",
    "text",
]

#: A check: the value -> None when allowed, else what is wrong with it.
Check = Callable[[Any], str | None]


def is_int(value: Any) -> bool:
    """True for an ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def int_at_least(low: int) -> Check:
    """A whole number (not a bool, not text) of at least ``low``."""

    def check(value: Any) -> str | None:
        if not is_int(value) or value < low:
            return f"must be a whole number of at least {low}"
        return None

    return check


def number_at_least(low: float) -> Check:
    """A number (int or float, not a bool) of at least ``low``."""

    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
            return f"must be a number of at least {low:g}"
        return None

    return check


def boolean(value: Any) -> str | None:
    """A boolean, or its text (``true``, ``false``, ``1``, ``0``)."""
    if isinstance(value, bool) or str(value).lower() in ("true", "false", "1", "0"):
        return None
    return "must be true or false"


def one_of(choices: tuple[str, ...]) -> Check:
    """One of ``choices``."""

    def check(value: Any) -> str | None:
        if value not in choices:
            return "must be one of " + ", ".join(repr(c) for c in choices)
        return None

    return check


def text(value: Any) -> str | None:
    """Text (a path)."""
    return None if isinstance(value, str) else "must be text (a path)"
