"""The pages ``from-dump`` writes are read by the loader and chunked by
``dbt build`` unchanged (one build of the English test dump, with the
page_props fixture: pages with and without ``wikidata_info``; the build is
shared with test_provenance, which reads its provenance check)."""

from __future__ import annotations

import pytest
from dump_helpers import ENWIKI_ARTICLES, enwiki_dump_dbt_build

#: Every test of this module runs dbt (make test-fast leaves them out).
pytestmark = pytest.mark.dbt


def test_dbt_build_chunks_every_dump_page(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    build = enwiki_dump_dbt_build(tmp_path_factory)
    [(read, loaded, chunked, rejected)] = build.query(
        "select lines_read, pages_loaded, pages_chunked, pages_rejected"
        " from kilt_load_audit"
    )
    assert (read, loaded, rejected) == (ENWIKI_ARTICLES, ENWIKI_ARTICLES, 0)
    assert chunked == ENWIKI_ARTICLES
    [(pages, chunks)] = build.query(
        "select count(distinct wikipedia_id), count(*) from kilt_chunks"
    )
    assert pages == ENWIKI_ARTICLES and chunks > 3000
    # a chunk under a joined heading carries its section path
    [(n,)] = build.query(
        "select count(*) from kilt_chunks where wikipedia_title = 'Anarchism'"
        " and section = ['History', 'Origins']"
    )
    assert n > 0
    [(url,)] = build.query(
        "select any_value(url) from kilt_chunks where wikipedia_id = '12'"
    )
    assert url == "https://en.wikipedia.org/w/index.php?title=Anarchism&oldid=716551092"
    # wikidata_info from page_props; NULL for the pages without it
    ids = dict(
        build.query(
            "select wikipedia_id, any_value(wikidata_id) from kilt_chunks"
            " group by wikipedia_id"
        )
    )
    assert ids["12"] == "Q6199" and ids["25"] == "Q38404"
    assert sum(v is not None for v in ids.values()) == 10 and ids["330"] is None
