"""kilt-chunks reanchor: KILT provenance carried onto another snapshot.

Identity (the sample mapped onto itself), the edited snapshot of
``reanchor_snapshot.py`` (every verdict and count by hand), the output
tables, and the re-anchored gold scored by ``kilt-chunks eval --gold``.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import reanchor_snapshot as fixture

from kilt_chunks.cli import main
from kilt_chunks.reanchor import ReanchorError, normalise, reanchor
from kilt_chunks.reanchor.evidence import PageText, SpanError, read_span
from kilt_chunks.reanchor.locate import locate

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "kilt_enwiki2016_sample.jsonl"
HANDMADE = (
    ROOT / "tests" / "python" / "fixtures" / "kilt_tasks" / "handmade-dev-kilt.jsonl"
)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _json_or_raw(line: str) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return line


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The edited snapshot, its task file, and the re-anchored output."""
    root = tmp_path_factory.mktemp("reanchor")
    snapshot = fixture.write_snapshot(root / "snapshot")
    tasks = fixture.write_tasks(root / "tasks" / "reanchor-dev-kilt.jsonl")
    out = root / "out"
    report = reanchor([tasks], str(SAMPLE), str(snapshot), out)
    pages = {p["wikipedia_id"]: p for p in fixture.edited_pages()[0]}
    return {"root": root, "tasks": tasks, "out": out, "report": report, "pages": pages}


def test_self_mapping_is_identity(tmp_path: Path) -> None:
    """The sample onto itself: every valid span unchanged, the bad ones reported."""
    tasks = fixture.write_tasks(tmp_path / "tasks" / "reanchor-dev-kilt.jsonl")
    report = reanchor([HANDMADE, tasks], str(SAMPLE), str(SAMPLE), tmp_path / "out")
    for source in (HANDMADE, tasks):
        before = [_json_or_raw(x) for x in _lines(source)]
        after = [_json_or_raw(x) for x in _lines(tmp_path / "out" / source.name)]
        assert len(before) == len(after)
        for old, new in zip(before, after, strict=True):
            if not isinstance(old, dict) or not isinstance(old.get("output"), list):
                assert new == old  # not a query: copied as it is
                continue
            if old["id"] in ("handmade-6", "handmade-7", "ra-bad-offsets"):
                # Their spans name no evidence in 2019: the set is dropped.
                assert [o.get("provenance") for o in new["output"]] == [None]
                assert new["output"][0]["answer"] == old["output"][0]["answer"]
                continue
            assert new == old
    handmade = report["tasks"]["handmade-dev-kilt"]["counts"]
    assert handmade["spans"] == 14
    assert handmade["spans_exact"] == 11
    assert handmade["spans_invalid"] == 3  # page 99999999, paragraph 500, char 9999
    assert handmade["page_entries_mapped"] == 1
    assert handmade["not_queries"] == 2
    ra = report["tasks"]["reanchor-dev-kilt"]["counts"]
    assert ra["spans_exact"] == 22 and ra["spans_invalid"] == 1
    assert ra["page_entries_mapped"] == 2


def test_edited_snapshot_verdicts(edited: dict) -> None:
    """Every span of the edited snapshot gets its hand verdict; a surviving one
    points at exactly the expected text of the expected page."""
    fixture.task_lines()  # fills EXPECTED
    lines = [_json_or_raw(x) for x in _lines(edited["out"] / "reanchor-dev-kilt.jsonl")]
    con = duckdb.connect(str(edited["out"] / "reanchor.duckdb"), read_only=True)
    rows = con.execute(
        "select query_id, output_index, provenance_index, status, new_wikipedia_id,"
        " new_start_paragraph_id, new_start_character, new_end_paragraph_id,"
        " new_end_character from reanchor_spans"
    ).fetchall()
    got = {(r[0], r[1], r[2]): r[3:] for r in rows}
    assert len(got) == sum(
        len(entries) for outputs in fixture.EXPECTED.values() for entries in outputs
    )
    mapped_files = {x["id"]: x for x in lines if isinstance(x, dict)}
    for qid, outputs in fixture.EXPECTED.items():
        for o, entries in enumerate(outputs):
            kept = all(
                v[0] in ("exact", "normalised", "fuzzy", "page") for v in entries
            )
            output = mapped_files[qid]["output"][o]
            assert ("provenance" in output) == kept, qid
            for p, (status, page_id, text) in enumerate(entries):
                row = got[(qid, o, p)]
                assert row[0] == status, (qid, o, p, row)
                if status in ("lost_page", "lost_text", "invalid"):
                    assert row[1:] == (None,) * 5
                    continue
                assert row[1] == page_id, qid
                # In a dropped set (a member lost) the file has no entry.
                entry = output["provenance"][p] if kept else {}
                if kept:
                    assert entry["wikipedia_id"] == page_id
                    title = edited["pages"][page_id]["wikipedia_title"]
                    assert entry["title"] == title
                if text is None:  # page-level
                    assert "start_paragraph_id" not in entry
                    continue
                sp, sc, ep, ec = row[2:]
                if kept:
                    assert (
                        entry["start_paragraph_id"],
                        entry["start_character"],
                        entry["end_paragraph_id"],
                        entry["end_character"],
                    ) == (sp, sc, ep, ec)
                page = PageText(page_id, "", tuple(edited["pages"][page_id]["text"]))
                new_text = page.joined[page.absolute(sp, sc) : page.absolute(ep, ec)]
                assert new_text == text, qid


