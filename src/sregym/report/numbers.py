"""The numbers of a report, computed once and shown three ways (HTML, Markdown, JSON).

Every rate carries its 95 % Wilson interval and the counts it comes from, so a reader can check it
against `summary.json` (the rates are computed with the runner's own definitions: environment
failures are left out, a phase rate counts only attempts that had the phase). The end-to-end rate
also gets a problem-clustered bootstrap interval, because the seeds of one problem are not
independent draws. Several sources add a comparison: a leaderboard, per-problem wins and losses,
and the paired McNemar test over the (problem, seed) attempts both sources ran.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations
from typing import Any

from sregym.report.source import Attempt, Source
from sregym.runner.stats import bootstrap_rate, paired, wilson
from sregym.runner.summary import pass_hat_k_of

GROUPINGS: dict[str, Callable[[Attempt], Iterable[str]]] = {
    "by_layer": lambda a: a.layers,
    "by_app": lambda a: (a.app,),
    "by_difficulty": lambda a: (a.difficulty,) if a.difficulty else (),
    "by_noise": lambda a: (a.noise,),
}


def _r6(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def rate(values: Sequence[bool]) -> dict[str, Any] | None:
    """passes / n with its Wilson interval; None when nothing was counted."""
    interval = wilson(sum(values), len(values))
    if interval is None:
        return None
    return interval.as_dict() | {"passes": sum(values), "n": len(values)}


def _by_problem(attempts: Iterable[Attempt], value: Callable[[Attempt], Any]) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = defaultdict(list)
    for a in attempts:
        v = value(a)
        if v is not None:
            groups[a.problem].append(v)
    return dict(groups)


def _mean(values: Iterable[float | None]) -> float | None:
    nums = [v for v in values if v is not None]
    return round(sum(nums) / len(nums), 6) if nums else None


def group_numbers(attempts: Sequence[Attempt]) -> dict[str, Any]:
    """Counts, phase rates and the mean diagnosis score of one group of attempts."""
    valid = [a for a in attempts if not a.environment_failure]
    scores = _by_problem(valid, lambda a: a.score)
    score = bootstrap_rate(scores)  # the mean of per-problem means, as the snapshot scorer averages
    return {
        "attempts": len(attempts),
        "environment_failures": len(attempts) - len(valid),
        "diagnosis": rate([a.diagnosis for a in valid if a.diagnosis is not None]),
        "mitigation": rate([a.mitigation for a in valid if a.mitigation is not None]),
        "end_to_end": rate([a.passed for a in valid]),
        "score": score.as_dict() | {"n": sum(len(v) for v in scores.values())} if score else None,
    }


def pass_hat_k(attempts: Sequence[Attempt]) -> dict[str, float]:
    """pass^k with the runner's estimator (`runner.summary.pass_hat_k_of`), attempts that ran only."""
    return pass_hat_k_of(_by_problem((a for a in attempts if not a.environment_failure), lambda a: a.passed))


def matrix(source: Source) -> list[dict[str, Any]]:
    """One row per problem (or task), in the order the source lists them, one cell per column:
    the verdict (runs) or the root-cause score (snapshots)."""
    rows: dict[str, dict[str, Any]] = {}
    for a in source.attempts:
        row = rows.setdefault(a.problem, {"problem": a.problem, "app": a.app, "difficulty": a.difficulty,
                                          "layers": list(a.layers), "cells": {}, "attempts": 0, "passed": 0,
                                          "environment_failures": 0})
        row["cells"][str(a.seed)] = a.verdict if source.kind == "run" else _r6(a.score)
        row["attempts"] += 1
        row["passed"] += int(a.passed and not a.environment_failure)
        row["environment_failures"] += int(a.environment_failure)
    for row in rows.values():
        scores = [a.score for a in source.attempts if a.problem == row["problem"] and a.score is not None]
        row["score"] = _mean(scores)
    return list(rows.values())


