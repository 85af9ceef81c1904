"""Ids as KILT compares them and as TREC files hold them; chunk ids to
pages; the error type of the evaluation package."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote, unquote

#: ``chunk_id`` as ``kilt_chunks`` builds it; group 1 is the ``wikipedia_id``.
CHUNK_ID_PATTERN = re.compile(r"^doc-(?P<page>.+)_\d+::s-\d+::chunk-\d+$")


class EvaluationError(ValueError):
    """A run, gold or qrels file that cannot be evaluated (names file and line)."""


def trec_id(identifier: str) -> str:
    """An id as a TREC run or qrels file can hold it (one field, no white
    space): each white-space character and ``%`` percent-encoded as UTF-8
    (``947testa CRICKET`` -> ``947testa%20CRICKET``); other ids unchanged.
    :func:`untrec_id` reverses it."""
    if "%" not in identifier and identifier.split() == [identifier]:
        return identifier
    return "".join(
        quote(c, safe="") if c == "%" or c.isspace() else c for c in identifier
    )


def untrec_id(field_text: str) -> str:
    """The id a TREC field stands for (:func:`trec_id` reversed)."""
    return unquote(field_text) if "%" in field_text else field_text


def kilt_str(value: Any) -> str:
    """An id as KILT compares it: ``str(value).strip()`` (rule 4)."""
    return str(value).strip()


def page_of_chunk(chunk_id: str) -> str:
    """The ``wikipedia_id`` of a chunk id (``doc-39_1::s-1::chunk-0`` -> ``39``).

    Raises:
        EvaluationError: If ``chunk_id`` is not a kilt_chunks chunk id.
    """
    match = CHUNK_ID_PATTERN.match(chunk_id)
    if not match:
        raise EvaluationError(f"{chunk_id!r} is not a chunk id of kilt_chunks")
    return match.group("page")


def is_chunk_id(doc_id: str) -> bool:
    """True for a ``kilt_chunks`` chunk id, False for anything else (a page)."""
    return CHUNK_ID_PATTERN.match(doc_id) is not None


def dedupe(ids: Iterable[Any]) -> list[Any]:
    """``ids`` in order, each kept at its first position."""
    return list(dict.fromkeys(ids))


def pages_of_chunk_ranking(chunk_ids: Sequence[str]) -> list[str]:
    """A page ranking from a chunk ranking: each page at its first chunk."""
    return dedupe(page_of_chunk(c) for c in chunk_ids)
