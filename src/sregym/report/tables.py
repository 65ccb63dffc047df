"""The report's tables as data: the one layout the HTML and the Markdown renderings share.

A cell keeps its display text and, for numbers, the exact value and a key naming where it comes
from in the report's JSON (`overall.end_to_end`, `by_layer.network.diagnosis` ...). The HTML
writes both into `data-key` / `data-value`, so a script (or a test) can read the numbers back from
the page without parsing percentages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sregym.report.numbers import GROUPINGS


@dataclass(frozen=True)
class Cell:
    text: str
    key: str | None = None
    value: Any = None


@dataclass
class Table:
    id: str
    title: str
    header: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def interval(block: dict[str, Any] | None) -> str:
    return "—" if not block else f"[{100 * block['low']:.1f}, {100 * block['high']:.1f}]"


def rate_cell(block: dict[str, Any] | None, key: str) -> Cell:
    """'50.0 % [15.0, 85.0]' with the estimate as the value."""
    if not block:
        return Cell("—", key, None)
    return Cell(f"{pct(block['estimate'])} {interval(block)}", key, block["estimate"])


def number(value: float | None, key: str | None = None, digits: int = 1) -> Cell:
    return Cell("—" if value is None else f"{value:,.{digits}f}", key, value)


GROUP_TITLES = {"by_layer": "By layer", "by_app": "By app", "by_difficulty": "By difficulty", "by_noise": "By noise"}
RATE_NAMES = (("diagnosis", "diagnosis"), ("mitigation", "mitigation"), ("end_to_end", "end to end"),
              ("score", "root-cause score"))


def _rates_in(n: dict[str, Any]) -> list[tuple[str, str]]:
    if n["kind"] == "run":
        return list(RATE_NAMES)
    return [("diagnosis", "exact root cause"), ("score", "root-cause score")]


def _skipped_note(n: dict[str, Any]) -> str:
    """Attempts the backend did not run (twin-only problems on `--backend kube`), named with why."""
    reasons = n.get("skipped_reasons") or {}
    if not reasons:
        return ""
    listed = "; ".join(f"{count} × {reason}" for reason, count in reasons.items())
    return f" Skipped (not run on this backend, in no count above): {listed}."


def overall_table(n: dict[str, Any]) -> Table:
    o = n["overall"]
    table = Table("overall", "Summary", ["metric", "rate [95 % interval]", "passes / n"],
                  note=f"{o['attempts']} attempts, {o['environment_failures']} environment failures (left out of "
                       f"every rate); {n['problems']} problems × {len(n['columns'])} {n['column']}s."
                       + _skipped_note(n))
    for key, name in _rates_in(n):
        block = o.get(key)
        counted = "—" if not block else (f"{block['passes']} / {block['n']}" if "passes" in block
                                         else f"mean of {block['n']}")
        table.rows.append([Cell(name), rate_cell(block, f"overall.{key}"), Cell(counted)])
    if n["kind"] == "run" and o.get("end_to_end_clustered"):
        table.rows.append([Cell("end to end, clustered by problem"),
                           rate_cell(o["end_to_end_clustered"], "overall.end_to_end_clustered"), Cell("bootstrap")])
    return table


def group_tables(n: dict[str, Any]) -> list[Table]:
    rates = _rates_in(n)
    tables = []
    for grouping in GROUPINGS:
        groups = n[grouping]
        table = Table(grouping.replace("_", "-"), GROUP_TITLES[grouping],
                      ["group", "attempts", "env-fail", *(name for _, name in rates)])
        for name, g in groups.items():
            table.rows.append([Cell(name), Cell(str(g["attempts"]), f"{grouping}.{name}.attempts", g["attempts"]),
                               Cell(str(g["environment_failures"]), f"{grouping}.{name}.environment_failures",
                                    g["environment_failures"]),
                               *(rate_cell(g.get(key), f"{grouping}.{name}.{key}") for key, _ in rates)])
        tables.append(table)
    return tables


def pass_k_table(n: dict[str, Any]) -> Table:
    table = Table("pass-k", "pass^k", ["k", "pass^k"],
                  note="The chance that k attempts of a problem all pass, averaged over problems.")
    for k, value in n["pass_hat_k"].items():
        table.rows.append([Cell(k), Cell(pct(value), f"pass_hat_k.{k}", value)])
    return table


def means_table(n: dict[str, Any]) -> Table:
    table = Table("means", "Effort", ["mean steps", "mean tool calls", "mean tokens in", "mean tokens out",
                                      "cost (USD)"],
                  note="Means over attempts that ran; cost only when the results record it.")
    table.rows.append([number(n["mean_steps"], "mean_steps"), number(n["mean_tool_calls"], "mean_tool_calls"),
                       number(n["mean_tokens_in"], "mean_tokens_in", 0),
                       number(n["mean_tokens_out"], "mean_tokens_out", 0), number(n["cost_usd"], "cost_usd", 4)])
    return table


MARKS = {"pass": "✓", "fail": "✗", "environment_failure": "E"}


def matrix_table(n: dict[str, Any]) -> Table:
    columns = [str(c) for c in n["columns"]]
    run = n["kind"] == "run"
    table = Table("matrix", "Per problem" if run else "Per task",
                  ["problem" if run else "task", "difficulty", *(f"{n['column']} {c}" for c in columns),
                   "passed / ran" if run else "score"],
                  note="✓ passed end to end, ✗ failed, E environment failure (not counted)." if run
                  else "Root-cause score per repeat; the task score is their mean.")
    for row in n["matrix"]:
        cells = [Cell(row["problem"]), Cell(row["difficulty"] or "—")]
        for c in columns:
            value = row["cells"].get(c)
            key = f"matrix.{row['problem']}.{c}"
            if run:
                cells.append(Cell(MARKS.get(value, "·"), key, value))
            else:
                cells.append(number(value, key, 3))
        if run:
            ran = row["attempts"] - row["environment_failures"]
            cells.append(Cell(f"{row['passed']} / {ran}", f"matrix.{row['problem']}.passed", row["passed"]))
        else:
            cells.append(number(row["score"], f"matrix.{row['problem']}.score", 3))
        table.rows.append(cells)
    return table


def source_tables(n: dict[str, Any]) -> list[Table]:
    return [overall_table(n), *group_tables(n), pass_k_table(n), means_table(n), matrix_table(n)]


def leaderboard_table(comparison: dict[str, Any]) -> Table:
    rows = comparison["leaderboard"]
    top_k = max((int(k) for r in rows for k in r["pass_hat_k"]), default=1)
    table = Table("leaderboard", "Leaderboard",
                  ["#", "agent", "run", "end to end", "diagnosis", "mitigation", "root-cause score", f"pass^{top_k}",
                   "mean steps", "tokens in", "tokens out", "cost (USD)"],
                  note="Rates with their 95 % Wilson interval; best end-to-end rate first.")
    for rank, r in enumerate(rows, start=1):
        base = f"leaderboard.{r['name']}"
        table.rows.append([Cell(str(rank)), Cell(r["agent"] + (f" ({r['model']})" if r["model"] else "")),
                           Cell(r["name"]), rate_cell(r["end_to_end"], f"{base}.end_to_end"),
                           rate_cell(r["diagnosis"], f"{base}.diagnosis"),
                           rate_cell(r["mitigation"], f"{base}.mitigation"), rate_cell(r["score"], f"{base}.score"),
                           Cell(pct(r["pass_hat_k"].get(str(top_k))), f"{base}.pass_hat_k.{top_k}",
                                r["pass_hat_k"].get(str(top_k))),
                           number(r["mean_steps"], f"{base}.mean_steps"),
                           number(r["mean_tokens_in"], f"{base}.mean_tokens_in", 0),
                           number(r["mean_tokens_out"], f"{base}.mean_tokens_out", 0),
                           number(r["cost_usd"], f"{base}.cost_usd", 4)])
    return table


def per_problem_table(comparison: dict[str, Any], names: Sequence[str]) -> Table:
    table = Table("wins", "Per problem: wins and losses", ["problem", *names, "best"],
                  note="Attempts passed / attempts ran per source; best is empty when all sources did equally.")
    for row in comparison["per_problem"]:
        cells = [Cell(row["problem"])]
        for name in names:
            c = row["sources"].get(name)
            cells.append(Cell("—" if c is None else f"{c['passed']} / {c['ran']}",
                              f"wins.{row['problem']}.{name}", None if c is None else c["passed"]))
        cells.append(Cell(", ".join(row["best"]) or "tie"))
        table.rows.append(cells)
    return table


def paired_table(comparison: dict[str, Any]) -> Table:
    table = Table("paired", "Paired comparison",
                  ["A", "B", "pairs", "both pass", "A only", "B only", "neither", "A − B [95 % interval]",
                   "McNemar p"],
                  note="Over the (problem, seed) attempts both ran; exact two-sided McNemar test on the discordant "
                       "pairs; the difference's interval resamples problems.")
    for p in comparison["pairs"]:
        base = f"paired.{p['a']}.{p['b']}"
        d = p["difference"]
        diff = "—" if not d else f"{100 * d['estimate']:+.1f} pp [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}]"
        table.rows.append([Cell(p["a"]), Cell(p["b"]),
                           *(Cell(str(p[k]), f"{base}.{k}", p[k]) for k in ("pairs", "both", "a_only", "b_only",
                                                                            "neither")),
                           Cell(diff, f"{base}.difference", None if not d else d["estimate"]),
                           Cell(f"{p['p_value']:.4g}", f"{base}.p_value", p["p_value"])])
    return table


def comparison_tables(numbers: dict[str, Any]) -> list[Table]:
    comparison = numbers.get("comparison")
    if not comparison:
        return []
    names = [n["name"] for n in numbers["sources"]]
    return [leaderboard_table(comparison), per_problem_table(comparison, names), paired_table(comparison)]


__all__ = ["Cell", "Table", "comparison_tables", "pct", "source_tables"]
