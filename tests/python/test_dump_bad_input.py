"""``from-dump`` on bad dumps (issue 31, items 1-6): a page that cannot be
read is skipped with its reason and the run goes on; broken XML outside the
pages, a dump cut inside a page, an index that does not match its dump, a
folder another run holds, an output folder that cannot be written: one line
naming the file (and line and column where there is one)."""

from __future__ import annotations

import bz2
import gzip
import json
import os
from pathlib import Path

import pytest
from dump_helpers import TABLES, multistream

from kilt_chunks.cli import main
from kilt_chunks.dump.build import DumpBuildError, build_from_dump
from kilt_chunks.dump.compare import iter_page_file
from kilt_chunks.dump.multistream import (
    MultistreamWriter,
    index_path_for,
    write_multistream_from_export,
)

HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>testwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""
#: A DOCTYPE with a billion-laughs entity and an external one (expat
#: expands neither: the pages that use them are unreadable).
DOCTYPE = """<!DOCTYPE mediawiki [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY ext SYSTEM "file:///etc/passwd">
]>
"""


def page(pid: object, title: str, text: str = "Some text.", ns: object = 0) -> str:
    """One ``<page>`` element as the dumps write it (10 lines)."""
    return (
        f"  <page>\n    <title>{title}</title>\n    <ns>{ns}</ns>\n"
        f"    <id>{pid}</id>\n    <revision>\n      <id>{pid}00</id>\n"
        "      <timestamp>2020-01-01T00:00:00Z</timestamp>\n"
        f'      <text xml:space="preserve">{text}</text>\n'
        "    </revision>\n  </page>\n"
    )


def write(path, *parts: str | bytes, end: str = "</mediawiki>\n"):
    data = b"".join(p if isinstance(p, bytes) else p.encode() for p in parts)
    path.write_bytes(data + end.encode())
    return path


def skipped_lines(out) -> list[dict]:
    return [json.loads(x) for x in (out / "skipped.jsonl").read_text().splitlines()]


def build(dump, out, **options):
    return build_from_dump([dump], out, workers=1, progress_seconds=0, **options)


# -- item 1: unreadable pages, document-level errors, a missing end tag --------


def test_unreadable_pages_are_skipped_with_their_reason(tmp_path):
    dump = write(
        tmp_path / "bad.xml",
        DOCTYPE,
        HEADER,
        page(1, "Alpha"),
        page(2, "Beta", "caf").encode().replace(b"caf<", b"caf\xff\xfe<"),
        page(3, "Gamma", "many &lol2; here"),
        page(4, "Delta", "secret &ext; here"),
        page(5, "Epsilon"),
    )
    manifest = build(dump, tmp_path / "out")
    assert manifest["pages"] == 2
    assert manifest["skipped"] == {"unreadable": 3}
    titles = [p["wikipedia_title"] for p in iter_page_file(tmp_path / "out" / "pages")]
    assert titles == ["Alpha", "Epsilon"]
    # 5 DOCTYPE and 11 header lines, then pages of 10 lines each: Beta
    # starts on line 27, its text on line 34 (Gamma's on 44, Delta's on 54)
    assert skipped_lines(tmp_path / "out") == [
        {
            "page_id": 2,
            "title": "Beta",
            "reason": "unreadable: not well-formed (invalid token)"
            " (line 34 of the file)",
        },
        {
            "page_id": 3,
            "title": "Gamma",
            "reason": "unreadable: undefined entity &lol2; (line 44 of the file)",
        },
        {
            "page_id": 4,
            "title": "Delta",
            "reason": "unreadable: undefined entity &ext; (line 54 of the file)",
        },
    ]


