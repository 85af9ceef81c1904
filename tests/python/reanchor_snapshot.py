"""An edited snapshot of the bundled sample and a task file on it, for reanchor.

:func:`write_snapshot` writes, from ``data/kilt_enwiki2016_sample.jsonl``, a
folder in the layout of a ``from-dump`` output (``pages/`` shard,
``redirects.parquet``, ``manifest.json``) after realistic edits:

* Albedo (39): two paragraphs inserted after the lead (one repeats a lead
  sentence), a paragraph deleted, sentences reworded (one keeping its facts,
  one changing a number, one changing a short phrase), white space and
  typography changed, ``formula_N`` renumbered, a list marker changed, a
  section renamed, a section moved, a paragraph rewritten;
* Aa River (696) renamed "Aa (river)" (same id, redirect from the old title);
* Actrius (330) deleted and re-created as "Actresses (film)" with a new id,
  the old title redirecting to it;
* Alain Connes (340) deleted;
* Astronomer (580) merged into Astronaut (664): one paragraph moved there,
  the old title redirecting to it;
* a paragraph of Ampere (772) moved to Atomic number (673), nothing leading
  there from Ampere.

:func:`write_tasks` writes a KILT task file with one query per case and
:data:`EXPECTED` says, by hand, what each span must become: its status and,
when it survives, the page and the exact new text it must point at.

Run as a script to write both: ``python tests/python/reanchor_snapshot.py OUT``.
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "kilt_enwiki2016_sample.jsonl"

INSERTED = [
    "Albedo is a key quantity of the Earth's energy budget.\n",
    "The albedo is an important concept in climatology, astronomy, and calculating"
    " reflectivity of surfaces in LEED sustainable-rating systems for buildings."
    " It is measured with pyranometers.\n",
]
REWORDED_OLD = (
    "Earth's surface albedo is regularly estimated via Earth observation satellite"
    " sensors such as NASA's MODIS instruments on board the Terra and Aqua satellites."
)
REWORDED_NEW = (
    "Earth's surface albedo is estimated regularly through Earth observation"
    " satellite sensors such as NASA's MODIS instruments aboard the Terra and Aqua"
    " satellites."
)
FACT_OLD = "is currently about 15 °C."
FACT_NEW = "is currently about 14.9 °C."
SHORT_OLD = "one of the darkest substances"
SHORT_NEW = "one of the darkest materials"
MOON_OLD = "around 0.136, but it is strongly directional and non-Lambertian, displaying"
MOON_NEW = (
    "around\u00a00.136 , but it is strongly  directional and non\u2011Lambertian,"
    " displaying"
)
REWRITTEN_38 = (
    "Clothing colour matters on a sunny day: black garments warm up while white"
    " ones stay cool.\n"
)
MERGED_HEADING = "Section::::Astronomers.\n"


def read_sample() -> dict[str, dict]:
    """The sample's pages by id (input order kept)."""
    with SAMPLE.open(encoding="utf-8") as lines:
        pages = [json.loads(line) for line in lines]
    return {p["wikipedia_id"]: p for p in pages}


def _albedo(page: dict) -> dict:
    t = list(page["text"])
    t[4] = t[4]  # unchanged (Q1)
    t[8] = t[8].replace(SHORT_OLD, SHORT_NEW)
    assert REWORDED_OLD in t[9] and FACT_OLD in t[10]
    t[9] = t[9].replace(REWORDED_OLD, REWORDED_NEW)
    t[10] = t[10].replace(FACT_OLD, FACT_NEW)
    t[16] = "Section::::Albedo in astronomy.\n"
    assert MOON_OLD in t[19]
    t[19] = t[19].replace(MOON_OLD, MOON_NEW)
    for n in (9, 8, 7):  # a formula inserted earlier: renumbered
        t[24] = t[24].replace(f"formula_{n}", f"formula_{n + 1}")
    t[55] = t[55].replace("BULLET::::- ", "BULLET::::1. ", 1)
    t[38] = REWRITTEN_38
    moved = t[61:63]  # "Other types of albedo" heading and paragraph
    rest = t[:61] + t[63:]
    rest = rest[:25] + moved + rest[25:]  # before "Examples of ..."
    del rest[6]  # "The term was introduced into optics ..."
    text = rest[:2] + INSERTED + rest[2:]
    return {**page, "text": text}


def edited_pages() -> tuple[list[dict], list[tuple[str, str]]]:
    """The new snapshot's pages and its redirects (old title, new title)."""
    pages = read_sample()
    new = copy.deepcopy(pages)
    new["39"] = _albedo(pages["39"])
    new["696"]["wikipedia_title"] = "Aa (river)"
    new["696"]["text"] = ["Aa (river)\n", *pages["696"]["text"][1:]]
    actrius = new.pop("330")
    actrius.update(
        _id="900330",
        wikipedia_id="900330",
        wikipedia_title="Actresses (film)",
        text=["Actresses (film)\n", *actrius["text"][1:]],
    )
    new["900330"] = actrius
    del new["340"]
    astronomer = new.pop("580")
    new["664"]["text"] = [
        *new["664"]["text"],
        MERGED_HEADING,
        astronomer["text"][4],
    ]
    moved = new["772"]["text"].pop(10)
    new["673"]["text"] = [*new["673"]["text"], moved]
    redirects = [
        ("Aa River", "Aa (river)"),
        ("Actrius", "Actresses (film)"),
        ("Astronomer", "Astronaut"),
    ]
    return list(new.values()), redirects


