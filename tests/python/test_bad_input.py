"""Bad input: every line gets a verdict, and nothing is lost silently.

Policy (README "When input is bad"): a line that cannot be a page is rejected
with a reason in `kilt_rejected_pages` and the build goes on; a file that cannot
be read (missing, empty, invalid UTF-8, truncated gzip) stops the build with a
message naming the file, the line where known, and the problem.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from llama_index.core.utils import get_tokenizer

from conftest import SAMPLE_JSONL, Build, failed_dbt_build, run_dbt_build

#: Every test of this module runs dbt (make test-fast leaves them out).
pytestmark = pytest.mark.dbt


def _page(page_id: str, title: str, text: object, /, **extra: object) -> str:
    page = {
        "_id": page_id,
        "wikipedia_id": page_id,
        "wikipedia_title": title,
        "text": text,
        "anchors": [],
        "categories": "Tests",
        "history": {
            "revid": 1000 + int(page_id),
            "parentid": 999,
            "pageid": int(page_id),
            "timestamp": "2019-07-01T00:00:00Z",
            "url": f"https://en.wikipedia.org/w/index.php?oldid={1000 + int(page_id)}",
            "pre_dump": True,
        },
        "wikidata_info": {"wikidata_id": f"Q{page_id}"},
    }
    page.update(extra)
    return json.dumps(
        {k: v for k, v in page.items() if v is not ...}, ensure_ascii=False
    )


SCRIPTS = [
    "Section::::Scripts.\n",
    "Москва — столица России. Это крупнейший город страны.\n",
    "東京は日本の首都である。人口は約1400万人。\n",
    "القاهرة هي عاصمة مصر. وهي أكبر مدينة في العالم العربي.\n",
    "Family: 👨\u200d👩\u200d👧\u200d👦 and flags 🇫🇷🇩🇪.\n",
]
NO_SPACES = "x" * 1_000_000 + "\n"

# (line, expected reject reason or None) in file order.
LINES: list[tuple[str, str | None]] = [
    (_page("100", "Good", ["Good\n", "Lead.\n", *SCRIPTS]), None),
    (
        '{"wikipedia_id": "101", "text": ["A\\n", ',
        "invalid JSON (truncated or malformed line)",
    ),
    (_page("102", "No text", ...), "missing text"),
    (_page("103", "Text string", "just a string"), "text is not a list"),
    (
        _page("104", "Null paragraph", ["T\n", None]),
        "paragraph 1 is null, not a string",
    ),
    (
        _page("105", "Number paragraph", ["T\n", "ok\n", 5]),
        "paragraph 2 is ubigint, not a string",
    ),
    (_page("106", "No id", ["T\n", "x\n"], wikipedia_id=...), "missing wikipedia_id"),
    (_page("107", "x", ["T\n", "x\n"], wikipedia_title=...), "missing wikipedia_title"),
    (_page("108", "No history", ["No history\n", "Body.\n"], history=...), None),
    (
        _page(
            "109",
            "String revid",
            ["String revid\n", "Body.\n"],
            history={"revid": "716551092", "pageid": "abc", "parentid": None},
        ),
        None,
    ),
    (
        _page(
            "110", "Null wikidata", ["Null wikidata\n", "Body.\n"], wikidata_info=None
        ),
        None,
    ),
    (
        _page("100", "Good again", ["Good again\n", "Other.\n"]),
        "duplicate wikipedia_id",
    ),
    (_page("111", "Only title", ["Only title\n"]), None),
    (
        _page(
            "112",
            "All empty",
            ["All empty\n", "Section::::A.\n", "\n", "Section::::B.\n", " \u00a0\n"],
        ),
        None,
    ),
    (_page("113", "No spaces", ["No spaces\n", NO_SPACES]), None),
    # Issue 21 item 3: ids that are empty or hold white space (" 77" beside a
    # loaded "77" too) are rejected, not turned into chunk ids with spaces.
    (_page("77", "Seventy-seven", ["Seventy-seven\n", "Body.\n"]), None),
    (_page("78", "Empty id", ["E\n", "x\n"], wikipedia_id=""), "wikipedia_id is empty"),
    *[
        (
            _page("79", "Spaced id", ["S\n", "x\n"], wikipedia_id=spaced),
            "wikipedia_id holds white space",
        )
        for spaced in ("  ", "12 34", " 77", "77 ", "77\u00a0")
    ],
    # Item 4: history ids in other notations are not converted, and counted.
    (
        _page(
            "115",
            "Odd history",
            ["Odd history\n", "Body.\n"],
            history={"revid": "0x1F", "pageid": "1e3", "parentid": "012"},
        ),
        None,
    ),
]
TRUNCATED_LAST_LINE = (
    '{"wikipedia_id": "114", "wikipedia_title": "Cut", "text": ["Cut\\n", "abc'
)


@pytest.fixture(scope="module")
def bad_lines_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    workdir = tmp_path_factory.mktemp("bad_lines")
    path = workdir / "bad_lines.jsonl"
    body = "".join(line + "\n" for line, _ in LINES) + TRUNCATED_LAST_LINE
    # Issue 21 item 1: a UTF-8 byte order mark before line 1 (page 100).
    path.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    return run_dbt_build(workdir, path, extra_vars={"export_dir": ""})


def test_each_bad_line_is_rejected_with_its_reason(bad_lines_build: Build) -> None:
    rejected = bad_lines_build.query(
        "select line_number, reject_reason from kilt_rejected_pages order by 1"
    )
    expected = [
        (number, reason)
        for number, (_, reason) in enumerate(LINES, start=1)
        if reason is not None
    ] + [(len(LINES) + 1, "invalid JSON (truncated or malformed line)")]
    assert [n for n, _ in rejected] == [n for n, _ in expected]
    for (_, got), (_, want) in zip(rejected, expected, strict=True):
        assert got.startswith(want), (got, want)
    (duplicate,) = [r for n, r in rejected if n == 12]
    assert "first seen in" in duplicate and "line 1)" in duplicate


def test_every_line_is_accounted_for(bad_lines_build: Build) -> None:
    (audit,) = bad_lines_build.query(
        "select lines_read, pages_loaded, pages_chunked, pages_without_text,"
        " pages_rejected, pages_duplicate from kilt_load_audit"
    )
    assert audit == (24, 9, 7, 2, 15, 1)
    pages = {
        row[0]
        for row in bad_lines_build.query(
            "select distinct wikipedia_id from kilt_chunks"
        )
    }
    assert pages == {"100", "108", "109", "110", "113", "77", "115"}


def test_a_byte_order_mark_before_line_1_keeps_that_page(
    bad_lines_build: Build,
) -> None:
    """Issue 21 item 1: page 100 is line 1, after a BOM."""
    assert bad_lines_build.query(
        "select count(*) from kilt_rejected_pages where line_number = 1"
    ) == [(0,)]
    assert bad_lines_build.query(
        "select distinct wikipedia_title from kilt_chunks where wikipedia_id = '100'"
    ) == [("Good",)]


def test_ids_with_white_space_never_reach_chunk_ids(bad_lines_build: Build) -> None:
    """Issue 21 item 3: no chunk id, doc id or wikipedia_id holds white space
    or is empty; the one page "77" is chunked once."""
    assert bad_lines_build.query(
        "select count(*) from kilt_chunks where regexp_matches(chunk_id || doc_id"
        " || wikipedia_id, '\\s|\\x{a0}') or wikipedia_id = ''"
    ) == [(0,)]
    assert bad_lines_build.query(
        "select distinct wikipedia_title from kilt_chunks where wikipedia_id = '77'"
    ) == [("Seventy-seven",)]
    assert bad_lines_build.query(
        "select wikipedia_id, reject_reason from kilt_rejected_pages"
        " where reject_reason like 'wikipedia_id%' order by line_number"
    ) == [
        ("", "wikipedia_id is empty"),
        ("  ", "wikipedia_id holds white space"),
        ("12 34", "wikipedia_id holds white space"),
        (" 77", "wikipedia_id holds white space"),
        ("77 ", "wikipedia_id holds white space"),
        ("77\u00a0", "wikipedia_id holds white space"),
    ]


def test_rejected_lines_are_a_warning_in_dbt_output(bad_lines_build: Build) -> None:
    """Issue 21 item 15: a file with bad lines ended `PASS=160 WARN=0`; the
    rejected lines are now counted in dbt's own output as a warning."""
    assert "WARN 15 warn_on_rejected_input_lines" in bad_lines_build.output
    assert bad_lines_build.returncode == 0


