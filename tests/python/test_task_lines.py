"""Task files are read line by line: a bad line is rejected with its exact
line number and reason, the others are read on (issue 13, item 5)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from conftest import FIXTURES
from kilt_chunks.evaluation.provenance import UNREADABLE_TASKS, read_task_lines

GOOD = {"id": "q", "input": "text", "output": [{"answer": "a", "provenance": []}]}


def line(**fields) -> str:
    return json.dumps({**GOOD, **fields}) + "\n"


def read(spec: str):
    return read_task_lines(spec).read_all()


def reasons(path: Path) -> dict[int, str | None]:
    table = read(str(path))
    return dict(
        zip(
            table.column("line_number").to_pylist(),
            table.column("reject_reason").to_pylist(),
            strict=True,
        )
    )


def test_each_bad_line_is_rejected_with_its_number(tmp_path: Path) -> None:
    path = tmp_path / "bad-dev-kilt.jsonl"
    lines = [
        line(id="q1"),
        line(id="q2", output={"answer": "an object"}),
        line(id=" q 3 "),
        '{"id": "q4", "input": "trunc',
        "\n",
        line(id="q6", input=["not", "text"]),
        line(id="q7", output=[{"answer": {"a": 1}}]),
        line(id="q8", output=[{"answer": "a", "provenance": {"x": 1}}]),
        line(id="q9", output=[{"answer": "a", "provenance": [3]}]),
        line(
            id="q10",
            output=[{"provenance": [{"wikipedia_id": "1", "start_character": "5"}]}],
        ),
        line(id="q1"),
        "[1, 2]\n",
        line(id=11),
        line(id={"x": 1}),
        line(id="q15", input=None),
    ]
    text = "".join(s if s.endswith("\n") else s + "\n" for s in lines)
    path.write_bytes(text.encode() + b'{"id": "q16", "input": "\xff"}\n')
    assert reasons(path) == {
        1: None,
        2: "output is object, not a list",
        3: None,  # white space inside an id is kept (AIDA: "947testa CRICKET")
        4: "invalid JSON (truncated or malformed line)",
        5: "empty line",
        6: "input is array, not a string",
        7: "an output answer is object, not a string",
        8: "an output provenance is object, not a list",
        9: "a provenance entry is ubigint, not a JSON object",
        10: "a provenance offset is varchar, not a whole number",
        11: "duplicate id (first on line 1)",
        12: "line is not a JSON object",
        13: None,  # an integer id is taken as its text
        14: "id is object, not a string",
        15: "missing input",
        16: "invalid UTF-8 bytes",
    }
    table = read(str(path))
    assert table.column("query_id").to_pylist()[12] == "11"


def test_line_numbers_stay_exact_across_blocks_and_gzip(tmp_path: Path) -> None:
    """The reader parses 2,048 lines at a time: bad lines at the start, in the
    middle, after line 2,048 and at the end (no final newline)."""
    bad = {1, 1000, 2049, 2050, 4100}
    rows = ["not json\n" if n in bad else line(id=f"q{n}") for n in range(1, 4101)]
    text = "".join(rows).rstrip("\n")
    path = tmp_path / "big-dev-kilt.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    found = reasons(path)
    assert len(found) == 4100
    assert {n for n, r in found.items() if r} == bad


def test_unreadable_input_is_one_row_naming_it(tmp_path: Path) -> None:
    (row,) = read(str(tmp_path / "missing.jsonl")).to_pylist()
    assert row["reject_reason"] == (
        UNREADABLE_TASKS + f"kilt_tasks {str(tmp_path / 'missing.jsonl')!r}: no KILT"
        " task file there (a .jsonl/.json file, a folder of them, or a glob)"
    )
    broken = tmp_path / "cut-dev-kilt.jsonl.gz"
    broken.write_bytes(
        gzip.compress(("".join(line(id=f"q{n}") for n in range(3000))).encode())[:-40]
    )
    *_, row = read(str(broken)).to_pylist()
    assert row["reject_reason"].startswith(
        UNREADABLE_TASKS + f"kilt_tasks file {broken}, after line "
    )
    assert read("").num_rows == 0


def test_the_bundled_task_has_three_bad_lines() -> None:
    found = reasons(FIXTURES / "kilt_tasks" / "handmade-dev-kilt.jsonl")
    assert {n: r for n, r in found.items() if r} == {
        12: "output is object, not a list",
        13: "id is empty",
        14: "invalid JSON (truncated or malformed line)",
    }


def test_ids_are_read_as_kilt_compares_them(tmp_path: Path) -> None:
    """KILT's scorer compares str(id).strip(): ids are trimmed of white space
    (Python's str.strip set: no-break and ideographic spaces too), inner
    white space is kept (AIDA-CoNLL's "947testa CRICKET"), ids equal after
    trimming are duplicates, an id of white space only is empty; a null
    wikipedia_id no longer rejects the line (KILT reads it as "None"; the
    provenance checks reject that entry, `no wikipedia_id`)."""
    path = tmp_path / "ids-dev-kilt.jsonl"
    null_id = [{"provenance": [{"wikipedia_id": None}, {"wikipedia_id": "39"}]}]
    path.write_text(
        line(id=" 947testa CRICKET ")
        + line(id="\u00a077\u3000")
        + line(id="77")
        + line(id=" \t")
        + line(id="q5", output=null_id)
    )
    table = read(str(path))
    assert table.column("query_id").to_pylist() == [
        "947testa CRICKET",
        "77",
        "77",
        "",
        "q5",
    ]
    assert table.column("reject_reason").to_pylist() == [
        None,
        None,
        "duplicate id (first on line 2)",
        "id is empty",
        None,
    ]
    provenance = table.column("output").to_pylist()[4][0]["provenance"]
    assert [e["wikipedia_id"] for e in provenance] == [None, "39"]


def test_a_zstd_task_file_reads_like_the_plain_one(tmp_path: Path) -> None:
    """Issue 23: `.zst` task files were documented as accepted but read as
    raw bytes (every line rejected as invalid UTF-8). They are decompressed
    (pyarrow's Zstandard codec), the same lines with the same numbers."""
    import pyarrow as pa

    text = "".join(line(id=f"q{n}") for n in range(1, 3001)) + "not json\n"
    plain = tmp_path / "plain" / "t-dev-kilt.jsonl"
    packed = tmp_path / "packed" / "t-dev-kilt.jsonl.zst"
    plain.parent.mkdir()
    packed.parent.mkdir()
    plain.write_text(text, encoding="utf-8")
    with pa.output_stream(str(packed), compression="zstd") as out:
        out.write(text.encode("utf-8"))
    found = reasons(packed)
    assert found == reasons(plain)
    assert len(found) == 3001
    assert [n for n, r in found.items() if r] == [3001]