def write_snapshot(out: Path) -> Path:
    """Write the edited snapshot as a ``from-dump`` output folder ``out``."""
    pages, redirects = edited_pages()
    (out / "pages").mkdir(parents=True, exist_ok=True)
    shard = out / "pages" / "part-00000-of-00001.jsonl.gz"
    with gzip.open(shard, "wt", encoding="utf-8") as f:
        for page in pages:
            f.write(json.dumps(page, ensure_ascii=False) + "\n")
    ids = {p["wikipedia_title"]: p["wikipedia_id"] for p in pages}
    pq.write_table(
        pa.table(
            {
                "title": [old for old, _ in redirects],
                "target": [new for _, new in redirects],
                "page_id": pa.array(range(1_000_000, 1_000_000 + len(redirects))),
                "wikipedia_title": [new for _, new in redirects],
                "wikipedia_id": [ids[new] for _, new in redirects],
            }
        ),
        out / "redirects.parquet",
    )
    (out / "manifest.json").write_text(
        json.dumps({"fixture": "tests/python/reanchor_snapshot.py"}) + "\n"
    )
    return out


def _span(
    pages: dict, page_id: str, paragraph: int, text: str, end_par=None, end_text=None
):
    """Provenance whose evidence is ``text`` in ``paragraph`` (or from ``text``
    at the end of ``paragraph`` to ``end_text`` at the start of ``end_par``)."""
    page = pages[page_id]
    par = page["text"][paragraph]
    start = par.index(text)
    if end_par is None:
        end_par, end = paragraph, start + len(text)
    else:
        assert page["text"][end_par].startswith(end_text)
        end = len(end_text)
    return {
        "wikipedia_id": page_id,
        "title": page["wikipedia_title"],
        "section": None,
        "start_paragraph_id": paragraph,
        "start_character": start,
        "end_paragraph_id": end_par,
        "end_character": end,
        "bleu_score": 1.0,
    }


def _sentence(paragraph: str) -> str:
    """The paragraph's first sentence (up to its first ". "), or all of it."""
    end = paragraph.find(". ")
    return paragraph[: end + 1] if end >= 0 else paragraph


def _page(pages: dict, page_id: str) -> dict:
    return {"wikipedia_id": page_id, "title": pages[page_id]["wikipedia_title"]}


#: Per query, per output, per provenance entry: the hand-made verdict
#: ``(status, new page id, new text)``; new text None for a page-level entry
#: or a lost one. The new text is looked up in the edited page by the test.
EXPECTED: dict[str, list[list[tuple[str, str | None, str | None]]]] = {}