def test_first_of_duplicates_is_kept(bad_lines_build: Build) -> None:
    assert bad_lines_build.query(
        "select distinct wikipedia_title from kilt_chunks where wikipedia_id = '100'"
    ) == [("Good",)]


def test_history_and_wikidata_problems_give_nulls(bad_lines_build: Build) -> None:
    rows = bad_lines_build.query(
        "select distinct wikipedia_id, pageid, parentid, revid, timestamp, url,"
        " wikidata_id from kilt_chunks where wikipedia_id in ('108', '109', '110')"
        " order by 1"
    )
    # Issue 21 item 4: "0x1F" and "1e3" were read as 31 and 1000 and not
    # counted; only decimal text is parsed ("012" is 12).
    assert bad_lines_build.query(
        "select distinct pageid, parentid, revid from kilt_chunks"
        " where wikipedia_id = '115'"
    ) == [(None, "12", None)]
    assert rows == [
        ("108", None, None, None, None, None, "Q108"),
        ("109", None, None, "716551092", None, None, "Q109"),
        (
            "110",
            "110",
            "999",
            "1110",
            "2019-07-01T00:00:00Z",
            "https://en.wikipedia.org/w/index.php?oldid=1110",
            None,
        ),
    ]
    # The pageid "abc" became NULL: counted per field in the audit, shown by
    # the summary, and a dbt warning (the build still succeeds).
    assert bad_lines_build.query(
        "select pageid_coerced, parentid_coerced, revid_coerced from kilt_load_audit"
    ) == [(2, 0, 1)]
    assert "WARN 1 no_history_id_coerced_to_null" in bad_lines_build.output
    from kilt_chunks.cli import build_summary

    summary = build_summary(str(bad_lines_build.db_path))
    assert "pageid not an integer      2  (stored as NULL)" in summary