def test_no_span_is_mapped_to_other_text(edited: dict) -> None:
    """Precision: exact and normalised spans hold the old evidence (equal after
    normalising); a fuzzy one keeps its answer."""
    con = duckdb.connect(str(edited["out"] / "reanchor.duckdb"), read_only=True)
    rows = con.execute(
        "select old_wikipedia_id, old_start_paragraph_id, old_start_character,"
        " old_end_paragraph_id, old_end_character, new_wikipedia_id,"
        " new_start_paragraph_id, new_start_character, new_end_paragraph_id,"
        " new_end_character, status from reanchor_spans"
        " where status in ('exact', 'normalised', 'fuzzy')"
    ).fetchall()
    old_pages = fixture.read_sample()
    assert len(rows) == 14
    for row in rows:
        old = PageText(row[0], "", tuple(old_pages[row[0]]["text"]))
        new = PageText(row[5], "", tuple(edited["pages"][row[5]]["text"]))
        before = old.joined[old.absolute(row[1], row[2]) : old.absolute(row[3], row[4])]
        after = new.joined[new.absolute(row[6], row[7]) : new.absolute(row[8], row[9])]
        if row[10] == "exact":
            assert after == before
        elif row[10] == "normalised":
            assert normalise(after).text == normalise(before).text
        else:
            assert "NASA's MODIS instruments" in after


def test_report_counts_equal_hand_count(edited: dict) -> None:
    """The printed/JSON/DuckDB report equals the hand count of the fixture."""
    counts = edited["report"]["tasks"]["reanchor-dev-kilt"]["counts"]
    assert counts == fixture.HAND_COUNTS
    saved = json.loads((edited["out"] / "reanchor" / "report.json").read_text())
    assert saved["tasks"]["reanchor-dev-kilt"]["counts"] == fixture.HAND_COUNTS
    assert saved["redirects"].endswith("redirects.parquet")
    con = duckdb.connect(str(edited["out"] / "reanchor.duckdb"), read_only=True)
    row = con.execute(
        "select spans_exact, spans_normalised, spans_fuzzy, spans_lost_page,"
        " spans_lost_text, queries_left_without_evidence from reanchor_report"
    ).fetchone()
    assert row == (10, 3, 1, 2, 6, 8)