def test_broken_xml_between_pages_is_one_line_with_file_line_and_column(
    tmp_path, capsys
):
    dump = write(tmp_path / "junk.xml", HEADER, page(1, "Alpha"), "  junk <x>\n")
    with pytest.raises(DumpBuildError) as caught:
        build(dump, tmp_path / "out")
    # 11 header lines, 10 of the page: the junk on line 22, column 3
    assert str(caught.value) == (
        f"{dump}: line 22, column 3: text outside any <page>: 'junk <x>\\n</mediawiki>'"
    )
    code = main(["from-dump", str(dump), "--out", str(tmp_path / "o2")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "line 22, column 3" in err


def test_a_dump_cut_inside_a_page_names_the_line(tmp_path):
    dump = write(
        tmp_path / "cut.xml", HEADER, page(1, "Alpha"), page(2, "B")[:60], end=""
    )
    with pytest.raises(DumpBuildError, match=rf"^{dump}: line 22, column 1: the input"):
        build(dump, tmp_path / "out")


def test_a_broken_header_names_line_and_column(tmp_path):
    dump = write(
        tmp_path / "head.xml", HEADER.replace("</sitename>", "</sitenam>"), page(1, "A")
    )
    with pytest.raises(
        DumpBuildError,
        match=rf"^{dump}: broken XML in the header \(<siteinfo>\): mismatched tag,"
        " line 3, column 26$",
    ):
        build(dump, tmp_path / "out")


def test_a_missing_closing_root_tag_is_accepted_with_a_warning(tmp_path, monkeypatch):
    # The lines the run prints (through progress.emit_line: dbt's console
    # logger when one is set up in this process, else stderr), collected
    # where they are emitted so the check does not depend on other tests.
    emitted: list[str] = []
    monkeypatch.setattr("kilt_chunks.dump.build.emit_line", emitted.append)
    dump = write(tmp_path / "open.xml", HEADER, page(1, "Alpha"), page(2, "B"), end="")
    gz = tmp_path / "open.xml.gz"
    gz.write_bytes(gzip.compress(dump.read_bytes()))
    for path in (dump, gz):
        manifest = build(path, tmp_path / f"out-{path.name}")
        assert manifest["pages"] == 2
        assert manifest["warnings"] == [
            f"{path}: no closing </mediawiki> after the last page (2 pages read;"
            " accepted)"
        ]
        assert f"from-dump: warning: {manifest['warnings'][0]}" in emitted
        emitted.clear()


# -- item 2: <ns> or <id> not a number ------------------------------------------


@pytest.mark.parametrize("kind", ["plain", "multistream"])
def test_a_page_whose_ns_or_id_is_not_a_number_is_skipped(tmp_path, kind):
    export = write(
        tmp_path / "ids.xml",
        HEADER,
        page(1, "Alpha"),
        page(2, "Beta", ns="abc"),
        page("abc", "Gamma"),
        page(4, "Delta"),
    )
    dump = export
    if kind == "multistream":  # a page a stream
        dump = tmp_path / "ids-pages-articles-multistream.xml.bz2"
        writer = MultistreamWriter(dump, index_path_for(dump), HEADER, 1)
        for number, text in enumerate(export.read_text().split("  <page>")[1:], 1):
            writer.add_page(
                "  <page>" + text.replace("</mediawiki>\n", ""), number, "t"
            )
        writer.close()
    manifest = build(dump, tmp_path / "out")
    assert manifest["pages"] == 2 and manifest["skipped"] == {"unreadable": 2}
    reasons = [
        (s["page_id"], s["title"], s["reason"]) for s in skipped_lines(tmp_path / "out")
    ]
    if kind == "plain":
        assert reasons == [
            (
                2,
                "Beta",
                "unreadable: <ns> is 'abc', not a number"
                " (the page on line 22 of the file)",
            ),
            (
                None,
                "Gamma",
                "unreadable: <id> is 'abc', not a number"
                " (the page on line 32 of the file)",
            ),
        ]
    else:  # lines counted in the range read
        assert [r[:2] for r in reasons] == [(2, "Beta"), (None, "Gamma")]
        assert "<ns> is 'abc'" in reasons[0][2] and "<id> is 'abc'" in reasons[1][2]
        assert "(the page on line 11 of the streams at bytes " in reasons[0][2]


# -- item 3: two pages with one id ----------------------------------------------


def test_a_duplicate_id_keeps_the_first_and_lists_the_others(tmp_path):
    export = write(
        tmp_path / "dup.xml",
        HEADER,
        page(1, "Alpha"),
        page(2, "Beta"),
        page(1, "Alpha again"),
        page(3, "Gamma"),
    )
    dump = tmp_path / "dup-pages-articles-multistream.xml.bz2"
    write_multistream_from_export(export, dump, index_path_for(dump), 1)
    manifest = build(dump, tmp_path / "out", splits=3)
    pages = list(iter_page_file(tmp_path / "out" / "pages"))
    assert [(p["_id"], p["wikipedia_title"]) for p in pages] == [
        ("1", "Alpha"), ("2", "Beta"), ("3", "Gamma")
    ]  # fmt: skip
    assert manifest["pages"] == 3 == sum(s["pages"] for s in manifest["shards"])
    assert manifest["skipped"] == {"duplicate_id": 1}
    assert manifest["lookup"]["titles"] == 3
    assert skipped_lines(tmp_path / "out") == [
        {
            "page_id": 1,
            "title": "Alpha again",
            "reason": "duplicate_id: page id 1 is also 'Alpha', earlier in the"
            " dump (kept)",
        }
    ]


# -- item 4: an index that does not match its dump --------------------------------


@pytest.fixture(scope="module")
def tables_ms(tmp_path_factory):
    return multistream(tmp_path_factory, TABLES, "tables", 1)


def _index_lines(dump) -> list[str]:
    return bz2.decompress(index_path_for(dump).read_bytes()).decode().splitlines(True)


@pytest.mark.parametrize("case", ["shifted", "other_dump", "stops_early"])
def test_an_index_that_does_not_match_is_one_line_naming_both(
    tmp_path, tables_ms, case
):
    lines = _index_lines(tables_ms)
    if case == "shifted":
        lines = [f"{int(x.split(':')[0]) + 7}:{x.split(':', 1)[1]}" for x in lines]
    elif case == "other_dump":  # the same pages, streams of another size
        lines = [
            f"{int(x.split(':')[0]) // 2 + 40}:{x.split(':', 1)[1]}" for x in lines
        ]
    else:
        lines = lines[:3]
    index = tmp_path / "index.txt"
    index.write_text("".join(lines))
    out = tmp_path / "out"
    with pytest.raises(DumpBuildError) as caught:
        build(tables_ms, out, indexes=[index], splits=2)
    message = str(caught.value)
    assert "\n" not in message
    assert f"the index {index} does not match the dump {tables_ms}" in message
    if case == "stops_early":
        assert message.endswith("hold 3 pages where the index lists 1")
    assert not out.exists()  # nothing half-made is left


# -- item 5: two runs into one folder -----------------------------------------


def test_a_folder_another_run_holds_is_refused_by_name(tmp_path, tables_ms):
    from filelock import FileLock

    out = tmp_path / "busy"
    lock = FileLock(str(tmp_path / ".busy.from-dump.lock"))
    with lock:
        (tmp_path / ".busy.from-dump.pid").write_text("4242")
        with pytest.raises(
            DumpBuildError,
            match=rf"^{out} is being written by another from-dump run \(process 4242\)",
        ):
            build(tables_ms, out)
    assert not out.exists()
    assert build(tables_ms, out)["pages"] == 5  # free again


# -- item 6: output folder, page_props folder, names, leftovers --------------------


def test_an_output_folder_that_cannot_be_made_is_one_line(
    tmp_path, tables_ms, capsys, monkeypatch
):
    afile = tmp_path / "afile"
    afile.write_text("x")
    out = afile / "out"
    with pytest.raises(
        DumpBuildError, match=rf"^{out}: cannot write the output folder"
    ):
        build(tables_ms, out)
    assert main(["from-dump", str(tables_ms), "--out", str(out)]) == 1
    assert capsys.readouterr().err.count("\n") == 1
    # a read-only place: as the system says it (root writes anywhere, so
    # the refusal is made by hand here; a real one below for other users)
    real_mkdir = Path.mkdir

    def refuse(self, *args, **kwargs):
        if "readonly" in str(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", refuse)
    out = tmp_path / "readonly" / "out"
    with pytest.raises(
        DumpBuildError,
        match=rf"^{out}: cannot write the output folder there \(Permission denied\)$",
    ):
        build(tables_ms, out)
    monkeypatch.undo()
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "ro"
        locked.mkdir(mode=0o555)
        with pytest.raises(DumpBuildError, match="cannot write the output folder"):
            build(tables_ms, locked / "out")


def test_a_folder_given_as_page_props_is_refused_clearly(tmp_path, tables_ms):
    with pytest.raises(
        DumpBuildError, match=r"--page-props: .* is a folder: give the file"
    ):
        build(tables_ms, tmp_path / "out", page_props=tmp_path)
    assert not (tmp_path / "out").exists()


def test_a_dump_without_pages_names_the_file_once(tmp_path):
    dump = write(tmp_path / "empty.xml", HEADER)
    with pytest.raises(DumpBuildError) as caught:
        build(dump, tmp_path / "out")
    assert str(caught.value) == f"{dump}: no <page> in its first 4,194,304 bytes"
    assert not (tmp_path / "out").exists()


def test_a_run_failing_before_any_split_leaves_no_empty_folders(tmp_path, tables_ms):
    out = tmp_path / "out"
    index = tmp_path / "index.txt"
    index.write_text("".join(_index_lines(tables_ms))[:-1] + "\n999999999:9:Far\n")
    with pytest.raises(DumpBuildError, match="does not match the dump"):
        build(tables_ms, out, indexes=[index])
    assert not out.exists()


def test_reads_cut_anywhere_give_the_same_pages_and_lines(tmp_path, monkeypatch):
    """The page scanner over reads of 1 to 13 bytes (tags cut at every
    place) finds what one read finds, errors and their lines included."""
    from kilt_chunks.dump import xmlpages

    good = write(tmp_path / "good.xml", HEADER, page(1, "Alpha"), page(2, "B", "x<"))
    junk = write(tmp_path / "junk.xml", HEADER, page(1, "Alpha"), "\n  junk\n")
    expected = list(xmlpages.read_pages(good))
    assert [type(p).__name__ for p in expected] == ["RawPage", "UnreadablePage"]
    for size in range(1, 14):
        monkeypatch.setattr(xmlpages, "_READ", size)
        assert list(xmlpages.read_pages(good)) == expected, size
        with pytest.raises(xmlpages.DumpXmlError, match="^line 23, column 3: text"):
            list(xmlpages.read_pages(junk))