def source_numbers(source: Source) -> dict[str, Any]:
    valid = [a for a in source.attempts if not a.environment_failure]
    groups = {}
    for name, keys_of in GROUPINGS.items():
        members: dict[str, list[Attempt]] = defaultdict(list)
        for a in source.attempts:
            for key in sorted(set(keys_of(a))):
                members[key].append(a)
        groups[name] = {key: group_numbers(members[key]) for key in sorted(members)}
    clustered = bootstrap_rate(_by_problem(valid, lambda a: a.passed))
    costs = [a.cost_usd for a in valid if a.cost_usd is not None]
    return {
        "name": source.name, "kind": source.kind, "path": str(source.path), "agent": source.agent,
        "model": source.model, "noise": source.noise, "column": source.column_name, "columns": source.columns,
        "problems": len({a.problem for a in source.attempts}),
        "overall": group_numbers(source.attempts) | {
            "end_to_end_clustered": clustered.as_dict() if clustered else None},
        **groups,
        "pass_hat_k": pass_hat_k(source.attempts),
        "mean_steps": _mean(a.steps for a in valid), "mean_tool_calls": _mean(a.tool_calls for a in valid),
        "mean_tokens_in": _mean(a.tokens_in for a in valid), "mean_tokens_out": _mean(a.tokens_out for a in valid),
        "cost_usd": round(sum(costs), 6) if costs else None,
        "score_distribution": [_r6(a.score) for a in valid if a.score is not None],
        "matrix": matrix(source),
        "skipped_reasons": source.recorded.get("skipped_reasons") or {},
    }


def _outcomes(source: Source) -> dict[tuple[str, int], bool]:
    return {(a.problem, a.seed): a.passed for a in source.attempts if not a.environment_failure}


def _estimate(block: dict[str, Any] | None) -> float | None:
    return None if block is None else block["estimate"]


def leaderboard(numbers: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per source, best end-to-end rate first (then best diagnosis score, then name)."""
    rows = [{"name": n["name"], "agent": n["agent"], "model": n["model"], "kind": n["kind"],
             "attempts": n["overall"]["attempts"], "end_to_end": n["overall"]["end_to_end"],
             "diagnosis": n["overall"]["diagnosis"], "mitigation": n["overall"]["mitigation"],
             "score": n["overall"]["score"], "pass_hat_k": n["pass_hat_k"], "mean_steps": n["mean_steps"],
             "mean_tokens_in": n["mean_tokens_in"], "mean_tokens_out": n["mean_tokens_out"],
             "cost_usd": n["cost_usd"]} for n in numbers]
    return sorted(rows, key=lambda r: (-(_estimate(r["end_to_end"]) or 0.0), -(_estimate(r["score"]) or 0.0),
                                       r["name"]))


def per_problem(sources: Sequence[Source]) -> list[dict[str, Any]]:
    """Per problem: each source's passes over the attempts it ran, and which sources did best."""
    order: dict[str, None] = {}
    for s in sources:
        for a in s.attempts:
            order.setdefault(a.problem, None)
    rows = []
    for problem in order:
        cells = {}
        for s in sources:
            ran = [a for a in s.attempts if a.problem == problem and not a.environment_failure]
            cells[s.name] = {"passed": sum(a.passed for a in ran), "ran": len(ran)} if ran else None
        rates = {name: c["passed"] / c["ran"] for name, c in cells.items() if c}
        top = max(rates.values(), default=None)
        best = [name for name, r in rates.items() if r == top] if top is not None and len(set(rates.values())) > 1 \
            else []
        rows.append({"problem": problem, "sources": cells, "best": best})
    return rows


def pair_numbers(a: Source, b: Source) -> dict[str, Any]:
    """`stats.paired` over the attempts both ran, and the problems each did better on."""
    oa, ob = _outcomes(a), _outcomes(b)
    result = paired(oa, ob).as_dict()
    shared = sorted(oa.keys() & ob.keys())
    diff: dict[str, int] = defaultdict(int)
    for key in shared:
        diff[key[0]] += int(oa[key]) - int(ob[key])
    problems = sorted({k[0] for k in shared})
    return {"a": a.name, "b": b.name, **result,
            "a_better": [p for p in problems if diff[p] > 0], "b_better": [p for p in problems if diff[p] < 0],
            "same": [p for p in problems if diff[p] == 0]}


def report_numbers(sources: Sequence[Source]) -> dict[str, Any]:
    """Everything the report shows; `comparison` only with two sources or more."""
    numbers = [source_numbers(s) for s in sources]
    out: dict[str, Any] = {"format": "sregym-report/1", "sources": numbers}
    if len(sources) > 1:
        out["comparison"] = {"leaderboard": leaderboard(numbers), "per_problem": per_problem(sources),
                             "pairs": [pair_numbers(a, b) for a, b in combinations(sources, 2)]}
    return out


__all__ = ["GROUPINGS", "group_numbers", "leaderboard", "matrix", "pair_numbers", "pass_hat_k", "per_problem",
           "rate", "report_numbers", "source_numbers"]
