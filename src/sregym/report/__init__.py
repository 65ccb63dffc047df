"""`sregym report`: results people can read — a self-contained HTML page with figures, Markdown
tables or JSON numbers, for one run or a comparison of several (runs of `sregym run`, or scores of
`sregym snapshot score`).

`source` reads what a directory holds, `numbers` computes everything shown, `tables` lays it out,
`html` / `markdown` render it and `plots` draws the figures (matplotlib, the `report` extra).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sregym.report.source import NotAReportSource, Source, load_source

FORMATS = ("html", "md", "json")


def load_sources(paths: Sequence[str | Path]) -> list[Source]:
    """Read every path; names made unique (two `run` directories become `run` and `run#2`);
    runs and snapshot scores are not mixed (their attempts are not the same kind of thing)."""
    sources = [load_source(p) for p in paths]
    seen: dict[str, int] = {}
    for s in sources:
        seen[s.name] = seen.get(s.name, 0) + 1
        if seen[s.name] > 1:
            s.name = f"{s.name}#{seen[s.name]}"
    kinds = {s.kind for s in sources}
    if len(kinds) > 1:
        raise NotAReportSource("cannot compare runs with snapshot scores: report them separately")
    return sources


def numbers_of(paths: Sequence[str | Path]) -> dict[str, Any]:
    """Every number the report shows (the `--format json` document)."""
    from sregym.report.numbers import report_numbers

    return report_numbers(load_sources(paths))


def render(numbers: dict[str, Any], fmt: str = "html") -> str:
    """`numbers` (from `numbers_of`) as html, md or json text."""
    if fmt == "json":
        return json.dumps(numbers, indent=2, sort_keys=True) + "\n"
    if fmt == "md":
        from sregym.report.markdown import render_markdown

        return render_markdown(numbers)
    if fmt == "html":
        from sregym.report.html import render_html

        return render_html(numbers)
    raise ValueError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")


def build_report(paths: Sequence[str | Path], fmt: str = "html") -> str:
    """The report of `paths` in `fmt`."""
    return render(numbers_of(paths), fmt)


__all__ = ["FORMATS", "NotAReportSource", "build_report", "load_sources", "numbers_of", "render"]
