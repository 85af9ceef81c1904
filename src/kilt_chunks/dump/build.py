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
import os
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, Protocol

from kilt_chunks.dump.multistream import Split, index_path_for, plan_splits, read_index
from kilt_chunks.dump.pageprops import PagePropsError
from kilt_chunks.dump.request import (
    ENGINES,
    DumpBuildError,
    DumpRequest,
    PageOptions,
)
from kilt_chunks.dump.resolve import (
    WIKIDATA_COUNTS,
    Duplicate,
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
from kilt_chunks.dump.xmlpages import (
    DumpXmlError,
    IndexMismatchError,
    RawPage,
    UnreadablePage,
    read_header,
    read_pages,
)
from kilt_chunks.progress import emit_line
from kilt_chunks.ray_engine import init_ray

__all__ = ["DumpBuildError", "Engine", "build_from_dump", "run_request", "ENGINES"]

MARKER = "_SUCCESS"


# -- engines ---------------------------------------------------------------


class Engine(Protocol):
    """What runs the jobs of a step (the map, then the resolve): the
    driver itself, a process pool or Ray, behind one interface."""

    def submit(self, fn: Callable[[Any], Any], job: Any) -> Any:
        """Start ``fn(job)``; return a handle to wait on."""
        ...

    def wait(self, pending: set, timeout: float) -> tuple[set, set]:
        """``(done, still pending)`` after at most ``timeout`` seconds."""
        ...

    def result(self, handle: Any) -> Any:
        """The value of a finished job (its exception raised)."""
        ...

    def close(self) -> None:
        """Stop the workers."""
        ...


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
        self.ray, self.started = init_ray(
            address, workers, DumpBuildError, "kilt-chunks[ray]"
        )
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


def _engine(engine: str, workers: int, address: str | None) -> Engine:
    if engine == "ray":
        return _Ray(workers, address)
    if engine != "pool":
        raise DumpBuildError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    return _Inline() if workers <= 1 else _Pool(workers)


def _run_all(
    runner: Engine,
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
    inputs: tuple[Path, ...],
    site: SiteInfo,
    split_bytes: int,
    work_dir: Path,
    options: PageOptions,
    warnings: list[str],
) -> Iterator[SplitJob]:
    """Reader-fed splits of plain dumps: pages in batches of about
    ``split_bytes`` of wikitext (finished splits are read past, not sent);
    the reader's warnings are appended to ``warnings``.

    Raises:
        DumpBuildError: A file cut short, or broken XML outside any page
            (naming the file, line and column).
    """
    index = 0
    batch: list[RawPage | UnreadablePage] = []
    size = 0

    def job() -> SplitJob:
        pages = () if side_path(work_dir, index).exists() else tuple(batch)
        return SplitJob(index, str(work_dir), site, options, pages=pages)

    for path in inputs:
        try:
            for page in read_pages(path, warnings.append):
                batch.append(page)
                if isinstance(page, RawPage):
                    size += len(page.text)
                if size >= split_bytes:
                    yield job()
                    index, batch, size = index + 1, [], 0
        except (EOFError, DumpXmlError, UnicodeDecodeError) as exc:
            # cut short, broken XML outside the pages, broken UTF-16
            raise DumpBuildError(f"{path}: {exc}") from exc
    if batch or index == 0:
        yield job()


def _sha1(path: Path) -> str:
    digest = hashlib.sha1()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _index_of(request: DumpRequest, dump: Path) -> Path:
    """The index file of one dump file of the request."""
    for path, index in zip(
        request.inputs, request.indexes or [None] * len(request.inputs), strict=True
    ):
        if path == dump:
            return index or index_path_for(path)
    return index_path_for(dump)


def _dump_date(name: str) -> str | None:
    m = re.search(r"-(\d{8})-", name)
    return m.group(1) if m else None


# -- the run ------------------------------------------------------------------


def build_from_dump(
    inputs: Iterable[Path | str], out_dir: Path | str, **options: Any
) -> dict[str, Any]:
    """Build KILT pages from one dump (or its part files) into ``out_dir``.

    Args:
        inputs: Multistream ``.xml.bz2`` files (their indexes beside them,
            Wikimedia's names, or in ``indexes``), or plain exports
            (``.xml``, ``.xml.bz2``, ``.xml.gz``), in dump order.
        out_dir: Output folder: ``pages/part-*.jsonl.gz``,
            ``redirects.parquet``, ``skipped.jsonl``, ``manifest.json``,
            ``_SUCCESS``; ``work/`` while running.
        **options: Any other field of
            :class:`~kilt_chunks.dump.request.DumpRequest` (``workers``,
            ``splits``, ``keep_colon_links``, ``page_props``, ...; each
            field holds its default and description).

    Returns:
        The manifest (also written to ``out_dir/manifest.json``).

    Raises:
        DumpBuildError: See :func:`run_request`.
    """
    return run_request(
        DumpRequest(inputs=tuple(Path(p) for p in inputs), out=Path(out_dir), **options)
    )


def run_request(request: DumpRequest) -> dict[str, Any]:
    """Run one build from a dump: plan, run (map and resolve), manifest.

    A finished folder of the same request (:meth:`DumpRequest.reuse_key`)
    is returned as it is; a half-done one is resumed.

    Returns:
        The manifest (also written to ``<out>/manifest.json``).

    Raises:
        DumpBuildError: Missing input, index or page_props file, a work
            folder or finished folder of another request, a split whose
            input cannot be read, or a page_props file that cannot be parsed.
    """
    started = time.monotonic()
    done = _finished(request)
    if done is not None:
        return done
    existed, work_existed = request.out.exists(), (request.out / "work").exists()
    with _out_lock(request.out):
        done = _finished(request)  # another run may have finished it meanwhile
        if done is not None:
            return done
        runner = _engine(request.engine, request.workers, request.ray_address)
        try:
            plan = _plan(request)
            outcome = _run(request, plan, runner, started)
        except BaseException:
            _remove_unstarted(request.out, existed, work_existed)
            raise
        finally:
            runner.close()
        return _write_manifest(request, plan, outcome, started)


@contextmanager
def _out_lock(out: Path) -> Iterator[None]:
    """Hold a lock on the output folder (``.<name>.from-dump.lock`` beside
    it, a :class:`filelock.FileLock`) for the whole run; the holder's process
    id goes to ``.<name>.from-dump.pid`` beside it.

    Raises:
        DumpBuildError: If another run holds it (naming the folder and that
            run's process id), or the folder's parent cannot be written.
    """
    from filelock import FileLock, Timeout

    lock_path = out.with_name(f".{out.name}.from-dump.lock")
    pid_path = out.with_name(f".{out.name}.from-dump.pid")
    lock = FileLock(str(lock_path), timeout=0)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:
        try:
            holder = f" (process {int(pid_path.read_text())})"
        except (OSError, ValueError):
            holder = ""
        raise DumpBuildError(
            f"{out} is being written by another from-dump run{holder}; wait for"
            " it to end or use another --out"
        ) from None
    except OSError as exc:
        raise DumpBuildError(_cannot_write(out, exc)) from None
    try:
        pid_path.write_text(str(os.getpid()), encoding="ascii")
        yield
    finally:
        pid_path.unlink(missing_ok=True)
        lock.release()


def _cannot_write(out: Path, exc: OSError) -> str:
    """One line: the output folder cannot be made or written."""
    return f"{out}: cannot write the output folder there ({exc.strerror or exc})"


def _remove_unstarted(out: Path, existed: bool, work_existed: bool) -> None:
    """After a failed run: when no split had finished, remove what the run
    made (``work/`` with its plan if the run made it, an empty ``pages/``,
    and ``out`` itself if the run created it and it is empty), so nothing
    half-made is left."""
    work_dir, pages_dir = out / "work", out / "pages"
    done = work_dir.is_dir() and any(work_dir.glob("*.side.json"))
    if work_dir.is_dir() and not work_existed and not done:  # plan only
        shutil.rmtree(work_dir, ignore_errors=True)
    for folder in ([pages_dir] if pages_dir.is_dir() else []) + (
        [] if existed else [out]
    ):
        try:
            folder.rmdir()  # only when empty
        except OSError:
            pass


def _finished(request: DumpRequest) -> dict[str, Any] | None:
    """The manifest of a finished run of the same request in ``out``, None
    when ``out`` holds no finished run.

    Raises:
        DumpBuildError: If it holds a finished run of another request.
    """
    if not (request.out / MARKER).exists():
        return None
    done = json.loads((request.out / "manifest.json").read_text(encoding="utf-8"))
    before = done.get("request", {})
    key = request.reuse_key()
    differ = sorted(k for k in key if before.get(k) != key[k])
    if differ:
        raise DumpBuildError(
            f"{request.out} holds a finished run of other inputs or settings"
            f" ({', '.join(differ)}); remove it or use another output folder"
        )
    return done


@dataclass
class _Plan:
    """What the run will do: the wiki, the kind of input, the splits (for a
    multistream dump), and the folders."""

    site: SiteInfo
    multistream: bool
    splits: list[Split]
    work_dir: Path
    pages_dir: Path
    doc: dict[str, Any]


def _plan(request: DumpRequest) -> _Plan:
    """Read the header, plan the splits, and make (or check) the work folder.

    Raises:
        DumpBuildError: A header that cannot be read, a mix of multistream
            and plain dumps, a missing or broken index, or a work folder of
            another request.
    """
    inputs = request.inputs
    try:
        site = parse_siteinfo(
            read_header(inputs[0]),
            extra_aliases=request.namespace_aliases,
            extra_redirect_words=request.redirect_words,
        )
    except (ValueError, OSError, EOFError) as exc:
        raise DumpBuildError(f"{inputs[0]}: {exc}") from exc
    index_files: list[Path | None] = list(request.indexes or [None] * len(inputs))
    kinds = {_is_multistream(p, i) for p, i in zip(inputs, index_files, strict=True)}
    if len(kinds) > 1:
        raise DumpBuildError("mix of multistream and plain dumps; give one kind")
    multistream = kinds == {True}
    if not multistream and request.progress_seconds > 0:
        for path in inputs:
            if "multistream" in path.name:
                emit_line(
                    f"from-dump: no index {index_path_for(path).name} beside"
                    f" {path.name}: one reader feeds the workers (give --index"
                    " to read the streams in parallel)"
                )
    splits: list[Split] = []
    if multistream:
        files = []
        for path, given in zip(inputs, index_files, strict=True):
            index = given or index_path_for(path)
            if not index.is_file():
                raise DumpBuildError(f"{path}: index {index} not found")
            try:
                files.append((str(path), read_index(index, path.stat().st_size)))
            except ValueError as exc:
                raise DumpBuildError(str(exc)) from exc
        total = sum(s.size for _, streams in files for s in streams)
        n = request.splits or max(1, math.ceil(total / (request.split_mb * 1e6)))
        splits = plan_splits(files, n)
    doc: dict[str, Any] = {
        "request": request.reuse_key(),
        "multistream": multistream,
        "splits": [asdict(s) for s in splits] if multistream else None,
        "map_format": MAP_FORMAT,
    }
    out = request.out
    pages_dir = out / "pages"
    work_dir = out / "work"
    try:
        pages_dir.mkdir(parents=True, exist_ok=True)
        work_dir.mkdir(parents=True, exist_ok=True)
        probe = work_dir / ".write-test.tmp"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise DumpBuildError(_cannot_write(out, exc)) from None
    # what a killed run left half-done: progress notes and temporary files
    for stale in [*work_dir.glob("*.progress"), *work_dir.glob("*.tmp")]:
        stale.unlink()
    for stale in pages_dir.glob("*.tmp"):
        stale.unlink()
    plan_file = work_dir / "plan.json"
    if plan_file.exists():
        if json.loads(plan_file.read_text(encoding="utf-8")) != doc:
            raise DumpBuildError(
                f"{work_dir} holds a run with other inputs or settings;"
                " remove it or use another output folder"
            )
    else:
        atomic_write(plan_file, json.dumps(doc, indent=1).encode("utf-8"))
    return _Plan(site, multistream, splits, work_dir, pages_dir, doc)


@dataclass
class _Outcome:
    """What the map and resolve steps produced."""

    results: list[SplitResult]
    lookup: dict[str, int]
    sizes: list[int]
    map_seconds: float
    warnings: list[str]
    duplicates: list[Duplicate]


@dataclass
class _Progress:
    """The driver's progress lines during the map step."""

    request: DumpRequest
    plan: _Plan
    started: float
    results: dict[int, SplitResult] = field(default_factory=dict)
    last: float = field(default_factory=time.monotonic)
    done_bytes: int = 0

    def on_result(self, result: SplitResult) -> None:
        self.results[result.index] = result
        if self.plan.multistream:
            self.done_bytes += self.plan.splits[result.index].nbytes

    def tick(self, final: bool = False) -> None:
        now = time.monotonic()
        seconds = self.request.progress_seconds
        if seconds <= 0 or (not final and now - self.last < seconds):
            return
        self.last = now
        plan, results = self.plan, self.results
        fresh = [r for r in results.values() if not r.resumed]
        mb = fresh_mb = sum(r.wikitext_bytes for r in fresh) / 1e6
        pages = sum(r.pages for r in fresh)
        for running in plan.work_dir.glob("map-*.progress"):  # splits under way
            try:
                done_bytes, done_pages = running.read_text().split()
            except (OSError, ValueError):
                continue
            mb += int(done_bytes) / 1e6
            pages += int(done_pages)
        elapsed = max(now - self.started, 1e-9)
        line = (
            f"from-dump: {len(results)}"
            + (f"/{len(plan.splits)}" if plan.multistream else "")
            + f" splits, {mb:,.1f} MB wikitext ({mb / elapsed:,.2f} MB/s),"
            f" {pages:,} pages ({pages / elapsed:,.0f}/s)"
        )
        if plan.multistream and mb > 0:
            # wikitext expected in all: the wikitext per compressed byte of
            # the splits done (3.0, a typical bz2 ratio, until one is)
            total_bytes = sum(s.nbytes for s in plan.splits)
            done_w = sum(r.wikitext_bytes for r in results.values())
            ratio = done_w / self.done_bytes if self.done_bytes else 3.0
            left_mb = ratio * total_bytes / 1e6 - mb - (done_w / 1e6 - fresh_mb)
            line += f", ETA {max(left_mb, 0) / (mb / elapsed):,.0f} s"
        emit_line(line)


def _run(request: DumpRequest, plan: _Plan, runner: Engine, started: float) -> _Outcome:
    """The map step on every split, then the resolve step on every shard,
    with the request's engine.

    Raises:
        DumpBuildError: A split whose input cannot be read, or a page_props
            file that cannot be parsed.
    """
    options = request.page_options()
    work_dir, pages_dir = plan.work_dir, plan.pages_dir
    warnings: list[str] = []
    jobs: Iterable[SplitJob]
    if plan.multistream:
        jobs = [
            SplitJob(
                s.index,
                str(work_dir),
                plan.site,
                options,
                s.path,
                s.start,
                s.end,
                expected_pages=s.pages,
            )
            for s in plan.splits
        ]
    else:
        jobs = _batches(
            request.inputs,
            plan.site,
            int(request.split_mb * 1e6),
            work_dir,
            options,
            warnings,
        )
    progress = _Progress(request, plan, started)
    in_flight = 2 * max(request.workers, 1)
    try:
        map_started = time.monotonic()
        _run_all(
            runner,
            run_split,
            jobs,
            in_flight,
            progress.on_result,
            progress.tick,
            request.progress_seconds,
        )
        map_seconds = time.monotonic() - map_started
        progress.tick(final=True)
        n_splits = len(progress.results)
        lookup, duplicates = build_lookup(
            work_dir, n_splits, request.out, request.page_props
        )
        resolve_jobs = [
            ResolveJob(
                i,
                n_splits,
                str(work_dir),
                str(pages_dir),
                request.page_props is not None,
                tuple(d.row for d in duplicates if d.split == i),
            )
            for i in range(n_splits)
        ]
        _run_all(
            runner,
            resolve_shard,
            resolve_jobs,
            in_flight,
            lambda size: None,
            lambda: None,
            request.progress_seconds,
        )
        sizes = [
            (pages_dir / shard_name(i, n_splits)).stat().st_size
            for i in range(n_splits)
        ]
    except PagePropsError as exc:
        raise DumpBuildError(f"page_props: {exc}") from exc
    except IndexMismatchError as exc:
        # the plan came from that index: nothing of it is worth resuming
        shutil.rmtree(work_dir, ignore_errors=True)
        index = _index_of(request, Path(exc.dump))
        raise DumpBuildError(
            f"the index {index} does not match the dump {exc.dump}: {exc.message}"
        ) from exc
    except (OSError, ValueError) as exc:
        raise DumpBuildError(f"a split failed: {type(exc).__name__}: {exc}") from exc
    results = [progress.results[i] for i in range(n_splits)]
    for warning in warnings:
        emit_line(f"from-dump: warning: {warning}")
    return _Outcome(results, lookup, sizes, map_seconds, warnings, duplicates)


def _write_manifest(
    request: DumpRequest, plan: _Plan, outcome: _Outcome, started: float
) -> dict[str, Any]:
    """Write ``skipped.jsonl``, ``manifest.json`` and ``_SUCCESS`` (and
    remove ``work/`` unless asked to keep it); return the manifest."""
    out, work_dir = request.out, plan.work_dir
    ordered = outcome.results
    n_splits = len(ordered)
    failures: list[dict[str, Any]] = []
    for i in range(n_splits):
        failures.extend(
            json.loads(side_path(work_dir, i).read_text(encoding="utf-8"))["failures"]
        )
    failures.extend(d.failure() for d in outcome.duplicates)
    dropped = Counter(d.split for d in outcome.duplicates)
    skipped = Counter[str]()
    for r in ordered:
        skipped.update(r.skipped)
    if outcome.duplicates:
        skipped["duplicate_id"] = len(outcome.duplicates)
    wikitext = sum(r.wikitext_bytes for r in ordered)
    fresh_seconds = sum(r.cpu_seconds for r in ordered if not r.resumed)
    page_props = request.page_props
    lookup = outcome.lookup
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
                *request.inputs,
                *(request.indexes or ()),
                *([page_props] if page_props else []),
            ]
        ],
        "wiki": plan.site.dbname or plan.site.lang,
        "dump_date": _dump_date(request.inputs[0].name),
        "siteinfo": plan.site.as_dict(),
        "settings": {
            **asdict(request.page_options()),
            "split_mb": request.split_mb,
            "splits": n_splits,
        },
        "split_plan": plan.doc["splits"],
        "shards": [
            {
                "file": f"pages/{shard_name(i, n_splits)}",
                "pages": r.pages - dropped[i],
                "wikitext_bytes": r.wikitext_bytes,
                "bytes": outcome.sizes[i],
                "redirects": r.redirects,
            }
            for i, r in enumerate(ordered)
        ],
        "pages": sum(r.pages for r in ordered) - len(outcome.duplicates),
        "wikitext_bytes": wikitext,
        "skipped": dict(sorted(skipped.items())),
        "lookup": {k: v for k, v in lookup.items() if k not in WIKIDATA_COUNTS},
        "wikidata": (
            {"page_props": str(page_props), **{k: lookup[k] for k in WIKIDATA_COUNTS}}
            if page_props
            else None
        ),
        "warnings": outcome.warnings,
        "request": {**request.as_json(), **request.reuse_key()},
        "run": {
            "engine": request.engine,
            "workers": request.workers,
            "map_seconds": round(outcome.map_seconds, 3),
            "map_cpu_seconds": round(fresh_seconds, 3),
            "resumed_splits": sum(r.resumed for r in ordered),
        },
    }
    atomic_write(
        out / "skipped.jsonl",
        "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in failures).encode(
            "utf-8"
        ),
    )
    manifest["run"]["seconds"] = round(time.monotonic() - started, 3)
    atomic_write(
        out / "manifest.json",
        json.dumps(manifest, ensure_ascii=False, indent=1).encode("utf-8"),
    )
    if not request.keep_work:
        shutil.rmtree(work_dir)
    atomic_write(out / MARKER, b"")
    if request.progress_seconds > 0:
        emit_line(
            f"from-dump: {manifest['pages']:,} pages in {n_splits} shards,"
            f" {wikitext / 1e6:,.1f} MB wikitext in {manifest['run']['seconds']:,.1f} s"
            f" -> {plan.pages_dir}"
        )
    return manifest
