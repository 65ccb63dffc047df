"""Reading a finished (or still running) results directory back, for whatever presents it.

`sregym run` writes a run directory (`runner/store.py`); the viewer, the report and comparisons
all need the same things from it: the configuration, the latest line per attempt, the summary
(recomputed from the lines when `summary.json` is missing or stale, e.g. while the run is still
going) and each attempt's trajectory. This module is that one reader, so every presentation shows
the same numbers as `summary.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sregym.runner.store import RUN_FILE, SUMMARY_FILE, TRAJECTORIES_DIR, ResultsStore, is_skipped
from sregym.runner.summary import Summary, summarize


class NotARunDirectory(ValueError):
    """The path holds neither `run.json` nor `results.jsonl`."""


@dataclass
class RunData:
    """One run directory as read at one moment."""

    path: Path
    config: dict[str, Any]
    lines: list[dict[str, Any]]  # the latest line per attempt that ran, in plan order when it is known
    summary: Summary
    summary_is_final: bool  # True when `summary.json` exists and covers every line
    extra: dict[str, Any] = field(default_factory=dict)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    """Attempts the backend did not run (twin-only problems on `--backend kube`): shown with their
    reason, kept out of `lines` so no presentation counts them in a rate."""

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def agent(self) -> str:
        return self.summary.agent

    @property
    def running(self) -> bool:
        """The run has started and not finished (no `finished_at` in `run.json`)."""
        return bool(self.config) and not self.config.get("finished_at")

    def line(self, problem_id: str, seed: int) -> dict[str, Any] | None:
        return next((ln for ln in self.lines if ln.get("problem_id") == problem_id and int(ln.get("seed", -1)) == seed),
                    None)

    def trajectory_path(self, problem_id: str, seed: int) -> Path:
        return self.path / TRAJECTORIES_DIR / f"{problem_id}__{seed}.jsonl"

    def trajectory(self, problem_id: str, seed: int) -> list[dict[str, Any]]:
        """The attempt's steps (unparsable lines skipped); [] when it has none on disk."""
        path = self.trajectory_path(problem_id, seed)
        if not path.is_file():
            return []
        steps = []
        for raw in path.read_bytes().splitlines():
            try:
                steps.append(json.loads(raw))
            except ValueError:
                continue
        return steps


def _ordered(config: dict[str, Any], done: dict[tuple[str, int], dict[str, Any]]) -> list[dict[str, Any]]:
    ids = config.get("problem_ids") or []
    seeds = config.get("seeds") or []
    order = {(pid, int(seed)): n for n, (pid, seed) in enumerate((p, s) for p in ids for s in seeds)}
    return [done[k] for k in sorted(done, key=lambda k: (order.get(k, len(order)), k))]


def _difficulties(problem_ids: set[str]) -> dict[str, str]:
    """Difficulty tags of the problems that are registered here (a run of problems from another
    `--problems-dir` simply has none)."""
    from sregym.problems import get_problem

    out: dict[str, str] = {}
    for pid in problem_ids:
        try:
            difficulty = get_problem(pid).tags.difficulty
        except Exception:  # not registered in this process
            continue
        if difficulty:
            out[pid] = str(difficulty)
    return out


def _recomputed(config: dict[str, Any], lines: list[dict[str, Any]]) -> Summary:
    worker = config.get("worker") or {}
    layers = {str(ln["problem_id"]): ln.get("layers") or [] for ln in lines}
    difficulties = _difficulties({str(ln["problem_id"]) for ln in lines})
    seeds = [int(s) for s in config.get("seeds") or sorted({int(ln["seed"]) for ln in lines})]
    planned = len(config.get("problem_ids") or []) * len(seeds) or len(lines)
    agent = str(worker.get("agent") or (lines[0].get("agent") if lines else "") or "?")
    model = (worker.get("agent_options") or {}).get("model") or (lines[0].get("model") if lines else None)
    return summarize(lines, layers=layers, agent=agent, model=model, noise=str(worker.get("noise") or "?"),
                     seeds=seeds, planned=planned, difficulties=difficulties)


def load_run(path: str | Path) -> RunData:
    """Read the run directory at `path`; raises NotARunDirectory when it is not one."""
    root = Path(path)
    store = ResultsStore(root)
    if not (root / RUN_FILE).is_file() and not store.results_path.is_file():
        raise NotARunDirectory(f"{root} is not a run directory (no {RUN_FILE} or results.jsonl)")
    config: dict[str, Any] = {}
    if (root / RUN_FILE).is_file():
        try:
            config = json.loads((root / RUN_FILE).read_text())
        except ValueError:
            config = {}
    recorded = _ordered(config, store.read_results())
    lines = [ln for ln in recorded if not is_skipped(ln)]
    summary: Summary | None = None
    final = False
    if (root / SUMMARY_FILE).is_file():
        try:
            summary = Summary.model_validate_json((root / SUMMARY_FILE).read_text())
            final = sum(r.attempts for r in summary.per_problem) == len(lines)
        except ValueError:
            summary = None
    if summary is None or not final:
        summary = _recomputed(config, recorded)
    return RunData(path=root, config=config, lines=lines, summary=summary, summary_is_final=final,
                   skipped=[ln for ln in recorded if is_skipped(ln)])


def find_runs(paths: list[str | Path]) -> list[Path]:
    """Run directories among `paths`: each path itself when it is one, else its immediate
    sub-directories that are (so `runs/` lists every run), newest name first."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if (path / RUN_FILE).is_file() or (path / "results.jsonl").is_file():
            found.append(path)
        elif path.is_dir():
            subs = [p for p in path.iterdir() if p.is_dir() and ((p / RUN_FILE).is_file() or (p / "results.jsonl").is_file())]
            found.extend(sorted(subs, key=lambda p: p.name, reverse=True))
    return found


__all__ = ["NotARunDirectory", "RunData", "find_runs", "load_run"]