def test_non_latin_scripts_and_emoji_survive(bad_lines_build: Build) -> None:
    (text,) = bad_lines_build.query(
        "select text from kilt_chunks"
        " where wikipedia_id = '100' and section = ['Scripts']"
    )[0]
    assert text == "".join(SCRIPTS[1:]).strip()


def test_one_megabyte_without_spaces_splits_within_limit(
    bad_lines_build: Build,
) -> None:
    chunks = [
        row[0]
        for row in bad_lines_build.query(
            "select text from kilt_chunks"
            " where wikipedia_id = '113' order by chunk_order"
        )
    ]
    assert "".join(chunks) == NO_SPACES.strip()
    tokenize = get_tokenizer()  # tiktoken cl100k_base from LlamaIndex's cache
    assert max(len(tokenize(c)) for c in chunks) <= 256
    assert len(chunks) > 3000


def test_unreadable_input_stops_the_build_with_one_line(tmp_path: Path) -> None:
    """The loader's marker row stops the build through the load step's
    post-hook, with the plain message and no traceback. (Each kind of
    unreadable input, missing, empty or a truncated gzip file, is checked on
    the reader itself in test_loading.)"""
    output = failed_dbt_build(tmp_path, tmp_path / "missing.jsonl")
    assert "missing.jsonl': no such file or directory" in output


def test_bad_bytes_are_rejected_line_by_line_and_the_build_goes_on(
    tmp_path: Path,
) -> None:
    """Invalid UTF-8 and raw carriage returns in a line (they used to stop
    the whole build) are rejected with their file, line and reason, past the
    reader's first block too; every other page is chunked."""
    bad = tmp_path / "bad_bytes.jsonl"
    lines = [
        _page(str(i), f"P{i}", [f"P{i}\n", "Body.\n"]).encode() for i in range(1, 2_101)
    ]
    lines[1] = b'{"wikipedia_id": "x", "text": ["\xff\xfe"]}'
    lines[2_059] = (
        _page("9999", "CR", ["CR\n", "a\rb\n"]).encode().replace(b"\\r", b"\r")
    )
    bad.write_bytes(b"\n".join(lines) + b"\r\n")
    build = run_dbt_build(
        tmp_path, bad, extra_vars={"export_dir": ""}, data_tests=False
    )
    assert build.query(
        "select line_number, reject_reason from kilt_rejected_pages"
    ) == [
        (2, "invalid UTF-8 bytes"),
        (2_060, "invalid JSON (truncated or malformed line)"),
    ]
    assert build.query(
        "select lines_read, pages_chunked, pages_rejected from kilt_load_audit"
    ) == [(2_100, 2_098, 2)]


