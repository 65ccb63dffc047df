"""The report as one self-contained HTML file: tables, inline SVG charts, no external assets.

Everything is in the file (styles, figures, the numbers as JSON), so it can be mailed, attached to
a paper's artefact or opened offline years later. Colours follow `prefers-color-scheme`, and the
charts draw in `currentColor`, so the same file reads on a light page, a dark page and paper.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from sregym.report import plots
from sregym.report.tables import Table, comparison_tables, source_tables

STYLE = """
:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #ffffff; --muted: #5f5f5f; --rule: #d0d0d0;
        --pass: #009E73; --fail: #D55E00; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e6e6; --bg: #16181c; --muted: #a8a8a8; --rule: #3a3d44; --pass: #56B4E9; --fail: #E69F00; }
}
@media print { :root { --fg: #000; --bg: #fff; --muted: #444; --rule: #999; } section { break-inside: avoid; } }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg);
       max-width: 72rem; margin: 2rem auto; padding: 0 1rem; }
h1, h2, h3 { line-height: 1.2; } h2 { border-bottom: 1px solid var(--rule); padding-bottom: .2rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--rule); padding: .2rem .6rem; text-align: left; }
td[data-value] { text-align: right; } .note, .meta { color: var(--muted); font-size: 12px; }
td[data-value="\\"pass\\""] { color: var(--pass); text-align: center; }
td[data-value="\\"fail\\""] { color: var(--fail); text-align: center; }
figure { margin: 1rem 0; color: var(--fg); } figure svg { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 12px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(30rem, 1fr)); gap: 1rem; }
"""


def _table(t: Table, prefix: str = "") -> str:
    """`prefix` keeps keys unique across sources: `<source>.overall.end_to_end`."""
    head = "".join(f"<th>{escape(h)}</th>" for h in t.header)
    rows = []
    for row in t.rows:
        cells = []
        for c in row:
            attrs = ""
            if c.key is not None:
                attrs = f' data-key="{escape(prefix + c.key)}" data-value="{escape(json.dumps(c.value))}"'
            cells.append(f"<td{attrs}>{escape(c.text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note">{escape(t.note)}</p>' if t.note else ""
    return (f'<h3>{escape(t.title)}</h3><table id="{escape(t.id)}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>{note}')


def _charts(numbers: dict[str, Any]) -> str:
    figures = [f'<figure class="chart" data-chart="{c.name}">{plots.svg(c)}<figcaption>{escape(c.title)}'
               f'</figcaption></figure>' for c in plots.charts(numbers)]
    return '<div class="charts">' + "".join(figures) + "</div>"


def _source(n: dict[str, Any]) -> str:
    meta = (f"{'run' if n['kind'] == 'run' else 'snapshot score'} · agent {escape(n['agent'])}"
            + (f" · model {escape(n['model'])}" if n["model"] else "") + f" · noise {escape(n['noise'])}"
            + f" · {escape(n['path'])}")
    return (f'<section class="source" data-source="{escape(n["name"])}"><h2>{escape(n["name"])}</h2>'
            f'<p class="meta">{meta}</p>' + "".join(_table(t, f"{n['name']}.") for t in source_tables(n)) + "</section>")


def render_html(numbers: dict[str, Any]) -> str:
    """The whole page for `numbers` (from `report_numbers`)."""
    sources = numbers["sources"]
    title = "sregym report: " + ", ".join(n["name"] for n in sources)
    comparison = comparison_tables(numbers)
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>",
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<style>{STYLE}</style></head><body><h1>{escape(title)}</h1>",
             '<section class="figures"><h2>Figures</h2>', _charts(numbers), "</section>"]
    if comparison:
        parts.append('<section class="comparison"><h2>Comparison</h2>' + "".join(_table(t) for t in comparison)
                     + "</section>")
    parts += [_source(n) for n in sources]
    data = json.dumps(numbers, sort_keys=True).replace("</", "<\\/")
    parts.append(f'<script type="application/json" id="report-data">{data}</script></body></html>\n')
    return "".join(parts)


__all__ = ["render_html"]
