"""The resolve step: anchor targets and redirects, after the map step.

DuckDB joins the titles and redirects of all splits (from their side files)
into one lookup table, ``title -> (wikipedia_title, wikipedia_id)``: a page's
own title, or a redirect followed (up to two hops) to the page it names.
Each map shard is then rewritten with its anchors resolved
(:func:`resolve_shard`, a pure function run by the same engine as the map
step), under its final name ``part-<i>-of-<n>.jsonl.gz``.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import duckdb

from kilt_chunks.dump.shards import JsonlGzWriter, map_path, side_path

__all__ = ["ResolveJob", "build_lookup", "resolve_shard", "shard_name"]

LOOKUP_DB = "resolve.duckdb"


def shard_name(index: int, total: int) -> str:
    """``part-00000-of-00012.jsonl.gz``."""
    return f"part-{index:05d}-of-{total:05d}.jsonl.gz"


def build_lookup(work_dir: Path, splits: int, out_dir: Path) -> dict[str, int]:
    """Build ``resolve.duckdb`` (table ``lookup``) from the side files, and
    write the redirects table ``<out_dir>/redirects.parquet`` (``title``,
    ``target``, ``page_id`` of the redirect page, ``wikipedia_title`` and
    ``wikipedia_id`` it resolves to, ``""`` when the target is no article).

    Returns:
        Counts: ``titles``, ``redirects``, ``redirects_resolved``.
    """
    db = work_dir / LOOKUP_DB
    tmp = work_dir / (LOOKUP_DB + ".tmp")
    tmp.unlink(missing_ok=True)
    titles: list[tuple[str, int]] = []
    redirects: list[tuple[str, str, int]] = []
    for i in range(splits):
        side = json.loads(side_path(work_dir, i).read_text(encoding="utf-8"))
        titles.extend((t, int(p)) for t, p in side["titles"])
        redirects.extend((t, g, int(p)) for t, g, p in side["redirects"])
    with duckdb.connect(str(tmp)) as con:
        con.execute(
            "create table titles as select unnest(?::varchar[]) as title,"
            " unnest(?::bigint[]) as page_id",
            [[t for t, _ in titles], [p for _, p in titles]],
        )
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
    tmp.replace(db)
    return {
        "titles": len(titles),
        "redirects": len(redirects),
        "redirects_resolved": int(resolved),
    }


@dataclass(frozen=True)
class ResolveJob:
    """One map shard to resolve into its final shard."""

    index: int
    total: int
    work_dir: str
    pages_dir: str


def resolve_shard(job: ResolveJob) -> int:
    """Fill ``wikipedia_title``/``wikipedia_id`` of every anchor of one shard
    (through redirects) and write ``part-<i>-of-<n>.jsonl.gz`` (temporary
    file, then rename; an existing final shard is kept: resume).

    Returns:
        The final shard's size in bytes.
    """
    final = Path(job.pages_dir) / shard_name(job.index, job.total)
    if final.exists():
        return final.stat().st_size
    source = map_path(job.work_dir, job.index)
    targets: set[str] = set()
    with gzip.open(source, "rt", encoding="utf-8") as f:  # pass 1: the targets
        for line in f:
            targets.update(a["wikipedia_title"] for a in json.loads(line)["anchors"])
    found: dict[str, tuple[str, str]] = {}
    if targets:
        db = str(Path(job.work_dir) / LOOKUP_DB)
        with duckdb.connect(db, read_only=True) as con:
            rows = con.execute(
                "select l.title, l.wikipedia_title, l.wikipedia_id"
                " from lookup as l semi join (select unnest(?) as t) as q"
                " on l.title = q.t",
                [sorted(targets)],
            ).fetchall()
        found = {t: (w, i) for t, w, i in rows}
    with (
        gzip.open(source, "rt", encoding="utf-8") as f,  # pass 2: rewrite
        JsonlGzWriter(final) as out,
    ):
        for line in f:
            page = json.loads(line)
            for anchor in page["anchors"]:
                hit = found.get(anchor["wikipedia_title"])
                if hit is not None:
                    anchor["wikipedia_title"], anchor["wikipedia_id"] = hit
            out.write(page)
    return final.stat().st_size
