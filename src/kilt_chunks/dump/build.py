"""``kilt-chunks from-dump``: a MediaWiki XML dump to a folder of KILT pages.

The run: read ``<siteinfo>``; plan splits (from the multistream index, or
batches of pages from one reader for a plain ``.xml``/``.xml.bz2``); run
:func:`~kilt_chunks.dump.shards.run_split` on every split with the process
pool (default) or Ray; resolve anchors and redirects
(:mod:`~kilt_chunks.dump.resolve`); write ``manifest.json``, ``skipped.jsonl``
and, last, ``_SUCCESS``. Everything written goes through a temporary file and
a rename, and finished splits and shards are kept, so a killed run started
again with the same arguments skips what was done and ends with the same
bytes. The output does not depend on the engine or the number of workers:
only ``--splits``/``--split-mb`` decide the shards.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

from kilt_chunks.dump.multistream import Split, index_path_for, plan_splits, read_index
from kilt_chunks.dump.pageprops import PagePropsError
from kilt_chunks.dump.resolve import (
    WIKIDATA_COUNTS,
    ResolveJob,
    build_lookup,
    resolve_shard,
    shard_name,
)
from kilt_chunks.dump.shards import (
    MAP_FORMAT,
    SplitJob,
    SplitResult,
    atomic_write,
    run_split,
    side_path,
)
from kilt_chunks.dump.siteinfo import SiteInfo, parse_siteinfo
from kilt_chunks.dump.xmlpages import RawPage, pages_in_file, read_header
from kilt_chunks.progress import emit_line

__all__ = ["DumpBuildError", "build_from_dump", "ENGINES"]

ENGINES = ("pool", "ray")
MARKER = "_SUCCESS"


class DumpBuildError(RuntimeError):
    """The dump cannot be built (bad arguments, missing index, a work folder
    of another plan, a split that failed); the message says which and why."""


# -- engines ---------------------------------------------------------------


class _Inline:
    """Run each job at once in this process (one worker)."""

    def submit(self, fn: Callable[[Any], Any], job: Any) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(job))
        except Exception as exc:  # noqa: BLE001 - handed to the caller
            future.set_exception(exc)
        return future

    def wait(self, pending: set, timeout: float) -> tuple[set, set]:
        return set(pending), set()

    @staticmethod
    def result(handle: Future) -> Any:
        return handle.result()

    def close(self) -> None:
        pass


class _Pool(_Inline):
    """A process pool of ``workers`` processes."""

    def __init__(self, workers: int) -> None:
        self.pool = ProcessPoolExecutor(max_workers=workers)

    def submit(self, fn: Callable[[Any], Any], job: Any) -> Future:
        return self.pool.submit(fn, job)

    def wait(self, pending: set, timeout: float) -> tuple[set, set]:
        done, rest = wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)
        return set(done), set(rest)

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


class _Ray:
    """Ray tasks: a local Ray with ``workers`` CPUs, or the cluster at
    ``address`` (``auto`` or ``ray://host:10001``; the output folder must
    then be on storage every node sees)."""

    def __init__(self, workers: int, address: str | None) -> None:
        try:
            import ray
        except ImportError as exc:
            raise DumpBuildError(
                "--engine ray needs Ray: pip install 'kilt-chunks[ray]'"
            ) from exc
        self.ray = ray
        self.started = not ray.is_initialized()
        if self.started:
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": "ERROR",
            }
            if address:
                try:
                    ray.init(address=address, **options)
                except (ConnectionError, RuntimeError) as exc:
                    raise DumpBuildError(
                        f"cannot connect to the Ray cluster at {address}: "
                        f"{str(exc).splitlines()[0]}. A cluster of Ray 2.59 or "
                        "later may use token authentication: run with "
                        "RAY_AUTH_MODE=token and the cluster's token "
                        "(RAY_AUTH_TOKEN, or ~/.ray/auth_token)"
                    ) from exc
            else:
                # "local": a new Ray of our own even when a cluster started by
                # `ray start` runs on this machine (without it, ray.init finds
                # that cluster through /tmp/ray and refuses num_cpus)
                ray.init(address="local", num_cpus=workers, **options)
        self.remotes: dict[Callable, Any] = {}

    def submit(self, fn: Callable[[Any], Any], job: Any) -> Any:
        if fn not in self.remotes:
            # A task whose worker or node is lost runs again (Ray's default
            # of 3 retries): a split's function is pure and writes through a
            # temporary file and a rename, so a retry gives the same bytes.
            # An exception of the function itself is not retried.
            self.remotes[fn] = self.ray.remote(num_cpus=1, max_retries=3)(fn)
        return self.remotes[fn].remote(job)

    def wait(self, pending: set, timeout: float) -> tuple[set, set]:
        done, rest = self.ray.wait(list(pending), num_returns=1, timeout=timeout)
        return set(done), set(rest)

    def result(self, handle: Any) -> Any:
        return self.ray.get(handle)

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


def _engine(engine: str, workers: int, address: str | None) -> _Inline:
    if engine == "ray":
        return _Ray(workers, address)  # type: ignore[return-value]
    if engine != "pool":
        raise DumpBuildError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    return _Inline() if workers <= 1 else _Pool(workers)


def _run_all(
    runner: _Inline,
    fn: Callable[[Any], Any],
    jobs: Iterable[Any],
    in_flight: int,
    on_result: Callable[[Any], None],
    tick: Callable[[], None],
    interval: float,
) -> None:
    """Submit jobs, at most ``in_flight`` at a time (bounded memory for
    reader-fed splits); call ``on_result`` per finished job and ``tick`` at
    least every ``interval`` seconds."""
    pending: set = set()
    jobs_iter = iter(jobs)
    exhausted = False
    while True:
        while not exhausted and len(pending) < in_flight:
            job = next(jobs_iter, None)
            if job is None:
                exhausted = True
                break
            pending.add(runner.submit(fn, job))
        if not pending:
            break
        done, pending = runner.wait(pending, timeout=interval or 30)
        for handle in done:
            on_result(runner.result(handle))
        tick()


# -- inputs and plan ----------------------------------------------------------


def _is_multistream(path: Path, index: Path | None) -> bool:
    return index is not None or (
        "multistream" in path.name and index_path_for(path).exists()
    )


def _batches(
    inputs: list[Path], site: SiteInfo, split_bytes: int, work_dir: Path, settings: dict
) -> Iterator[SplitJob]:
    """Reader-fed splits of plain dumps: pages in batches of about
    ``split_bytes`` of wikitext (finished splits are read past, not sent)."""
    index = 0
    batch: list[RawPage] = []
    size = 0

    def job() -> SplitJob:
        pages = () if side_path(work_dir, index).exists() else tuple(batch)
        return SplitJob(index, str(work_dir), site, pages=pages, **settings)

    for path in inputs:
        try:
            for page in pages_in_file(path):
                batch.append(page)
                size += len(page.text)
                if size >= split_bytes:
                    yield job()
                    index, batch, size = index + 1, [], 0
        except EOFError as exc:  # bz2 or gzip cut short
            raise DumpBuildError(f"{path}: {exc}") from exc
    if batch or index == 0:
        yield job()


def _sha1(path: Path) -> str:
    digest = hashlib.sha1()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _dump_date(name: str) -> str | None:
    m = re.search(r"-(\d{8})-", name)
    return m.group(1) if m else None


# -- the run ------------------------------------------------------------------


def build_from_dump(  # noqa: C901 - one run, in order
    inputs: list[Path],
    out_dir: Path,
    *,
    indexes: list[Path] | None = None,
    workers: int = 2,
    engine: str = "pool",
    ray_address: str | None = None,
    splits: int | None = None,
    split_mb: float = 32.0,
    page_seconds: float = 10.0,
    max_page_mb: float = 8.0,
    progress_seconds: float = 30.0,
    keep_work: bool = False,
    namespace_aliases: dict[str, int] | None = None,
    redirect_words: tuple[str, ...] = (),
    keep_colon_links: bool = False,
    page_props: Path | None = None,
) -> dict[str, Any]:
    """Build KILT pages from one dump (or its part files) into ``out_dir``.

    Args:
        inputs: Multistream ``.xml.bz2`` files (their indexes beside them,
            Wikimedia's names, or in ``indexes``), or plain exports
            (``.xml``, ``.xml.bz2``, ``.xml.gz``), in dump order.
        out_dir: Output folder: ``pages/part-*.jsonl.gz``,
            ``redirects.parquet``, ``skipped.jsonl``, ``manifest.json``,
            ``_SUCCESS``; ``work/`` while running.
        indexes: Index files, one per input, when not beside them.
        workers: Worker processes (or Ray CPUs for a local Ray).
        engine: ``pool`` or ``ray``.
        ray_address: Address of an existing Ray cluster.
        splits: Number of splits (default: from ``split_mb``).
        split_mb: Target size of a split: compressed MB of a multistream
            dump, MB of wikitext for a plain one.
        page_seconds: Per-page time limit (0: none).
        max_page_mb: Pages with more wikitext are skipped (``too_large``).
        progress_seconds: Seconds between progress lines (0: quiet).
        keep_work: Keep ``work/`` (map shards, lookup database) at the end.
        namespace_aliases: More namespace names, ``{"Картинка": 6}``.
        redirect_words: More redirect magic words (without ``#``).
        keep_colon_links: Keep links with an unknown ``prefix:`` (KILT and
            WikiExtractor 2.75 drop them).
        page_props: Wikimedia's ``<wiki>-<date>-page_props.sql.gz`` of the
            same wiki: pages with a ``wikibase_item`` get
            ``wikidata_info: {"wikidata_id": "Q..."}``.

    Returns:
        The manifest (also written to ``out_dir/manifest.json``).

    Raises:
        DumpBuildError: Missing input, index or page_props file, a work
            folder of another plan, a split whose input cannot be read, or a
            page_props file that cannot be parsed.
    """
    started = time.monotonic()
    if not inputs:
        raise DumpBuildError("no dump given")
    # Absolute paths: Ray tasks on a cluster run in another working folder.
    inputs = [Path(p).absolute() for p in inputs]
    indexes = [Path(i).absolute() for i in indexes] if indexes else indexes
    out_dir = Path(out_dir).absolute()
    page_props = Path(page_props).absolute() if page_props else None
    request = {
        "inputs": [str(p) for p in inputs],
        "indexes": [str(i) for i in indexes] if indexes else None,
        "splits": splits,
        "split_mb": split_mb,
        "page_seconds": page_seconds,
        "max_page_mb": max_page_mb,
        "namespace_aliases": dict(sorted((namespace_aliases or {}).items())),
        "redirect_words": list(redirect_words),
        "keep_colon_links": keep_colon_links,
        "page_props": str(page_props) if page_props else None,
    }
    for path in inputs:
        if not path.is_file():
            raise DumpBuildError(f"{path}: no such dump file")
    if indexes and len(indexes) != len(inputs):
        raise DumpBuildError("give one --index per dump file")
    if page_props is not None and not page_props.is_file():
        raise DumpBuildError(f"{page_props}: no such page_props file")
    marker = out_dir / MARKER
    if marker.exists():
        done = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
        before = done.get("request", {})
        differ = sorted(k for k in request if before.get(k) != request[k])
        if differ:
            raise DumpBuildError(
                f"{out_dir} holds a finished run of other inputs or settings"
                f" ({', '.join(differ)}); remove it or use another output folder"
            )
        return done
    pages_dir = out_dir / "pages"
    work_dir = out_dir / "work"
    pages_dir.mkdir(parents=True, exist_ok=True)
    work_dir.mkdir(parents=True, exist_ok=True)
    # what a killed run left half-done: progress notes and temporary files
    for stale in [*work_dir.glob("*.progress"), *work_dir.glob("*.tmp")]:
        stale.unlink()
    for stale in pages_dir.glob("*.tmp"):
        stale.unlink()
    try:
        site = parse_siteinfo(
            read_header(inputs[0]),
            extra_aliases=namespace_aliases,
            extra_redirect_words=redirect_words,
        )
    except (ValueError, OSError, EOFError) as exc:
        raise DumpBuildError(f"{inputs[0]}: {exc}") from exc
    index_files = indexes or [None] * len(inputs)  # type: ignore[list-item]
    kinds = {_is_multistream(p, i) for p, i in zip(inputs, index_files, strict=True)}
    if len(kinds) > 1:
        raise DumpBuildError("mix of multistream and plain dumps; give one kind")
    multistream = kinds == {True}
    if not multistream and progress_seconds > 0:
        for path in inputs:
            if "multistream" in path.name:
                emit_line(
                    f"from-dump: no index {index_path_for(path).name} beside"
                    f" {path.name}: one reader feeds the workers (give --index"
                    " to read the streams in parallel)"
                )
    settings: dict[str, Any] = {
        "page_seconds": page_seconds,
        "max_page_bytes": int(max_page_mb * 1e6),
        "keep_colon_links": keep_colon_links,
    }
    plan: list[Split] = []
    if multistream:
        files = []
        for path, index in zip(inputs, index_files, strict=True):
            index = index or index_path_for(path)
            if not index.is_file():
                raise DumpBuildError(f"{path}: index {index} not found")
            try:
                files.append((str(path), read_index(index, path.stat().st_size)))
            except ValueError as exc:
                raise DumpBuildError(str(exc)) from exc
        total = sum(s.size for _, streams in files for s in streams)
        n = splits or max(1, math.ceil(total / (split_mb * 1e6)))
        plan = plan_splits(files, n)
    plan_doc: dict[str, Any] = {
        "multistream": multistream,
        "inputs": [str(p) for p in inputs],
        "splits": [asdict(s) for s in plan] if multistream else None,
        "requested_splits": splits,
        "split_mb": split_mb,
        "settings": settings,
        "page_props": str(page_props) if page_props else None,
        "map_format": MAP_FORMAT,
    }
    plan_file = work_dir / "plan.json"
    if plan_file.exists():
        if json.loads(plan_file.read_text(encoding="utf-8")) != plan_doc:
            raise DumpBuildError(
                f"{work_dir} holds a run with other inputs or settings;"
                " remove it or use another output folder"
            )
    else:
        atomic_write(plan_file, json.dumps(plan_doc, indent=1).encode("utf-8"))
    jobs: Iterable[SplitJob]
    if multistream:
        jobs = [
            SplitJob(s.index, str(work_dir), site, s.path, s.start, s.end, **settings)
            for s in plan
        ]
        total_bytes = sum(s.nbytes for s in plan)
    else:
        jobs = _batches(inputs, site, int(split_mb * 1e6), work_dir, settings)
        total_bytes = 0
    results: dict[int, SplitResult] = {}
    state = {"last": time.monotonic(), "done_bytes": 0}

    def on_result(result: SplitResult) -> None:
        results[result.index] = result
        if multistream:
            state["done_bytes"] += plan[result.index].nbytes

    def tick(final: bool = False) -> None:
        now = time.monotonic()
        if progress_seconds <= 0 or (
            not final and now - state["last"] < progress_seconds
        ):
            return
        state["last"] = now
        fresh = [r for r in results.values() if not r.resumed]
        mb = fresh_mb = sum(r.wikitext_bytes for r in fresh) / 1e6
        pages = sum(r.pages for r in fresh)
        for running in work_dir.glob("map-*.progress"):  # splits under way
            try:
                done_bytes, done_pages = running.read_text().split()
            except (OSError, ValueError):
                continue
            mb += int(done_bytes) / 1e6
            pages += int(done_pages)
        elapsed = max(now - started, 1e-9)
        line = (
            f"from-dump: {len(results)}"
            + (f"/{len(plan)}" if multistream else "")
            + f" splits, {mb:,.1f} MB wikitext ({mb / elapsed:,.2f} MB/s),"
            f" {pages:,} pages ({pages / elapsed:,.0f}/s)"
        )
        if multistream and mb > 0:
            # wikitext expected in all: the wikitext per compressed byte of
            # the splits done (3.0, a typical bz2 ratio, until one is)
            done_w = sum(r.wikitext_bytes for r in results.values())
            ratio = done_w / state["done_bytes"] if state["done_bytes"] else 3.0
            left_mb = ratio * total_bytes / 1e6 - mb - (done_w / 1e6 - fresh_mb)
            line += f", ETA {max(left_mb, 0) / (mb / elapsed):,.0f} s"
        emit_line(line)

    runner = _engine(engine, workers, ray_address)
    try:
        map_started = time.monotonic()
        _run_all(
            runner,
            run_split,
            jobs,
            2 * max(workers, 1),
            on_result,
            tick,
            progress_seconds,
        )
        map_seconds = time.monotonic() - map_started
        tick(final=True)
        n_splits = len(results)
        lookup = build_lookup(work_dir, n_splits, out_dir, page_props)
        sizes: dict[int, int] = {}
        resolve_jobs = [
            ResolveJob(
                i, n_splits, str(work_dir), str(pages_dir), page_props is not None
            )
            for i in range(n_splits)
        ]
        _run_all(
            runner,
            resolve_shard,
            resolve_jobs,
            2 * max(workers, 1),
            lambda size: None,
            lambda: None,
            progress_seconds,
        )
        for i in range(n_splits):
            sizes[i] = (pages_dir / shard_name(i, n_splits)).stat().st_size
    except PagePropsError as exc:
        raise DumpBuildError(f"page_props: {exc}") from exc
    except (OSError, ValueError) as exc:
        raise DumpBuildError(f"a split failed: {type(exc).__name__}: {exc}") from exc
    finally:
        runner.close()
    failures: list[dict[str, Any]] = []
    for i in range(n_splits):
        failures.extend(
            json.loads(side_path(work_dir, i).read_text(encoding="utf-8"))["failures"]
        )
    skipped = Counter[str]()
    for r in results.values():
        skipped.update(r.skipped)
    ordered = [results[i] for i in range(n_splits)]
    wikitext = sum(r.wikitext_bytes for r in ordered)
    fresh_seconds = sum(r.cpu_seconds for r in ordered if not r.resumed)
    manifest: dict[str, Any] = {
        "builder": {
            "name": "kilt-chunks from-dump",
            "version": version("kilt-chunks"),
            "mwparserfromhell": version("mwparserfromhell"),
            "rules": "WikiExtractor 2.75 -s --lists -l, KILT joined headings",
        },
        "sources": [
            {"path": str(p), "bytes": p.stat().st_size, "sha1": _sha1(p)}
            for p in [
                *inputs,
                *[i for i in (indexes or []) if i],
                *([page_props] if page_props else []),
            ]
        ],
        "wiki": site.dbname or site.lang,
        "dump_date": _dump_date(inputs[0].name),
        "siteinfo": site.as_dict(),
        "settings": {**plan_doc["settings"], "split_mb": split_mb, "splits": n_splits},
        "split_plan": plan_doc["splits"],
        "shards": [
            {
                "file": f"pages/{shard_name(i, n_splits)}",
                "pages": r.pages,
                "wikitext_bytes": r.wikitext_bytes,
                "bytes": sizes[i],
                "redirects": r.redirects,
            }
            for i, r in enumerate(ordered)
        ],
        "pages": sum(r.pages for r in ordered),
        "wikitext_bytes": wikitext,
        "skipped": dict(sorted(skipped.items())),
        "lookup": {k: v for k, v in lookup.items() if k not in WIKIDATA_COUNTS},
        "wikidata": (
            {"page_props": str(page_props), **{k: lookup[k] for k in WIKIDATA_COUNTS}}
            if page_props
            else None
        ),
        "request": request,
        "run": {
            "engine": engine,
            "workers": workers,
            "map_seconds": round(map_seconds, 3),
            "map_cpu_seconds": round(fresh_seconds, 3),
            "resumed_splits": sum(r.resumed for r in ordered),
        },
    }
    atomic_write(
        out_dir / "skipped.jsonl",
        "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in failures).encode(
            "utf-8"
        ),
    )
    manifest["run"]["seconds"] = round(time.monotonic() - started, 3)
    atomic_write(
        out_dir / "manifest.json",
        json.dumps(manifest, ensure_ascii=False, indent=1).encode("utf-8"),
    )
    if not keep_work:
        shutil.rmtree(work_dir)
    atomic_write(marker, b"")
    if progress_seconds > 0:
        emit_line(
            f"from-dump: {manifest['pages']:,} pages in {n_splits} shards,"
            f" {wikitext / 1e6:,.1f} MB wikitext in {manifest['run']['seconds']:,.1f} s"
            f" -> {pages_dir}"
        )
    return manifest
