"""What a report is made from: a run directory or a snapshot score, read into one shape.

`sregym run` leaves `results.jsonl` + `summary.json`; `sregym snapshot score` leaves `score.json`
next to the outputs it scored. Both are, for a report, the same thing: attempts of problems (rows)
under seeds or repeats (columns), each passed or not, with a diagnosis score. Reading both into
`Source` lets one summary, one matrix, one set of plots and one comparison serve both kinds, and
the kind of a directory is detected here, once.

A snapshot repeat "passes" when its root-cause score is 1 (exactly the root causes, nothing
extra): that is what pass^k and the paired test count; the benchmark score itself (the mean of the
partial scores) is reported beside it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sregym.runner.rundir import NotARunDirectory, load_run
from sregym.runner.summary import app_of, phase_passed
from sregym.snapshot.layout import RUN_FORMAT, RUN_JSON, SCORE_FORMAT, SCORE_JSON


class NotAReportSource(ValueError):
    """The path is neither a run directory nor a snapshot score (the message says what to pass)."""


@dataclass(frozen=True)
class Attempt:
    """One cell of the matrix: a problem (or snapshot task) under one seed (or repeat)."""

    problem: str
    seed: int
    app: str
    layers: tuple[str, ...]
    difficulty: str | None
    noise: str
    environment_failure: bool
    passed: bool  # end to end (runs); root-cause score 1 (snapshots)
    diagnosis: bool | None = None
    mitigation: bool | None = None
    score: float | None = None  # the diagnosis' root-cause score (precision at full recall)
    checklist: float | None = None
    steps: float | None = None
    tool_calls: float | None = None
    tokens_in: float | None = None
    tokens_out: float | None = None
    cost_usd: float | None = None

    @property
    def verdict(self) -> str:
        if self.environment_failure:
            return "environment_failure"
        return "pass" if self.passed else "fail"


@dataclass
class Source:
    """One run or one snapshot score, as the report sees it."""

    name: str
    kind: Literal["run", "snapshot"]
    path: Path
    agent: str
    model: str | None
    noise: str
    columns: list[int]  # seeds (runs) or repeats (snapshots), in order
    attempts: list[Attempt]
    recorded: dict[str, Any] = field(default_factory=dict)  # summary.json / score.json as written

    @property
    def label(self) -> str:
        return f"{self.agent} ({self.model})" if self.model else self.agent

    @property
    def column_name(self) -> str:
        return "seed" if self.kind == "run" else "repeat"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _difficulty(problem_id: str) -> str | None:
    from sregym.problems import get_problem

    try:
        difficulty = get_problem(problem_id).tags.difficulty
    except Exception:  # a problem from another --problems-dir: no tags here
        return None
    return str(difficulty) if difficulty else None


def _run_source(path: Path) -> Source:
    data = load_run(path)
    summary = data.summary
    difficulties = {row.problem_id: row.difficulty for row in summary.per_problem}
    attempts = []
    for ln in data.lines:
        pid = str(ln["problem_id"])
        diag = ln.get("diagnosis") if isinstance(ln.get("diagnosis"), dict) else {}
        attempts.append(Attempt(
            problem=pid, seed=int(ln["seed"]), app=app_of(pid), layers=tuple(ln.get("layers") or ()),
            difficulty=difficulties.get(pid), noise=str(ln.get("noise") or summary.noise),
            environment_failure=bool(ln.get("environment_failure")), passed=bool(ln.get("passed")),
            diagnosis=phase_passed(ln, "diagnosis"), mitigation=phase_passed(ln, "mitigation"),
            score=_number(diag.get("root_cause_score")), checklist=_number(diag.get("checklist_score")),
            steps=_number(ln.get("steps")), tool_calls=_number(ln.get("tool_calls")),
            tokens_in=_number(ln.get("tokens_in")), tokens_out=_number(ln.get("tokens_out")),
            cost_usd=_number(ln.get("cost_usd"))))
    columns = [int(s) for s in summary.seeds] or sorted({a.seed for a in attempts})
    return Source(name=data.name, kind="run", path=data.path, agent=summary.agent, model=summary.model,
                  noise=summary.noise, columns=columns, attempts=attempts, recorded=summary.model_dump(mode="json"))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise NotAReportSource(f"{path} cannot be read as JSON ({err})") from None


def _snapshot_source(score_path: Path) -> Source:
    report = _read_json(score_path)
    if not isinstance(report, dict) or report.get("format") != SCORE_FORMAT:
        raise NotAReportSource(f"{score_path} is not a snapshot score ({SCORE_FORMAT}); write one with "
                               "`sregym snapshot score --dataset DIR --outputs OUT`")
    outputs = Path(str(report.get("outputs") or score_path.parent))
    run = {}
    for candidate in (score_path.parent / RUN_JSON, outputs / RUN_JSON):
        if candidate.is_file():
            found = _read_json(candidate)
            run = found if isinstance(found, dict) else {}
            break
    options = run.get("options") if isinstance(run.get("options"), dict) else {}
    index = Path(str(report.get("dataset") or "")) / "index.json"
    dataset = _read_json(index) if report.get("dataset") and index.is_file() else {}
    noise = str(dataset.get("noise") or "?") if isinstance(dataset, dict) else "?"
    attempts = []
    for task in report.get("tasks") or []:
        problem = str(task.get("problem") or "")
        difficulty = _difficulty(problem)
        for rep in task.get("repeats") or []:
            score = _number(rep.get("score")) or 0.0
            checklist = rep.get("checklist") if isinstance(rep.get("checklist"), dict) else None
            attempts.append(Attempt(
                problem=str(task["task"]), seed=int(rep["repeat"]), app=app_of(problem),
                layers=tuple(task.get("layers") or ()), difficulty=difficulty, noise=noise,
                environment_failure=False, passed=score >= 1.0, diagnosis=score >= 1.0, score=score,
                checklist=_number(checklist.get("score")) if checklist else None))
    repeats = int(report.get("repeats") or 0)
    return Source(name=outputs.name or score_path.parent.name, kind="snapshot", path=score_path,
                  agent=str(run.get("agent") or "?"), model=options.get("model") if options else None,
                  noise=noise, columns=list(range(1, repeats + 1)), attempts=attempts, recorded=report)


def load_source(path: str | Path) -> Source:
    """Read `path`: a run directory, a snapshot outputs directory holding `score.json`, or a
    `score.json` itself. Raises `NotAReportSource` with what to pass instead."""
    path = Path(path)
    if not path.exists():
        raise NotAReportSource(f"{path} does not exist; give a run directory (from `sregym run`) or a scored "
                               "snapshot run (from `sregym snapshot score`)")
    if path.is_file():
        return _snapshot_source(path)
    if (path / SCORE_JSON).is_file():
        return _snapshot_source(path / SCORE_JSON)
    run_json = path / RUN_JSON
    if run_json.is_file():
        info = _read_json(run_json)
        if isinstance(info, dict) and info.get("format") == RUN_FORMAT:
            raise NotAReportSource(f"{path} is a snapshot run that has not been scored: run `sregym snapshot score "
                                   f"--dataset DIR --outputs {path}` first")
    try:
        return _run_source(path)
    except NotARunDirectory:
        raise NotAReportSource(f"{path} is neither a run directory (no run.json or results.jsonl) nor a scored "
                               f"snapshot run (no {SCORE_JSON})") from None


__all__ = ["Attempt", "NotAReportSource", "Source", "load_source"]
