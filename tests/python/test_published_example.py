"""The dataset card's published row (SPEC, last section), rebuilt with dbt."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, run_dbt_build
from contracts import contract_names

CARD_TEXT = (
    "Albedo is not directly dependent on illumination because changing the amount "
    "of incoming light proportionally changes the amount of reflected light, except "
    "in circumstances where a change in illumination induces a change in the Earth's "
    "surface at that location (e.g. through albedo-temperature feedback). That said, "
    "albedo and illumination both vary by latitude. Albedo is highest near the poles "
    "and lowest in the subtropics, with a local maximum in the tropics."
)

#: Every test of this module runs dbt (make test-fast leaves them out).
pytestmark = pytest.mark.dbt


def test_albedo_illumination_row_is_the_published_one(tmp_path: Path) -> None:
    # Without data tests: the shared sample build runs them; this build
    # only has to give the row.
    build = run_dbt_build(
        tmp_path,
        FIXTURES / "albedo_2019_like.jsonl",
        extra_vars={"workers": 1},
        data_tests=False,
    )
    # SPEC's row, column by column: the contract's first columns, in order (a
    # column the contract adds is compared once its value is added here).
    published = {
        "chunk_id": "doc-39_4::s-4::chunk-0",  # SPEC's format, not the card's s-1
        "doc_id": "39_4",
        "chunk_order": 0,
        "is_first": True,
        "is_last": True,
        "text": CARD_TEXT,
        "title": "# Albedo\n## Examples of terrestrial albedo effects\n"
        "### Illumination",
        "section": ["Examples of terrestrial albedo effects", "Illumination"],
        "section_order": 4,
        "num_sections": 19,
        "wikipedia_id": "39",
        "wikipedia_title": "Albedo",
        "categories": "Climate forcing,Climatology,Electromagnetic radiation,"
        "Radiometry,Scattering, absorption and radiative transfer (optics),Radiation",
        "pageid": "39",
        "parentid": "905857522",
        "revid": "906500850",
        "timestamp": "2019-07-21T01:37:26Z",
        "url": "https://en.wikipedia.org/w/index.php?title=Albedo&oldid=906500850",
        "wikidata_id": "Q101038",
    }
    columns = contract_names("kilt_chunks")
    rows = build.query(
        f"select {', '.join(columns)} from kilt_chunks where section = "
        "['Examples of terrestrial albedo effects', 'Illumination']"
    )
    assert columns[: len(published)] == list(published)
    assert [
        {
            name: value
            for name, value in zip(columns, row, strict=True)
            if name in published
        }
        for row in rows
    ] == [published]
    # The header without text of its own is dropped and takes no number.
    assert build.query(
        "select count(*) from kilt_chunks where section = "
        "['Examples of terrestrial albedo effects']"
    ) == [(0,)]
