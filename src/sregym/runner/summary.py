"""Aggregate result lines into the numbers a researcher reports.

Rates are over attempts that ran (environment failures are counted apart: they say nothing about
the agent). A rate is `None` when no attempt had that phase. pass^k is the probability that k
attempts of one problem all pass end to end, estimated without bias from n seeds with c passes
as C(c, k) / C(n, k) and averaged over problems (the τ-bench definition): it rewards agents that
are reliably right, not occasionally lucky.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from math import comb
from typing import Any

from pydantic import BaseModel, ConfigDict

from sregym.runner.store import is_environment_failure


class Rates(BaseModel):
    """Outcomes of one group of attempts."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = 0
    environment_failures: int = 0
    diagnosis: float | None = None
    mitigation: float | None = None
    end_to_end: float | None = None


class Summary(BaseModel):
    """`summary.json`: overall and per-layer rates, pass^k, mean steps, tool calls and tokens."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    model: str | None = None
    noise: str
    problems: int
    seeds: list[int]
    overall: Rates
    by_layer: dict[str, Rates]
    pass_hat_k: dict[str, float]
    mean_steps: float | None = None
    mean_tool_calls: float | None = None
    mean_tokens_in: float | None = None
    mean_tokens_out: float | None = None
    missing: int = 0
    ran: int = 0  # attempts run by this invocation (fewer than planned after a resume)
    interrupted: bool = False
    out_dir: str = ""


def phase_passed(line: Mapping[str, Any], phase: str) -> bool | None:
    """Whether `phase` ("diagnosis", "mitigation") passed; None when it was not run or scored."""
    block = line.get(phase)
    if not isinstance(block, Mapping):
        return None
    value = block.get("passed")
    return None if value is None else bool(value)


def end_to_end_passed(line: Mapping[str, Any]) -> bool:
    return bool(line.get("passed"))


def _rate(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def _mean(values: Iterable[Any]) -> float | None:
    nums = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return round(sum(nums) / len(nums), 6) if nums else None


def rates(lines: list[Mapping[str, Any]]) -> Rates:
    valid = [ln for ln in lines if not is_environment_failure(ln)]
    diag = [p for p in (phase_passed(ln, "diagnosis") for ln in valid) if p is not None]
    mit = [p for p in (phase_passed(ln, "mitigation") for ln in valid) if p is not None]
    return Rates(attempts=len(lines), environment_failures=len(lines) - len(valid), diagnosis=_rate(diag),
                 mitigation=_rate(mit), end_to_end=_rate([end_to_end_passed(ln) for ln in valid]))


def pass_hat_k(lines: list[Mapping[str, Any]]) -> dict[str, float]:
    """{"1": ..., "2": ..., ...} up to the largest number of valid seeds any problem has."""
    per_problem: dict[str, list[bool]] = defaultdict(list)
    for ln in lines:
        if not is_environment_failure(ln):
            per_problem[str(ln["problem_id"])].append(end_to_end_passed(ln))
    if not per_problem:
        return {}
    out: dict[str, float] = {}
    for k in range(1, max(len(v) for v in per_problem.values()) + 1):
        vals = [comb(sum(v), k) / comb(len(v), k) for v in per_problem.values() if len(v) >= k]
        out[str(k)] = round(sum(vals) / len(vals), 6)
    return out


def summarize(lines: list[Mapping[str, Any]], *, layers: Mapping[str, Iterable[str]], agent: str,
              model: str | None, noise: str, seeds: list[int], planned: int) -> Summary:
    """`layers` maps a problem id to its layer tags (a problem counts once under each)."""
    by_layer: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for ln in lines:
        for layer in sorted(set(layers.get(str(ln["problem_id"]), ()))):
            by_layer[layer].append(ln)
    valid = [ln for ln in lines if not is_environment_failure(ln)]
    return Summary(
        agent=agent, model=model, noise=noise, problems=len({str(ln["problem_id"]) for ln in lines}),
        seeds=list(seeds), overall=rates(lines),
        by_layer={layer: rates(group) for layer, group in sorted(by_layer.items())},
        pass_hat_k=pass_hat_k(lines),
        mean_steps=_mean(ln.get("steps") for ln in valid),
        mean_tool_calls=_mean(ln.get("tool_calls") for ln in valid),
        mean_tokens_in=_mean(ln.get("tokens_in") for ln in valid),
        mean_tokens_out=_mean(ln.get("tokens_out") for ln in valid),
        missing=max(0, planned - len(lines)))


def render_table(summary: Summary) -> Any:
    """A rich `Table`: one row overall and one per layer."""
    from rich.table import Table

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}%"

    title = f"sregym: agent {summary.agent}" + (f" ({summary.model})" if summary.model else "")
    table = Table(title=title, caption=_caption(summary))
    for col in ("group", "attempts", "env fail", "diagnosis", "mitigation", "end-to-end"):
        table.add_column(col, justify="left" if col == "group" else "right")
    rows = [("overall", summary.overall), *((f"layer {k}", v) for k, v in summary.by_layer.items())]
    for name, r in rows:
        table.add_row(name, str(r.attempts), str(r.environment_failures), pct(r.diagnosis), pct(r.mitigation),
                      pct(r.end_to_end))
    return table


def _caption(summary: Summary) -> str:
    parts = [f"noise {summary.noise}", f"seeds {len(summary.seeds)}"]
    if summary.pass_hat_k:
        parts.append("pass^k " + " ".join(f"k={k}:{100 * v:.1f}%" for k, v in summary.pass_hat_k.items()))
    for label, value in (("mean steps", summary.mean_steps), ("mean tool calls", summary.mean_tool_calls),
                         ("mean tokens in", summary.mean_tokens_in), ("mean tokens out", summary.mean_tokens_out)):
        if value is not None:
            parts.append(f"{label} {value:.1f}")
    if summary.missing:
        parts.append(f"{summary.missing} attempts missing")
    return "; ".join(parts)


__all__ = ["Rates", "Summary", "end_to_end_passed", "pass_hat_k", "phase_passed", "rates", "render_table",
           "summarize"]
