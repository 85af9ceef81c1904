"""Turn WikiExtractor 2.75 output (``--json -s --lists -l``) into KILT pages
in KILT's joined-heading form, as the reference of the fidelity figure.

WikiExtractor is GPL and is not part of this project: run a copy of it
yourself, outside the project (see bench/RESULTS_DUMP.md). Its output prints
each heading as its own title only (``Section::::Origins.``); KILT's pages
carry the path of open levels (``Section::::History.:Origins.``). The levels
are not in 2.75's output, so they are taken from the dump's wikitext: the
headings of the page in order, each ``Section::::`` line matched to the next
heading with the same letters (empty sections are skipped by 2.75, so the
lines are a subsequence of the headings).

Usage:
    python bench/wikiextractor_to_kilt.py WE_OUT_DIR DUMP OUT.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from urllib.parse import unquote

from kilt_chunks.dump.render import normalize_title
from kilt_chunks.dump.xmlpages import pages_in_file

_HEADING = re.compile(r"^(==+)\s*(.*?)\s*\1", re.M)
_LINK = re.compile(r'<a href="([^"]*)">(.*?)</a>')
_EXTERNAL = re.compile(r"^[a-z][a-z+.-]*%3A//", re.I)


def _letters(text: str) -> str:
    text = re.sub(r"\[\[(?:[^|\]]*\|)?([^\]]*)\]\]", r"\1", text)
    text = re.sub(r"<[^>]+>|'''?|\{\{.*?\}\}", "", text)
    return re.sub(r"\W", "", text).casefold()


def joined_sections(lines: list[str], wikitext: str) -> list[str]:
    """Rewrite 2.75's ``Section::::T.`` lines to KILT's joined paths."""
    headings = [(len(m.group(1)), m.group(2)) for m in _HEADING.finditer(wikitext)]
    path: dict[int, str] = {}
    pos = 0
    out = []
    for line in lines:
        if not line.startswith("Section::::"):
            out.append(line)
            continue
        title = line[len("Section::::") :]
        want = _letters(title)
        j = pos
        while j < len(headings) and _letters(headings[j][1]) != want:
            j += 1
        if j == len(headings):  # same letters nowhere: a common start
            j = pos
            while j < len(headings) and not (
                want[:8] and _letters(headings[j][1]).startswith(want[:8])
            ):
                j += 1
        if j == len(headings):  # no match: take the next heading's level
            j = min(pos, len(headings) - 1)
        for level, _ in headings[pos : j + 1]:
            for deeper in [x for x in path if x >= level]:
                del path[deeper]
            path[level] = "?"
        level = headings[j][0] if headings else 2
        path[level] = title
        pos = j + 1
        out.append(
            "Section::::" + ":".join(path[x] for x in sorted(path) if x <= level)
        )
    return out


def convert(we_dir: Path, dump: Path, out: Path) -> int:
    """Write the KILT pages of every 2.75 JSON line under ``we_dir``."""
    wikitext = {p.page_id: p.text for p in pages_in_file(dump)}
    count = 0
    with out.open("w", encoding="utf-8") as f:
        for file in sorted(we_dir.rglob("wiki_*")):
            for raw in file.read_text(encoding="utf-8").splitlines():
                doc = json.loads(raw)
                lines = [x for x in doc["text"].split("\n")[1:] if x]
                lines = joined_sections(lines, wikitext.get(int(doc["id"]), ""))
                text = [doc["title"] + "\n"]
                anchors = []
                for line in lines:
                    plain, cur = "", 0
                    for m in _LINK.finditer(line):
                        plain += line[cur : m.start()]
                        start = len(plain)
                        plain += m.group(2)
                        cur = m.end()
                        href = m.group(1)
                        if m.group(2) and not _EXTERNAL.match(href):
                            anchors.append(
                                {
                                    "text": m.group(2),
                                    "href": href,
                                    "paragraph_id": len(text),
                                    "start": start,
                                    "end": len(plain),
                                    "wikipedia_title": normalize_title(unquote(href)),
                                    "wikipedia_id": "",
                                }
                            )
                    plain += line[cur:]
                    text.append(plain + "\n")
                page = {
                    "_id": doc["id"],
                    "wikipedia_id": doc["id"],
                    "wikipedia_title": doc["title"],
                    "text": text,
                    "anchors": anchors,
                    "categories": "",
                }
                f.write(json.dumps(page, ensure_ascii=False) + "\n")
                count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("we_dir", type=Path)
    parser.add_argument("dump", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    print(convert(args.we_dir, args.dump, args.out), "pages")


if __name__ == "__main__":
    main()