def test_cli_prints_report(edited: dict, tmp_path: Path, capsys) -> None:
    code = main(
        [
            "reanchor",
            str(edited["tasks"]),
            "--old-pages",
            str(SAMPLE),
            "--new-pages",
            str(edited["root"] / "snapshot" / "pages"),
            "--out",
            str(tmp_path / "out"),
            "--db",
            str(tmp_path / "m.duckdb"),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "redirects.parquet" in printed  # found beside pages/
    assert "mapped fuzzily" in printed and "reanchor-dev-kilt" in printed
    with duckdb.connect(str(tmp_path / "m.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from reanchor_spans").fetchone() == (25,)


def test_cli_bad_input_is_one_line(tmp_path: Path, capsys) -> None:
    code = main(
        [
            "reanchor",
            str(tmp_path / "missing.jsonl"),
            "--old-pages",
            str(SAMPLE),
            "--new-pages",
            str(SAMPLE),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert (
        err.strip() == f"kilt-chunks: task file {tmp_path / 'missing.jsonl'}: not found"
    )
    with pytest.raises(ReanchorError, match="would overwrite"):
        reanchor([HANDMADE], str(SAMPLE), str(SAMPLE), HANDMADE.parent)


def test_reanchored_gold_scores_like_kilt(edited: dict, tmp_path: Path) -> None:
    """``kilt-chunks eval --gold`` on the re-anchored file (KILT's reading,
    checked against KILT's scorer in bench/RESULTS_REANCHOR.md): a run that
    returns page 39 first, then 664, scores as counted by hand."""
    gold = tmp_path / "gold.jsonl"
    lines = [
        x
        for x in _lines(edited["out"] / "reanchor-dev-kilt.jsonl")
        if x.startswith("{") and x.endswith("}")
    ]
    gold.write_text("\n".join(lines) + "\n")
    run = tmp_path / "run.jsonl"
    ids = [json.loads(x)["id"] for x in lines]
    run.write_text(
        "".join(
            json.dumps(
                {
                    "id": q,
                    "output": [
                        {
                            "provenance": [
                                {"wikipedia_id": "39"},
                                {"wikipedia_id": "664"},
                            ]
                        }
                    ],
                }
            )
            + "\n"
            for q in ids
        )
    )
    assert (
        main(
            [
                "eval",
                str(run),
                "--gold",
                str(gold),
                "--ks",
                "1,2",
                "--json",
                str(tmp_path / "eval.json"),
                "--db",
                str(tmp_path / "none.duckdb"),
            ]
        )
        == 0
    )
    result = json.loads((tmp_path / "eval.json").read_text())
    per_query = result["per_query"]
    assert len(per_query) == 21
    # {39} kept: ten queries (ra-partial-set by its second set); {664}: ra-merged.
    on_39 = {
        "ra-shifted",
        "ra-duplicate",
        "ra-reworded",
        "ra-formula",
        "ra-typography",
        "ra-moved-section",
        "ra-renamed-section",
        "ra-list-marker",
        "ra-cross-paragraphs",
        "ra-partial-set",
    }
    for q, values in per_query.items():
        assert values["Rprec"] == (1.0 if q in on_39 else 0.0), q
        assert values["recall@2"] == (1.0 if q in on_39 | {"ra-merged"} else 0.0), q
    assert result["page"]["measures"]["Rprec"] == pytest.approx(10 / 21)
    assert result["page"]["measures"]["recall@2"] == pytest.approx(11 / 21)


def test_read_span_checks_offsets_like_the_build() -> None:
    page = PageText("1", "T", ("T\n", "abc def\n", "ghi\n"))
    span = read_span(
        {
            "start_paragraph_id": 1,
            "start_character": 4,
            "end_paragraph_id": 2,
            "end_character": 2,
        },
        page,
    )
    assert span.evidence == "def\ngh" and span.kind == "span"
    whole = read_span(
        {
            "start_paragraph_id": 1,
            "start_character": -1,
            "end_paragraph_id": 1,
            "end_character": -1,
        },
        page,
    )
    assert whole.kind == "paragraphs" and whole.evidence == "abc def\n"
    assert read_span({"wikipedia_id": "1"}, None).kind == "page"
    for bad, message in [
        (
            {
                "start_paragraph_id": 1,
                "start_character": 0,
                "end_paragraph_id": 1,
                "end_character": 9,
            },
            "end_character 9 beyond paragraph 1",
        ),
        (
            {
                "start_paragraph_id": 2,
                "start_character": 2,
                "end_paragraph_id": 2,
                "end_character": 1,
            },
            "empty or reversed",
        ),
        ({"start_paragraph_id": 1, "start_character": 0}, "incomplete"),
    ]:
        with pytest.raises(SpanError, match=message):
            read_span(bad, page)


def test_normalise_keeps_source_offsets() -> None:
    text = (
        "BULLET::::- Albert  Einstein (; 14\u00a0March\u00a01879 \u2013 1955) ,"
        " ''physicist''\n"
    )
    norm = normalise(text)
    assert norm.text == "Albert Einstein (14 March 1879 - 1955), physicist"
    start, end = norm.source_span(0, len(norm.text))
    assert text[start:end] == text[12:-3]


def test_fuzzy_refuses_short_evidence_and_changed_answers() -> None:
    old = "The river is 120 kilometres long and flows into the North Sea near Ghent."
    page = PageText(
        "1",
        "R",
        (
            "R\n",
            "The river is 125 kilometres long and flows into the North Sea"
            " near Ghent.\n",
        ),
    )
    assert locate(old, page, answer="120 kilometres") is None
    match = locate(old, page, answer="North Sea")
    assert match is not None and match.kind == "fuzzy" and match.score >= 85
    assert locate("120 kilometres long", page) is None  # too short for fuzzy


@pytest.mark.dbt
def test_reanchored_tasks_feed_the_build_of_the_new_pages(
    edited: dict, tmp_path: Path
) -> None:
    """``kilt_tasks: OUT`` on a build of the new pages: the provenance models
    make the page qrels of the kept evidence sets and chunk qrels for every
    kept span."""
    from conftest import run_dbt_build

    build = run_dbt_build(
        tmp_path / "build",
        edited["root"] / "snapshot" / "pages",
        extra_vars={"kilt_tasks": str(edited["out"])},
        data_tests=False,
    )
    pages = build.query(
        "select query_id, wikipedia_id from kilt_qrels_pages"
        " where task = 'reanchor-dev-kilt' order by all"
    )
    fixture.task_lines()
    expected = sorted(
        {
            (qid, page_id)
            for qid, outputs in fixture.EXPECTED.items()
            for entries in outputs
            if all(v[0] in ("exact", "normalised", "fuzzy", "page") for v in entries)
            for _, page_id, _ in entries
        }
    )
    assert [tuple(row) for row in pages] == expected
    with_chunks = build.query(
        "select distinct query_id from kilt_qrels_chunks"
        " where task = 'reanchor-dev-kilt' order by all"
    )
    spans_kept = sorted(
        {
            qid
            for qid, outputs in fixture.EXPECTED.items()
            for entries in outputs
            if all(v[0] in ("exact", "normalised", "fuzzy", "page") for v in entries)
            and any(v[2] is not None for v in entries)
        }
    )
    assert [row[0] for row in with_chunks] == spans_kept
    rejected = build.query(
        "select count(*), count(span_id) from kilt_provenance_rejected"
        " where task = 'reanchor-dev-kilt'"
    )
    assert rejected == [(1, 0)]  # the line that is not JSON; no span
    # Offsets made on these pages by reanchor: no "gold on other pages"
    # warning, although the pages have a from-dump manifest.
    assert build.query(
        "select input_kind, num_spans, warning from kilt_provenance_pages_check"
        " where task = 'reanchor-dev-kilt'"
    ) == [("dump", 13, None)]  # 14 mapped spans, one in a dropped set


def test_long_answer_is_judged_by_the_ratio() -> None:
    """An answer as long as the evidence (NQ's long answers) is the evidence:
    a reworded one is found fuzzily, not refused for the wording."""
    old = "The river is 120 kilometres long and flows into the North Sea near Ghent."
    new = (
        "The river is 120 kilometres long and it flows into the North Sea"
        " close to Ghent."
    )
    page = PageText("1", "R", ("R\n", new + "\n"))
    match = locate(old, page, answer=old)
    assert match is not None and match.kind == "fuzzy"
    assert page.joined[match.start : match.end] == new


def test_whole_paragraph_entries_and_sections() -> None:
    """KILT's -1 characters (whole paragraphs) keep -1 with the new paragraph
    ids; a ``section`` is set to the heading above the new place; a page-level
    entry follows a redirect when its id is gone."""
    from kilt_chunks.reanchor.mapping import Mapper, rewrite_entry
    from kilt_chunks.reanchor.pages import Snapshot

    old_page = PageText("7", "Old", ("Old\n", "Lead text here.\n", "Body one.\n"))
    new_page = PageText(
        "8",
        "New",
        ("New\n", "Lead text here.\n", "Section::::History.\n", "Body one.\n"),
    )
    old = Snapshot(pages={"7": old_page}, by_title={"Old": "7"})
    new = Snapshot(pages={"8": new_page}, by_title={"New": "8"}, redirects={"Old": "8"})
    mapper = Mapper(old, new)
    entry = {
        "wikipedia_id": "7",
        "title": "Old",
        "section": "Section::::Abstract.",
        "start_paragraph_id": 2,
        "start_character": -1,
        "end_paragraph_id": 2,
        "end_character": -1,
    }
    result = mapper.map_entry(entry)
    assert (result.status, result.via) == ("exact", "redirect")
    assert rewrite_entry(entry, result) == {
        "wikipedia_id": "8",
        "title": "New",
        "section": "Section::::History.",
        "start_paragraph_id": 3,
        "start_character": -1,
        "end_paragraph_id": 3,
        "end_character": -1,
    }
    page_level = mapper.map_entry({"wikipedia_id": "7", "title": "Old"})
    assert (page_level.status, page_level.wikipedia_id) == ("page", "8")
    assert (
        mapper.map_entry({"wikipedia_id": "9", "title": "Gone"}).status == "lost_page"
    )


def test_locate_on_an_empty_page() -> None:
    evidence = "A sentence long enough to be looked for fuzzily on any page."
    assert locate(evidence, PageText("1", "E", ())) is None
    assert locate(evidence, PageText("1", "E", ("E\n",))) is None


def test_bad_redirects_file_is_named(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kilt_chunks.reanchor.pages import RedirectsError

    wrong = tmp_path / "redirects.parquet"
    pq.write_table(pa.table({"x": [1]}), wrong)
    with pytest.raises(RedirectsError, match=r"redirects .*redirects\.parquet: not a"):
        reanchor(
            [HANDMADE], str(SAMPLE), str(SAMPLE), tmp_path / "out", redirects=wrong
        )


def test_threshold_is_checked(capsys) -> None:
    with pytest.raises(SystemExit):
        main(
            [
                "reanchor",
                "x.jsonl",
                "--old-pages",
                "a",
                "--new-pages",
                "b",
                "--out",
                "c",
                "--threshold",
                "150",
            ]
        )
    assert "--threshold: 150: expected 0 to 100" in capsys.readouterr().err


def test_boundary_spellings_are_kept_on_self_mapping() -> None:
    """A span ending at the next paragraph's character 0, or starting at its
    paragraph's end, maps onto itself with the same spelling."""
    from kilt_chunks.reanchor.mapping import Mapper
    from kilt_chunks.reanchor.pages import Snapshot

    page = PageText("5", "T", ("T\n", "abc\n", "def\n"))
    snapshot = Snapshot(pages={"5": page}, by_title={"T": "5"})
    mapper = Mapper(snapshot, snapshot)
    for offsets in [(1, 0, 2, 0), (1, 4, 2, 3), (1, 1, 1, 3)]:
        entry = dict(
            zip(
                (
                    "start_paragraph_id",
                    "start_character",
                    "end_paragraph_id",
                    "end_character",
                ),
                offsets,
                strict=True,
            ),
            wikipedia_id="5",
        )
        result = mapper.map_entry(entry)
        assert result.status == "exact"
        assert (
            result.start_paragraph_id,
            result.start_character,
            result.end_paragraph_id,
            result.end_character,
        ) == offsets


def test_reanchored_tasks_are_recognised(edited: dict) -> None:
    """The build's check of gold on other pages learns which task files
    reanchor wrote onto its pages, and does not warn for them."""
    import duckdb as ddb

    from kilt_chunks.evaluation.provenance import gold_pages_check
    from kilt_chunks.reanchor import reanchored_tasks

    mapped = edited["out"] / "reanchor-dev-kilt.jsonl"
    files = {"reanchor-dev-kilt": str(mapped), "handmade-dev-kilt": str(HANDMADE)}
    snapshot = edited["root"] / "snapshot"
    assert reanchored_tasks(files, str(snapshot / "pages")) == {"reanchor-dev-kilt"}
    assert reanchored_tasks(files, str(snapshot)) == {"reanchor-dev-kilt"}
    assert reanchored_tasks(files, str(SAMPLE)) == set()  # other pages
    assert (
        reanchored_tasks({"x": None, "y": str(edited["tasks"])}, str(snapshot)) == set()
    )
    with ddb.connect() as con:
        spans = con.sql(
            "select * from (values ('r', '39', false), ('t', '39', false))"
            " as s(task, wikipedia_id, is_page_level)"
        )
        chunks = con.sql(
            "select * from (values ('39', '2016-01-01T00:00:00Z'))"
            " as c(wikipedia_id, timestamp)"
        )
        rows = gold_pages_check(
            spans, chunks, ["r", "t"], input_kind="dump", reanchored={"r"}
        ).to_pylist()
    assert [(r["task"], r["num_spans"], r["warning"] is None) for r in rows] == [
        ("r", 1, True),
        ("t", 1, False),
    ]