def test_directory_of_shards_builds_like_one_file(
    tmp_path: Path, sample_build: Build
) -> None:
    lines = SAMPLE_JSONL.read_text(encoding="utf-8").splitlines(keepends=True)
    shards = tmp_path / "shards"
    shards.mkdir()
    for i in range(0, len(lines), 40):
        (shards / f"part-{i // 40:03d}.jsonl").write_text("".join(lines[i : i + 40]))
    gz = shards / "part-009.jsonl.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write("")  # an empty gzip shard is fine: other shards have pages
    build = run_dbt_build(
        tmp_path / "build", shards, extra_vars={"export_dir": ""}, data_tests=False
    )
    ordered = "select * from kilt_chunks order by chunk_id"
    assert build.query(ordered) == sample_build.query(ordered)
    shutil.rmtree(shards)


def test_dbt_commands_besides_build_never_read_the_input(
    tmp_path: Path, bad_lines_build: Build
) -> None:
    """Only the loader model reads kilt_path: dbt ls, show and docs generate
    (which compiles every node, as `dbt compile` does) succeed with a
    kilt_path that does not exist (reading it would stop them), and leave the
    built corpus as it was (a copy of the bad lines' build)."""
    from conftest import dbt_command, dbt_env, invoke_dbt_in_process

    build = Build(tmp_path / "kilt_chunks.duckdb", tmp_path / "exports", 0, "")
    shutil.copyfile(bad_lines_build.db_path, build.db_path)
    audit_sql = "select * from kilt_load_audit"
    rejected_sql = "select * from kilt_rejected_pages order by line_number"
    audit, rejected = build.query(audit_sql), build.query(rejected_sql)
    assert len(audit) == 1 and len(rejected) == 15
    variables = {"kilt_path": str(tmp_path / "gone.jsonl"), "export_dir": ""}
    for command in (
        ["ls"],
        ["docs", "generate"],
        ["show", "--inline", "select count(*) as n from kilt_chunks"],
    ):
        cmd = dbt_command(tmp_path, variables)
        cmd[1:2] = command
        returncode, output = invoke_dbt_in_process(cmd, dbt_env(tmp_path))
        assert returncode == 0, (command, output[-3000:])
        assert "no such file or directory" not in output
    # A model that reads the loaded pages, removed with the scratch database
    # after the build succeeded: one line on how to get them back.
    cmd = dbt_command(tmp_path, variables)
    cmd[1:2] = ["show", "--select", "stg_kilt__pages"]
    returncode, output = invoke_dbt_in_process(cmd, dbt_env(tmp_path))
    assert returncode != 0
    assert "Catalog Error" not in output
    assert (
        "the loaded pages (kilt_scratch.main.kilt_pages) are gone: a successful "
        "build removes the scratch database; run the whole build (dbt build), "
        "with --vars '{keep_scratch: true}' to keep them after it"
    ) in output
    assert build.query(audit_sql) == audit
    assert build.query(rejected_sql) == rejected


def test_chunks_are_never_cut_from_sections_rebuilt_from_another_input(
    tmp_path: Path,
) -> None:
    """With the scratch database kept, a partial build can reload a changed
    input and rebuild the sections after the chunking step ran: kilt_chunks
    then finds a section text other than the one its offsets were cut from
    (the per-section hash) and stops, instead of cutting the new text at the
    old offsets. The whole build is right again."""
    path = tmp_path / "pages.jsonl"
    first = _page("1", "First", ["First\n", "Body one. " * 40 + "\n"])
    path.write_text(first + "\n", encoding="utf-8")
    keep = {"export_dir": "", "keep_scratch": True}
    run_dbt_build(tmp_path, path, extra_vars=keep, data_tests=False)
    changed = _page("1", "First", ["First\n", "Other words. " * 40 + "\n"])
    path.write_text(changed + "\n", encoding="utf-8")
    reloaded = run_dbt_build(
        tmp_path,
        path,
        extra_vars=keep,
        select="base_kilt__pages int_sections_assembled int_paragraphs_classified",
        data_tests=False,
    )
    assert reloaded.query("select is_reused from kilt_scratch.base_kilt__pages") == [
        (False,)
    ]
    partial = run_dbt_build(
        tmp_path, path, extra_vars=keep, select="path:models/marts", check=False
    )
    assert partial.returncode != 0
    assert "is not the text int_sections_chunked cut its chunks from" in (
        partial.output
    )
    whole = run_dbt_build(
        tmp_path, path, extra_vars={"export_dir": ""}, data_tests=False
    )
    assert whole.query("select distinct wikipedia_id from kilt_chunk_spans") == [("1",)]
    assert whole.query("select text like 'Other words.%' from kilt_chunks") == [(True,)]
    assert not (tmp_path / "kilt_chunks.duckdb.scratch").exists()
