"""The JSON the viewer's pages are drawn from: a runs list, one run, one problem, one attempt.

Every number comes from `sregym.runner.rundir` (the same reader the report uses), so the viewer
shows what `summary.json` says, recomputed from the result lines while a run is still going. The
intervals are added here from the lines: Wilson 95 % intervals per rate (attempts as independent
trials) and, for the overall end-to-end rate, a bootstrap interval that resamples problems with
their seeds (seeds of one problem are not independent).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from sregym.runner.rundir import RunData
from sregym.runner.stats import bootstrap_rate, wilson
from sregym.runner.store import is_environment_failure
from sregym.runner.summary import app_of, end_to_end_passed, phase_passed, verdict
from sregym.viewer.slo_plot import slo_svg
from sregym.viewer.timeline import timeline_svg

PHASES = ("diagnosis", "mitigation", "end_to_end")


def _passes(lines: Sequence[Mapping[str, Any]], phase: str) -> list[bool]:
    valid = [ln for ln in lines if not is_environment_failure(ln)]
    if phase == "end_to_end":
        return [end_to_end_passed(ln) for ln in valid]
    return [p for p in (phase_passed(ln, phase) for ln in valid) if p is not None]


def rate_block(lines: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Attempts, environment failures and, per phase, passes/n with a Wilson 95 % interval."""
    out: dict[str, Any] = {"attempts": len(lines),
                           "environment_failures": sum(is_environment_failure(ln) for ln in lines)}
    for phase in PHASES:
        values = _passes(lines, phase)
        interval = wilson(sum(values), len(values))
        out[phase] = {"passed": sum(values), "n": len(values),
                      "interval": interval.as_dict() if interval else None}
    return out


def _grouped(lines: Sequence[Mapping[str, Any]], keys_of: Any) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for ln in lines:
        for key in sorted(set(keys_of(ln))):
            groups[key].append(ln)
    return {key: rate_block(group) for key, group in sorted(groups.items())}


def run_card(run: RunData, key: str) -> dict[str, Any]:
    """One row of the runs list."""
    e2e = run.summary.overall.end_to_end
    return {"key": key, "name": run.name, "path": str(run.path), "kind": "run", "agent": run.agent,
            "model": run.summary.model, "score": None,
            "noise": run.summary.noise, "started_at": run.config.get("started_at"),
            "finished_at": run.config.get("finished_at"), "running": run.running,
            "attempts": len(run.lines), "skipped": len(run.skipped),
            "planned": len(run.lines) + len(run.skipped) + run.summary.missing,
            "end_to_end": e2e}


def _attempt_cell(line: Mapping[str, Any]) -> dict[str, Any]:
    return {"seed": int(line["seed"]), "verdict": verdict(line),
            "diagnosis": phase_passed(line, "diagnosis"), "mitigation": phase_passed(line, "mitigation"),
            "sim_seconds_to_diagnosis": line.get("sim_seconds_to_diagnosis"),
            "sim_seconds_to_mitigation": line.get("sim_seconds_to_mitigation"),
            "steps": line.get("steps"), "tool_calls": line.get("tool_calls"),
            "tokens_in": line.get("tokens_in"), "tokens_out": line.get("tokens_out"), "cost_usd": line.get("cost_usd"),
            "truncated": line.get("truncated"), "agent_error": bool(line.get("agent_error"))}