def task_lines() -> list[str]:
    """The task file's lines (one is not JSON), and fills :data:`EXPECTED`."""
    pages = read_sample()
    albedo = pages["39"]["text"]
    cases: list[tuple[str, str, list[tuple[str, list[tuple[dict, tuple]]]]]] = []

    def case(qid: str, *outputs: tuple[str, list[tuple[dict, tuple]]]) -> None:
        cases.append((qid, f"question {qid}", list(outputs)))

    s4 = "Albedo depends on the frequency of the radiation."
    s5 = _sentence(albedo[5])
    case("ra-shifted", ("a", [(_span(pages, "39", 4, s4), ("exact", "39", s4))]))
    case("ra-duplicate", ("a", [(_span(pages, "39", 5, s5), ("exact", "39", s5))]))
    case(
        "ra-deleted-par",
        ("a", [(_span(pages, "39", 6, albedo[6]), ("lost_text", None, None))]),
    )
    case(
        "ra-reworded",
        (
            "NASA's MODIS instruments",
            [(_span(pages, "39", 9, REWORDED_OLD), ("fuzzy", "39", REWORDED_NEW))],
        ),
    )
    fact = _sentence(albedo[10])
    case(
        "ra-fact-changed",
        ("about 15 °C", [(_span(pages, "39", 10, fact), ("lost_text", None, None))]),
    )
    new24 = albedo[24]
    for n in (9, 8, 7):
        new24 = new24.replace(f"formula_{n}", f"formula_{n + 1}")
    case(
        "ra-formula",
        ("a", [(_span(pages, "39", 24, albedo[24]), ("normalised", "39", new24))]),
    )
    moon = albedo[19].split(" effect.")[0] + " effect."
    case(
        "ra-typography",
        (
            "0.136",
            [
                (
                    _span(pages, "39", 19, moon),
                    ("normalised", "39", moon.replace(MOON_OLD, MOON_NEW)),
                )
            ],
        ),
    )
    other = _sentence(albedo[62])
    case(
        "ra-moved-section",
        ("a", [(_span(pages, "39", 62, other), ("exact", "39", other))]),
    )
    cross = _span(pages, "39", 17, albedo[17][583:], 18, albedo[18][:27])
    case(
        "ra-renamed-section",
        ("Enceladus", [(cross, ("exact", "39", albedo[17][583:] + albedo[18][:27]))]),
    )
    case(
        "ra-list-marker",
        (
            "Aerosol direct effect",
            [
                (
                    _span(pages, "39", 55, albedo[55]),
                    (
                        "normalised",
                        "39",
                        albedo[55].replace("BULLET::::- ", "BULLET::::1. "),
                    ),
                )
            ],
        ),
    )
    s38 = _sentence(albedo[38])
    case(
        "ra-rewritten-par",
        ("a", [(_span(pages, "39", 38, s38), ("lost_text", None, None))]),
    )
    case(
        "ra-short",
        ("charcoal", [(_span(pages, "39", 8, SHORT_OLD), ("lost_text", None, None))]),
    )
    tail, head = albedo[42][-50:], albedo[43][:60]
    case(
        "ra-cross-paragraphs",
        ("a", [(_span(pages, "39", 42, tail, 43, head), ("exact", "39", tail + head))]),
    )
    aa = "formerly called the Große Aa"
    case(
        "ra-renamed-page",
        ("Große Aa", [(_span(pages, "696", 7, aa), ("exact", "696", aa))]),
        ("Aa River", [(_page(pages, "696"), ("page", "696", None))]),
    )
    actrius = _sentence(pages["330"]["text"][3])
    case(
        "ra-recreated-page",
        ("a", [(_span(pages, "330", 3, actrius), ("exact", "900330", actrius))]),
    )
    case(
        "ra-deleted-page",
        (
            "a",
            [
                (
                    _span(pages, "340", 3, "Alain Connes studies operator algebras."),
                    ("lost_page", None, None),
                )
            ],
        ),
        ("Alain Connes", [(_page(pages, "340"), ("lost_page", None, None))]),
    )
    merged = _sentence(pages["580"]["text"][4])
    case(
        "ra-merged", ("a", [(_span(pages, "580", 4, merged), ("exact", "664", merged))])
    )
    not_merged = _sentence(pages["580"]["text"][9])
    case(
        "ra-merged-lost",
        ("a", [(_span(pages, "580", 9, not_merged), ("lost_text", None, None))]),
    )
    ampere = pages["772"]["text"][10].split("; ")[0]
    case(
        "ra-moved-text",
        ("a", [(_span(pages, "772", 10, ampere), ("lost_text", None, None))]),
    )
    s20 = albedo[20].split(" (measuring")[0]
    case(
        "ra-partial-set",
        (
            "a",
            [
                (_span(pages, "39", 4, s4), ("exact", "39", s4)),
                (_span(pages, "340", 1, "Alain Connes"), ("lost_page", None, None)),
            ],
        ),
        ("b", [(_span(pages, "39", 20, s20), ("exact", "39", s20))]),
    )
    bad = {
        **_span(pages, "39", 4, s4),
        "start_paragraph_id": 500,
        "end_paragraph_id": 500,
    }
    case("ra-bad-offsets", ("a", [(bad, ("invalid", None, None))]))

    lines = []
    EXPECTED.clear()
    for qid, question, outputs in cases:
        record = {
            "id": qid,
            "input": question,
            "output": [
                {"answer": answer, "provenance": [entry for entry, _ in entries]}
                for answer, entries in outputs
            ],
        }
        EXPECTED[qid] = [[verdict for _, verdict in entries] for _, entries in outputs]
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    lines.insert(5, '{"id": "ra-not-json", "input": \n')
    return lines


#: The report's counts for the task file, counted by hand from the cases above.
HAND_COUNTS = {
    "lines": 22,
    "not_queries": 1,
    "queries": 21,
    "spans": 23,
    "spans_exact": 10,
    "spans_normalised": 3,
    "spans_fuzzy": 1,
    "spans_lost_page": 2,
    "spans_lost_text": 6,
    "spans_invalid": 1,
    "page_entries": 2,
    "page_entries_mapped": 1,
    "page_entries_lost_page": 1,
    "evidence_sets": 24,
    "evidence_sets_kept": 14,
    "evidence_sets_dropped": 10,
    "queries_with_evidence": 21,
    "queries_left_without_evidence": 8,
}


def write_tasks(path: Path) -> Path:
    """Write the task file (``reanchor-dev-kilt.jsonl``) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(task_lines()), encoding="utf-8")
    return path


if __name__ == "__main__":
    out = Path(sys.argv[1])
    write_snapshot(out / "snapshot")
    write_tasks(out / "tasks" / "reanchor-dev-kilt.jsonl")
    print(f"wrote {out}/snapshot and {out}/tasks/reanchor-dev-kilt.jsonl")
