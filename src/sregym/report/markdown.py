"""The report as Markdown tables, to paste into a README or a pull request (no figures: use
`--plots DIR` for PNGs to link next to them)."""

from __future__ import annotations

from typing import Any

from sregym.report.tables import Table, comparison_tables, source_tables


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _table(t: Table) -> str:
    lines = [f"### {t.title}", "", "| " + " | ".join(_escape(h) for h in t.header) + " |",
             "|" + "|".join(" --- " for _ in t.header) + "|"]
    lines += ["| " + " | ".join(_escape(c.text) for c in row) + " |" for row in t.rows]
    if t.note:
        lines += ["", f"*{t.note}*"]
    return "\n".join(lines) + "\n"


def render_markdown(numbers: dict[str, Any]) -> str:
    parts = []
    comparison = comparison_tables(numbers)
    if comparison:
        parts.append("## Comparison\n\n" + "\n".join(_table(t) for t in comparison))
    for n in numbers["sources"]:
        meta = f"agent `{n['agent']}`" + (f", model `{n['model']}`" if n["model"] else "") + f", noise `{n['noise']}`"
        parts.append(f"## {n['name']}\n\n{meta}\n\n" + "\n".join(_table(t) for t in source_tables(n)))
    return "\n".join(parts)


__all__ = ["render_markdown"]
