"""dbt unit tests (SPEC section and chunk rules) run inside every `dbt build`."""

from __future__ import annotations

import re

import pytest

from conftest import Build

#: Every test of this module runs dbt (make test-fast leaves them out).
pytestmark = pytest.mark.dbt


def test_section_rule_unit_tests_pass_in_the_build(sample_build: Build) -> None:
    passed = set(
        re.findall(r"PASS ((?:int_\w+|kilt_chunks)::\w+)", sample_build.output)
    )
    assert passed == {
        "int_paragraphs_classified::header_levels_split_after_sentence_end",
        "int_paragraphs_classified::markers_count_only_at_paragraph_start",
        "int_sections_assembled::header_without_text_is_dropped",
        "int_sections_assembled::lead_and_subsections_are_separate_sections",
        "int_sections_assembled::only_loaded_pages_and_title_only_pages_give_no_sections",
        "int_sections_assembled::white_space_sections_are_dropped",
        # SPEC rules 6-7: chunk text cut from its section, is_first / is_last.
        "kilt_chunks::chunks_are_cut_from_their_section_with_first_and_last_flags",
    }
