"""Reading a report back the way a reader would: the HTML's tables (`data-key`/`data-value`
cells), figures and references, and the Markdown's tables."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any


class ReportPage(HTMLParser):
    """Cells by `data-key`, the `<svg>` of each `<figure data-chart>`, every URL-bearing attribute,
    and the embedded JSON."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.values: dict[str, Any] = {}
        self.texts: dict[str, str] = {}
        self.charts: dict[str, dict[str, int]] = {}
        self.references: list[str] = []
        self.data_json = ""
        self._chart: str | None = None
        self._cell: str | None = None
        self._in_data = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for name in ("src", "href", "xlink:href", "action", "data", "poster"):
            if a.get(name):
                self.references.append(str(a[name]))
        if tag == "link":
            self.references.append(str(a.get("href")))
        if tag == "figure" and a.get("data-chart"):
            self._chart = str(a["data-chart"])
            self.charts[self._chart] = {}
        elif self._chart is not None:
            self.charts[self._chart][tag] = self.charts[self._chart].get(tag, 0) + 1
        if tag == "td" and a.get("data-key"):
            key = str(a["data-key"])
            self.values[key] = json.loads(str(a["data-value"]))
            self._cell = key
            self.texts[key] = ""
        if tag == "script" and a.get("id") == "report-data":
            self._in_data = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self._chart = None
        if tag == "td":
            self._cell = None
        if tag == "script":
            self._in_data = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self.texts[self._cell] += data
        if self._in_data:
            self.data_json += data


def markdown_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """'### Title' → its table as rows of header → cell (the first table of a title per section
    wins; titles repeat per source, so keys are 'section/title')."""
    tables: dict[str, list[dict[str, str]]] = {}
    section, title = "", ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("### "):
            title = line[4:].strip()
        elif line.startswith("| ") and f"{section}/{title}" not in tables:
            header = _cells(line)
            rows = []
            i += 2  # the rule under the header
            while i < len(lines) and lines[i].startswith("| "):
                rows.append(dict(zip(header, _cells(lines[i]), strict=True)))
                i += 1
            tables[f"{section}/{title}"] = rows
            continue
        i += 1
    return tables


def _cells(line: str) -> list[str]:
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
