"""The options of ``kilt-chunks from-dump``, declared once.

:class:`DumpRequest` is one frozen value holding every option of a build
from a dump. Each field carries its default, its check and its one-line
description; the command line (:func:`add_request_arguments`), the
manifest's ``request`` (:meth:`DumpRequest.as_json`) and the key that decides
whether a finished or half-done output folder may be reused
(:meth:`DumpRequest.reuse_key`: the fields whose ``decides_output`` is true)
are all made from the fields, never listed by hand. A new option is then
one field here plus the code that uses it (and its line in docs/dump.md).

The per-page part of the request (time limit, size limit, renderer options)
travels to the workers as one :class:`PageOptions` value.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = [
    "ENGINES",
    "DumpBuildError",
    "DumpRequest",
    "PageOptions",
    "add_request_arguments",
    "request_from_args",
]

#: The engines that run the splits.
ENGINES = ("pool", "ray")


class DumpBuildError(RuntimeError):
    """The dump cannot be built (bad arguments, missing index, a work folder
    of another plan, a split that failed); the message says which and why."""


@dataclass(frozen=True)
class PageOptions:
    """What the map step does with each page (sent whole to every split).

    Attributes:
        page_seconds: Per-page time limit in seconds (0: none).
        max_page_bytes: Pages with more wikitext (UTF-8 bytes) are skipped.
        keep_colon_links: Renderer option: keep links with an unknown
            ``prefix:`` (see :func:`~kilt_chunks.dump.render.render_wikitext`).
    """

    page_seconds: float
    max_page_bytes: int
    keep_colon_links: bool


# -- checks: each returns the problem, or None --------------------------------


def _positive(value: float | None) -> str | None:
    return None if value is None or value > 0 else "must be above 0"


def _not_negative(value: float) -> str | None:
    return None if value >= 0 else "must be 0 or more"


def _at_least_one(value: int | None) -> str | None:
    return None if value is None or value >= 1 else "must be 1 or more"


def _an_engine(value: str) -> str | None:
    return None if value in ENGINES else f"unknown engine (one of {', '.join(ENGINES)})"


def _dump_files(value: tuple[Path, ...]) -> str | None:
    if not value:
        return "no dump given"
    for path in value:
        if path.is_dir():
            return f"{path} is a folder, not a dump file"
        if not path.is_file():
            return f"{path}: no such dump file"
    return None


def _index_files(value: tuple[Path, ...] | None) -> str | None:
    for path in value or ():
        if path.is_dir():
            return f"{path} is a folder, not a multistream index"
    return None


def _page_props_file(value: Path | None) -> str | None:
    if value is None:
        return None
    if value.is_dir():
        return (
            f"{value} is a folder: give the file itself"
            " (<wiki>-<date>-page_props.sql.gz)"
        )
    if not value.is_file():
        return f"{value}: no such page_props file"
    return None


def _out_folder(value: Path) -> str | None:
    if value.exists() and not value.is_dir():
        return f"{value} is a file, not a folder"
    return None


def _option(
    default: Any,
    help: str,
    *,
    decides_output: bool,
    check: Callable[[Any], str | None] | None = None,
    flags: tuple[str, ...] = (),
    **argparse_kwargs: Any,
) -> Any:
    """A :class:`DumpRequest` field: its default, its one-line description
    (``help``), whether it decides the output bytes (then it is part of the
    reuse key), its check, its command-line flags (default ``--<name>``) and
    any other :meth:`argparse.ArgumentParser.add_argument` arguments."""
    metadata = {
        "help": help,
        "decides_output": decides_output,
        "check": check,
        "flags": flags,
        "argparse": argparse_kwargs,
    }
    if default is MISSING:
        return field(metadata=metadata)
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=metadata)
    return field(default=default, metadata=metadata)


def _alias(text: str) -> tuple[str, int]:
    """``NAME=NUMBER`` of ``--namespace-alias``."""
    name, _, key = text.rpartition("=")
    if not name or not key.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=NUMBER")
    return name, int(key)


@dataclass(frozen=True)
class DumpRequest:
    """Every option of ``kilt-chunks from-dump`` (one build from a dump).

    Paths are made absolute (Ray tasks on a cluster run in another working
    folder); ``namespace_aliases`` is kept sorted, ``redirect_words`` as a
    tuple. Each field's check runs on creation.

    Raises:
        DumpBuildError: If a value fails its check (one line naming the
            option and the problem).
    """

    inputs: tuple[Path, ...] = _option(
        MISSING,
        "dump file(s), in order",
        decides_output=True,
        check=_dump_files,
        flags=("inputs",),
        nargs="+",
        type=Path,
        metavar="dump",
    )
    out: Path = _option(
        MISSING,
        "output folder",
        decides_output=False,
        check=_out_folder,
        flags=("-o", "--out"),
        type=Path,
        required=True,
    )
    indexes: tuple[Path, ...] | None = _option(
        None,
        "index of each multistream file (default: Wikimedia's name beside it)",
        decides_output=True,
        check=_index_files,
        flags=("--index",),
        action="append",
        type=Path,
        metavar="PATH",
    )
    workers: int = _option(
        2,
        "worker processes",
        decides_output=False,
        check=_at_least_one,
        type=int,
        metavar="N",
    )
    engine: str = _option(
        "pool",
        "process pool or Ray",
        decides_output=False,
        check=_an_engine,
        choices=ENGINES,
    )
    ray_address: str | None = _option(
        None,
        "existing Ray cluster (default: a local Ray)",
        decides_output=False,
        metavar="ADDRESS",
    )
    splits: int | None = _option(
        None,
        "number of splits (shards)",
        decides_output=True,
        check=_at_least_one,
        type=int,
        metavar="N",
    )
    split_mb: float = _option(
        32.0,
        "target split size: compressed MB (multistream) or MB of wikitext",
        decides_output=True,
        check=_positive,
        type=float,
        metavar="X",
    )
    page_seconds: float = _option(
        10.0,
        "per-page time limit in seconds (0: none)",
        decides_output=True,
        check=_not_negative,
        type=float,
        metavar="X",
    )
    max_page_mb: float = _option(
        8.0,
        "skip pages with more MB of wikitext",
        decides_output=True,
        check=_positive,
        type=float,
        metavar="X",
    )
    progress_seconds: float = _option(
        30.0,
        "seconds between progress lines (0: quiet)",
        decides_output=False,
        check=_not_negative,
        type=float,
        metavar="X",
    )
    namespace_aliases: dict[str, int] = _option(
        {},
        "another name of a namespace, e.g. Картинка=6 (MediaWiki's own aliases"
        " of the wiki's language are built in)",
        decides_output=True,
        flags=("--namespace-alias",),
        action="append",
        type=_alias,
        metavar="NAME=NUMBER",
    )
    redirect_words: tuple[str, ...] = _option(
        (),
        "another redirect magic word (without #)",
        decides_output=True,
        flags=("--redirect-word",),
        action="append",
        metavar="WORD",
    )
    keep_colon_links: bool = _option(
        False,
        "keep links with an unknown prefix: (KILT drops them)",
        decides_output=True,
        action="store_true",
    )
    page_props: Path | None = _option(
        None,
        "the wiki's <wiki>-<date>-page_props.sql.gz: adds wikidata_info"
        " (the wikibase_item Q id) to the pages that have one",
        decides_output=True,
        check=_page_props_file,
        type=Path,
        metavar="PATH",
    )
    keep_work: bool = _option(
        False, "keep OUT/work/", decides_output=False, action="store_true"
    )

    def __post_init__(self) -> None:
        normal: dict[str, Any] = {
            "inputs": tuple(Path(p).absolute() for p in self.inputs),
            "out": Path(self.out).absolute(),
            "indexes": (
                tuple(Path(p).absolute() for p in self.indexes)
                if self.indexes
                else None
            ),
            "page_props": Path(self.page_props).absolute() if self.page_props else None,
            "namespace_aliases": dict(
                sorted(dict(self.namespace_aliases or {}).items())
            ),
            "redirect_words": tuple(self.redirect_words or ()),
        }
        for name, value in normal.items():
            object.__setattr__(self, name, value)
        for f in fields(self):
            check = f.metadata["check"]
            problem = check(getattr(self, f.name)) if check else None
            if problem:
                flag = _flag(f.name)
                prefix = f"{flag}: " if flag.startswith("-") else ""
                raise DumpBuildError(prefix + problem)
        if self.indexes and len(self.indexes) != len(self.inputs):
            raise DumpBuildError("give one --index per dump file")

    def as_json(self) -> dict[str, Any]:
        """Every field, JSON-ready (paths as text, tuples as lists): the
        manifest's ``request``."""
        return json.loads(json.dumps(asdict(self), default=str))

    def reuse_key(self) -> dict[str, Any]:
        """The fields that decide the output bytes (JSON-ready): a finished
        or half-done output folder is reused only for an equal key."""
        from kilt_chunks.dump.render import RENDERER_VERSION

        doc = self.as_json()
        return {
            **{
                f.name: doc[f.name]
                for f in fields(self)
                if f.metadata["decides_output"]
            },
            "renderer_version": RENDERER_VERSION,
        }

    def page_options(self) -> PageOptions:
        """The per-page options sent to every split."""
        return PageOptions(
            page_seconds=self.page_seconds,
            max_page_bytes=int(self.max_page_mb * 1e6),
            keep_colon_links=self.keep_colon_links,
        )


