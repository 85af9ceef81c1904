"""The dataset card's published row (SPEC, last section), rebuilt with dbt."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, run_dbt_build

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
    build = run_dbt_build(
        tmp_path, FIXTURES / "albedo_2019_like.jsonl", extra_vars={"workers": 1}
    )
    rows = build.query(
        "select * from kilt_chunks where section = "
        "['Examples of terrestrial albedo effects', 'Illumination']"
    )
    assert rows == [
        (
            "doc-39_4::s-4::chunk-0",  # SPEC's format, not the card's typo s-1
            "39_4",
            0,
            True,
            True,
            CARD_TEXT,
            "# Albedo\n## Examples of terrestrial albedo effects\n### Illumination",
            ["Examples of terrestrial albedo effects", "Illumination"],
            4,
            19,
            "39",
            "Albedo",
            "Climate forcing,Climatology,Electromagnetic radiation,Radiometry,"
            "Scattering, absorption and radiative transfer (optics),Radiation",
            "39",
            "905857522",
            "906500850",
            "2019-07-21T01:37:26Z",
            "https://en.wikipedia.org/w/index.php?title=Albedo&oldid=906500850",
            "Q101038",
        )
    ]
    # The header without text of its own is dropped and takes no number.
    assert build.query(
        "select count(*) from kilt_chunks where section = "
        "['Examples of terrestrial albedo effects']"
    ) == [(0,)]