def run_view(run: RunData, key: str) -> dict[str, Any]:
    """The run page: its card, the summary with intervals, pass^k, and one row per problem with a
    cell per seed."""
    summary = run.summary
    difficulty = {row.problem_id: row.difficulty for row in summary.per_problem}
    layers = {row.problem_id: row.layers for row in summary.per_problem}
    by_problem: dict[str, list[bool]] = defaultdict(list)
    for ln in run.lines:
        if not is_environment_failure(ln):
            by_problem[str(ln["problem_id"])].append(end_to_end_passed(ln))
    clustered = bootstrap_rate(by_problem)
    cells: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for ln in run.lines:
        cells[str(ln["problem_id"])].append(_attempt_cell(ln))
    problems = [{**row.model_dump(), "seeds": sorted(cells.get(row.problem_id, []), key=lambda c: c["seed"])}
                for row in summary.per_problem]
    return {
        "run": run_card(run, key),
        "config": {k: run.config.get(k) for k in ("selection", "worker", "jobs", "sregym_version", "git_revision")},
        "summary_is_final": run.summary_is_final,
        "overall": {**rate_block(run.lines),
                    "end_to_end_by_problem": clustered.as_dict() if clustered else None},
        "pass_hat_k": summary.pass_hat_k,
        "by_layer": _grouped(run.lines, lambda ln: layers.get(str(ln["problem_id"])) or ln.get("layers") or ()),
        "by_app": _grouped(run.lines, lambda ln: (app_of(str(ln["problem_id"])),)),
        "by_difficulty": _grouped(run.lines, lambda ln: (d,) if (d := difficulty.get(str(ln["problem_id"]))) else ()),
        "means": {"steps": summary.mean_steps, "tool_calls": summary.mean_tool_calls,
                  "tokens_in": summary.mean_tokens_in, "tokens_out": summary.mean_tokens_out,
                  "cost_usd": summary.mean_cost_usd},
        "cost_usd": summary.cost_usd,
        "environment_failure_reasons": summary.environment_failure_reasons,
        "missing": summary.missing,
        "skipped": [{"problem_id": ln["problem_id"], "seed": ln["seed"], "reason": ln.get("skipped_reason")}
                    for ln in run.skipped],
        "problems": problems,
    }


_LOADED_DIRS: set[str] = set()


def _load_run_problem_dirs(run: RunData) -> None:
    """Register the problems of the run's `--problems-dir`s (stored in `run.json`, absolute), once
    per directory; one that is gone or no longer imports just leaves its problems unknown."""
    from sregym.problems import load_problems_dir
    from sregym.registry import PluginLoadError

    for directory in (run.config.get("worker") or {}).get("problems_dirs") or []:
        if str(directory) in _LOADED_DIRS:
            continue
        _LOADED_DIRS.add(str(directory))
        try:
            load_problems_dir(directory)
        except (OSError, PluginLoadError):
            continue


def ground_truth(problem_id: str, run: RunData | None = None) -> dict[str, Any] | None:
    """The problem's ground truth from the registry, after loading the run's own problem
    directories if the id is not known yet (None when it still is not: a directory that is gone)."""
    from sregym.problems import get_problem

    for attempt in range(2):
        try:
            return get_problem(problem_id).ground_truth.model_dump(mode="json")
        except KeyError:
            if attempt or run is None:
                return None
            _load_run_problem_dirs(run)
    return None


def problem_view(run: RunData, key: str, problem_id: str) -> dict[str, Any] | None:
    row = next((r for r in run.summary.per_problem if r.problem_id == problem_id), None)
    if row is None:
        return None
    lines = [ln for ln in run.lines if ln.get("problem_id") == problem_id]
    return {"run": run_card(run, key), "problem": row.model_dump(),
            "attempts": [_attempt_cell(ln) for ln in lines], "ground_truth": ground_truth(problem_id, run)}


def submitted_diagnosis(steps: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The arguments of the attempt's last `submit_diagnosis` call (the result line only says
    whether one was submitted; the submission itself is in the trajectory)."""
    calls = [s for s in steps if s.get("kind") == "tool" and s.get("tool") == "submit_diagnosis"]
    return dict(calls[-1].get("args") or {}) if calls else None


def attempt_view(run: RunData, key: str, problem_id: str, seed: int) -> dict[str, Any] | None:
    """The attempt page: the result line, the trajectory, the ground truth, the timeline plot and
    the entry-SLO plot (None when the line has no series)."""
    line = run.line(problem_id, seed)
    if line is None:
        return None
    steps = run.trajectory(problem_id, seed)
    return {"submitted_diagnosis": submitted_diagnosis(steps),"run": run_card(run, key), "problem_id": problem_id, "seed": seed, "result": line,
            "cell": _attempt_cell(line), "trajectory": steps, "ground_truth": ground_truth(problem_id, run),
            "timeline_svg": timeline_svg(line, steps), "slo_svg": slo_svg(line.get("entry_slo"))}


__all__ = ["attempt_view", "ground_truth", "problem_view", "rate_block", "run_card", "run_view", "submitted_diagnosis"]
