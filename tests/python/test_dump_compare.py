"""``compare-pages`` and the two dump subcommands of the ``kilt-chunks`` CLI."""

from __future__ import annotations

import copy
import json

from dump_helpers import TABLES

from kilt_chunks.cli import main
from kilt_chunks.dump.compare import compare_page_files


def _page(pid: str, text: list[str], anchors: list[dict], cats: str) -> dict:
    return {
        "_id": pid,
        "wikipedia_id": pid,
        "wikipedia_title": text[0].strip(),
        "text": text,
        "anchors": anchors,
        "categories": cats,
    }


def _write(path, pages):
    path.write_text("".join(json.dumps(p) + "\n" for p in pages), encoding="utf-8")
    return path


REF = [
    _page(
        "1",
        ["A\n", "Intro a b.\n", "Section::::H.\n", "BULLET::::- x\n",
         "Same.\n", "Same.\n"],
        [{"text": "a", "href": "a", "paragraph_id": 1, "start": 6, "end": 7,
          "wikipedia_title": "A", "wikipedia_id": ""}],
        "Letters,Vowels",
    ),
    _page("2", ["B\n", "Only here.\n"], [], ""),
]  # fmt: skip


def test_identical_files_match_fully(tmp_path):
    ref = _write(tmp_path / "ref.jsonl", REF)
    report = compare_page_files(ref, ref)
    assert report["pages"] == {"matched": 2, "only_candidate": 0, "only_reference": 0}
    for kind in ("paragraphs", "prose", "headings", "bullets", "anchors", "categories"):
        assert report[kind]["share"] == 1.0, kind


def test_differences_are_counted_per_kind(tmp_path):
    cand = copy.deepcopy(REF[:1])
    cand[0]["text"][3] = "BULLET::::1. x\n"  # other bullet
    cand[0]["text"][5] = "Other.\n"  # one "Same." of two left
    cand[0]["anchors"][0]["start"] = 5
    cand[0]["categories"] = "Letters"
    cand.append(_page("3", ["C\n", "New.\n"], [], ""))
    report = compare_page_files(
        _write(tmp_path / "c.jsonl", cand),
        _write(tmp_path / "r.jsonl", REF),
        examples=5,
    )
    assert report["pages"] == {"matched": 1, "only_candidate": 1, "only_reference": 1}
    assert report["paragraphs"] == {"reference": 5, "matched": 3, "share": 0.6}
    assert report["prose"]["matched"] == 2 and report["prose"]["reference"] == 3
    assert report["bullets"]["share"] == 0.0 and report["headings"]["share"] == 1.0
    assert report["anchors"]["share"] == 0.0 and report["categories"]["share"] == 0.0
    assert [m["paragraph"] for m in report["missing_examples"]] == [
        "BULLET::::- x\n",
        "Same.\n",
    ]


def test_cli_from_dump_then_compare(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["from-dump", str(TABLES), "--out", str(out), "--workers", "1",
                 "--progress-seconds", "0"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "5 pages in 1 shards" in printed and "kilt_path:" in printed
    report_file = tmp_path / "report.json"
    assert main(["compare-pages", str(out / "pages"), str(out / "pages"),
                 "--json", str(report_file)]) == 0  # fmt: skip
    assert "paragraphs: 100.00% verbatim" in capsys.readouterr().out
    assert json.loads(report_file.read_text())["pages"]["matched"] == 5


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["from-dump", str(tmp_path / "nope.xml"), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kilt-chunks: ") and "no such dump file" in err
    assert main(["compare-pages", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    assert "no such file or folder" in capsys.readouterr().err
