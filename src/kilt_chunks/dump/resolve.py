"""The resolve step: anchor targets and redirects, after the map step.

DuckDB joins the titles and redirects of all splits (from their side files)
into one lookup table, ``title -> (wikipedia_title, wikipedia_id)``: a page's
own title, or a redirect followed (up to two hops) to the page it names.
When the user passes Wikimedia's ``page_props.sql.gz``, its
``wikibase_item`` rows go into a second table, ``wikidata``
(``page_id -> wikidata_id``). Each map shard is then rewritten with its
anchors resolved and, for the pages that have one, KILT's
``wikidata_info: {"wikidata_id": "Q..."}`` (pages without a Q id have no
``wikidata_info``: the loader reads a missing one as a NULL ``wikidata_id``)
(:func:`resolve_shard`, a pure function run by the same engine as the map
step), under its final name ``part-<i>-of-<n>.jsonl.gz``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import duckdb

from kilt_chunks.dump.pageprops import (
    PagePropsError,
    PagePropsStats,
    read_wikibase_items,
)
from kilt_chunks.dump.shards import (
    JsonlGzWriter,
    iter_map_shard,
    map_path,
    side_path,
)

__all__ = [
    "WIKIDATA_COUNTS",
    "Duplicate",
    "ResolveJob",
    "build_lookup",
    "resolve_shard",
    "shard_name",
]

LOOKUP_DB = "resolve.duckdb"
#: Rows of page_props sent to DuckDB at a time (memory: a few tens of MB).
WIKIDATA_BATCH = 500_000
#: The counts :func:`build_lookup` adds when given a page_props dump.
WIKIDATA_COUNTS = (
    "page_props_rows",
    "wikibase_items",
    "bad_wikibase_items",
    "pages_with_wikidata_id",
)


def shard_name(index: int, total: int) -> str:
    """``part-00000-of-00012.jsonl.gz``."""
    return f"part-{index:05d}-of-{total:05d}.jsonl.gz"


def _load_wikidata(con: duckdb.DuckDBPyConnection, page_props: Path) -> dict[str, int]:
    """Table ``wikidata (page_id, wikidata_id)`` from a page_props dump.

    Returns:
        Counts: ``page_props_rows`` (all properties), ``wikibase_items``
        (valid ``Q`` ids), ``bad_wikibase_items`` (other values, left out),
        ``pages_with_wikidata_id`` (articles of the dump that got one).
    """
    con.execute("create table wikidata_rows (page_id bigint, wikidata_id varchar)")
    stats = PagePropsStats()
    ids: list[int] = []
    qids: list[str] = []

    def flush() -> None:
        con.execute(
            "insert into wikidata_rows"
            " select unnest(?::bigint[]), unnest(?::varchar[])",
            [ids, qids],
        )
        ids.clear()
        qids.clear()

    try:
        for page_id, qid in read_wikibase_items(page_props, stats):
            ids.append(page_id)
            qids.append(qid)
            if len(ids) >= WIKIDATA_BATCH:
                flush()
    except (OSError, EOFError) as exc:  # not gzip, cut short, unreadable
        raise PagePropsError(f"{page_props}: {exc}") from exc
    if stats.rows == 0:
        raise PagePropsError(
            f"{page_props}: no row of table page_props"
            " (Wikimedia's <wiki>-<date>-page_props.sql.gz is expected)"
        )
    flush()
    # one id per page (page_props' key makes them unique; a file of several
    # dumps joined could repeat a page: the smallest id, not a random one)
    con.execute(
        "create table wikidata as select page_id, min(wikidata_id) as wikidata_id"
        " from wikidata_rows group by page_id"
    )
    con.execute("drop table wikidata_rows")
    (pages,) = con.execute(
        "select count(*) from titles semi join wikidata using (page_id)"
    ).fetchone() or (0,)
    return {
        "page_props_rows": stats.rows,
        "wikibase_items": stats.items,
        "bad_wikibase_items": stats.bad_items,
        "pages_with_wikidata_id": int(pages),
    }


@dataclass(frozen=True)
class Duplicate:
    """A page whose ``<id>`` an earlier page of the dump already has: it is
    left out of the pages (the first is kept, as the loader of a build
    keeps the first of two equal ``wikipedia_id``).

    Attributes:
        split: The split that rendered it.
        row: Its position in the split's map shard.
        page_id: The id.
        title: Its title.
        first_title: The title of the page kept with that id.
    """

    split: int
    row: int
    page_id: int
    title: str
    first_title: str

    def failure(self) -> dict[str, object]:
        """Its line of ``skipped.jsonl``."""
        return {
            "page_id": self.page_id,
            "title": self.title,
            "reason": f"duplicate_id: page id {self.page_id} is also"
            f" {self.first_title!r}, earlier in the dump (kept)",
        }


def build_lookup(
    work_dir: Path, splits: int, out_dir: Path, page_props: Path | None = None
) -> tuple[dict[str, int], list[Duplicate]]:
    """Build ``resolve.duckdb`` (table ``lookup``; table ``wikidata`` when
    ``page_props`` is given) from the side files, and write the redirects
    table ``<out_dir>/redirects.parquet`` (``title``, ``target``, ``page_id``
    of the redirect page, ``wikipedia_title`` and ``wikipedia_id`` it
    resolves to, ``""`` when the target is no article).

    Returns:
        Counts: ``titles``, ``redirects``, ``redirects_resolved``, and with
        ``page_props`` those of :func:`_load_wikidata`; and the pages whose
        id an earlier page has, in dump order (left out of the lookup).

    Raises:
        kilt_chunks.dump.pageprops.PagePropsError: ``page_props`` cannot be
            parsed.
    """
    db = work_dir / LOOKUP_DB
    tmp = work_dir / (LOOKUP_DB + ".tmp")
    tmp.unlink(missing_ok=True)
    titles: list[tuple[str, int]] = []
    places: list[tuple[int, int]] = []  # (split, row) of each title
    redirects: list[tuple[str, str, int]] = []
    for i in range(splits):
        side = json.loads(side_path(work_dir, i).read_text(encoding="utf-8"))
        titles.extend((t, int(p)) for t, p in side["titles"])
        places.extend((i, row) for row in range(len(side["titles"])))
        redirects.extend((t, g, int(p)) for t, g, p in side["redirects"])
    with duckdb.connect(str(tmp)) as con:
        con.execute(
            "create table all_titles as select unnest(?::varchar[]) as title,"
            " unnest(?::bigint[]) as page_id, unnest(?::integer[]) as split,"
            " unnest(?::integer[]) as pos",
            [
                [t for t, _ in titles],
                [p for _, p in titles],
                [s for s, _ in places],
                [r for _, r in places],
            ],
        )
        # the first page of each id, in dump order, is kept
        con.execute(
            "create table ranked as select *, row_number() over (partition by"
            " page_id order by split, pos) as nth, first_value(title) over"
            " (partition by page_id order by split, pos) as first_title"
            " from all_titles"
        )
        duplicates = [
            Duplicate(*row)
            for row in con.execute(
                "select split, pos, page_id, title, first_title from ranked"
                " where nth > 1 order by split, pos"
            ).fetchall()
        ]
        con.execute(
            "create table titles as select title, page_id from ranked"
            " where nth = 1 order by split, pos"
        )
        con.execute("drop table ranked")
        con.execute("drop table all_titles")
        con.execute(
            "create table redirects as select unnest(?::varchar[]) as title,"
            " unnest(?::varchar[]) as target, unnest(?::bigint[]) as page_id",
            [
                [t for t, _, _ in redirects],
                [g for _, g, _ in redirects],
                [p for _, _, p in redirects],
            ],
        )
        con.execute(
            """
            create table resolved_redirects as
            select
                r.title,
                r.target,
                r.page_id,
                coalesce(t1.title, t2.title, r.target) as wikipedia_title,
                coalesce(
                    cast(t1.page_id as varchar), cast(t2.page_id as varchar), ''
                ) as wikipedia_id
            from redirects as r
            left join titles as t1 on t1.title = r.target
            left join redirects as r2 on t1.title is null and r2.title = r.target
            left join titles as t2 on t2.title = r2.target
            """
        )
        con.execute(
            """
            create table lookup as
            select
                title,
                title as wikipedia_title,
                cast(page_id as varchar) as wikipedia_id
            from titles
            union all
            select title, wikipedia_title, wikipedia_id
            from resolved_redirects
            where title not in (select title from titles)
            """
        )
        out = out_dir / "redirects.parquet"
        tmp_out = out_dir / "redirects.parquet.tmp"
        con.execute(
            f"copy (select * from resolved_redirects order by page_id) to '{tmp_out}'"
            " (format parquet)"
        )
        tmp_out.replace(out)
        (resolved,) = con.execute(
            "select count(*) from resolved_redirects where wikipedia_id <> ''"
        ).fetchone() or (0,)
        counts = {
            "titles": len(titles) - len(duplicates),
            "redirects": len(redirects),
            "redirects_resolved": int(resolved),
        }
        if page_props is not None:
            counts |= _load_wikidata(con, page_props)
    tmp.replace(db)
    return counts, duplicates


@dataclass(frozen=True)
class ResolveJob:
    """One map shard to resolve into its final shard."""

    index: int
    total: int
    work_dir: str
    pages_dir: str
    wikidata: bool = False
    drop: tuple[int, ...] = ()  # rows of the map shard left out (duplicates)


def resolve_shard(job: ResolveJob) -> int:
    """Fill ``wikipedia_title``/``wikipedia_id`` of every anchor of one shard
    (through redirects), add ``wikidata_info`` to the pages with a Wikidata
    id (when ``job.wikidata``), and write ``part-<i>-of-<n>.jsonl.gz``
    (temporary file, then rename; an existing final shard is kept: resume).

    Returns:
        The final shard's size in bytes.
    """
    final = Path(job.pages_dir) / shard_name(job.index, job.total)
    if final.exists():
        return final.stat().st_size
    source = map_path(job.work_dir, job.index)
    # the split's anchor targets and page ids, from its side file (the map
    # shard is read once, below)
    side = json.loads(side_path(job.work_dir, job.index).read_text(encoding="utf-8"))
    targets: list[str] = side["targets"]
    page_ids = [int(page_id) for _, page_id in side["titles"]]
    found: dict[str, tuple[str, str]] = {}
    qids: dict[str, str] = {}
    if targets or (job.wikidata and page_ids):
        db = str(Path(job.work_dir) / LOOKUP_DB)
        with duckdb.connect(db, read_only=True) as con:
            rows = con.execute(
                "select l.title, l.wikipedia_title, l.wikipedia_id"
                " from lookup as l semi join (select unnest(?) as t) as q"
                " on l.title = q.t",
                [targets],
            ).fetchall()
            if job.wikidata:
                qids = dict(
                    con.execute(
                        "select cast(w.page_id as varchar), w.wikidata_id"
                        " from wikidata as w"
                        " semi join (select unnest(?::bigint[]) as p) as q"
                        " on w.page_id = q.p",
                        [page_ids],
                    ).fetchall()
                )
        found = {t: (w, i) for t, w, i in rows}
    drop = set(job.drop)
    with JsonlGzWriter(final) as out:
        for row, page in enumerate(iter_map_shard(source)):
            if row in drop:
                continue
            for anchor in page["anchors"]:
                hit = found.get(anchor["wikipedia_title"])
                if hit is not None:
                    anchor["wikipedia_title"], anchor["wikipedia_id"] = hit
            qid = qids.get(page["wikipedia_id"])
            if qid is not None:
                page["wikidata_info"] = {"wikidata_id": qid}
            out.write(page)
    return final.stat().st_size