def _flag(name: str) -> str:
    """The command-line name of field ``name`` (``--max-page-mb``)."""
    for f in fields(DumpRequest):
        if f.name == name:
            flags = f.metadata["flags"]
            return flags[-1] if flags else "--" + name.replace("_", "-")
    raise KeyError(name)


def add_request_arguments(parser: argparse.ArgumentParser) -> None:
    """Add one argument per :class:`DumpRequest` field to ``parser`` (flags,
    help with the default, type and action from the field)."""
    for f in fields(DumpRequest):
        meta: Mapping[str, Any] = f.metadata
        kwargs = dict(meta["argparse"])
        flags = meta["flags"] or ("--" + f.name.replace("_", "-"),)
        help_text = meta["help"]
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if has_default and f.default not in (None, False, (), MISSING):
            help_text += (
                f" (default: {f.default:g})"
                if isinstance(f.default, float)
                else f" (default: {f.default})"
            )
        if flags[0].startswith("-"):
            kwargs["dest"] = f.name
            # append actions start from None (argparse would extend a list
            # default); DumpRequest fills in the field's default
            kwargs["default"] = (
                None
                if kwargs.get("action") == "append" or not has_default
                else f.default
            )
        parser.add_argument(*flags, help=help_text, **kwargs)


def request_from_args(args: argparse.Namespace) -> DumpRequest:
    """The :class:`DumpRequest` of parsed ``from-dump`` arguments.

    Raises:
        DumpBuildError: If a value fails its check.
    """
    values = {f.name: getattr(args, f.name) for f in fields(DumpRequest)}
    return DumpRequest(**{k: v for k, v in values.items() if v is not None})
