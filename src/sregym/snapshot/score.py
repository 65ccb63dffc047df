"""Score a run of an agent over a snapshot dataset, the ITBench-AA way.

Per repeat: precision at full recall of the submitted root-cause entities (any missed root cause
⇒ 0, else true positives / submitted), computed by the live oracle's own
`oracles.diagnosis.root_cause_score` on the ground truth the live oracle uses
(`GroundTruth.model_validate(ground_truth.json["ground_truth"])`), so aliases (a Pod of a
root-cause Deployment) and kind spellings count exactly as they do live. A missing or invalid
`output.json` scores 0 and the reason is kept. Task score = mean over repeats (a repeat the run
never produced counts 0); benchmark score = mean over tasks; per layer tag, the mean over the tasks
of problems with that tag. The dataset is read as the runner reads it (`index.read_index`), and the
outputs of a run on another dataset are refused (`run.json` records the index's fingerprint): task
names repeat across datasets, so they would silently be scored against the wrong answers.

The 3×3 checklist is scored only for repeats whose output has an explanation: without text the
checklist's characterization and impact questions have nothing to read, and an all-"no" checklist
would mean "no explanation given", not "a wrong explanation". The explanation is passed as both the
mechanism and the explanation of the `DiagnosisSubmission` (`AgentOutput.to_submission`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sregym.oracles.diagnosis import Judge, root_cause_score, score_diagnosis
from sregym.snapshot import layout
from sregym.snapshot.index import DatasetError, DatasetIndex, DatasetTask, load_ground_truth, read_index
from sregym.snapshot.jsonfile import read_json
from sregym.snapshot.layout import SCORE_FORMAT
from sregym.snapshot.output import OutputError, load_output
from sregym.types import DiagnosisScore, GroundTruth

_REPEAT_DIR = re.compile(r"repeat-(\d+)")
_HOW = "point --outputs at a directory written by `sregym snapshot run`"


class ScoreError(DatasetError):
    """The dataset or the outputs directory cannot be scored (not an agent mistake)."""


@dataclass(frozen=True)
class RepeatScore:
    """One repeat of one task: its score and, if the output was unusable, why it scored 0."""

    repeat: int
    score: float
    recall: float = 0.0
    precision: float = 0.0
    valid: bool = False
    reason: str | None = None
    entities: tuple[str, ...] = ()
    checklist: DiagnosisScore | None = None

    def to_json(self) -> dict[str, Any]:
        checklist = None
        if self.checklist is not None:
            c = self.checklist
            checklist = {"score": round(c.checklist_score, 6), "passed": c.passed, "judge": c.judge,
                         "judge_model": c.judge_model,
                         "dimensions": {k: round(v, 6) for k, v in sorted(c.dimension_scores.items())},
                         "answers": [{"id": a.id, "answer": a.answer, "evidence": a.evidence} for a in c.checklist]}
        return {"repeat": self.repeat, "score": round(self.score, 6), "recall": round(self.recall, 6),
                "precision": round(self.precision, 6), "valid": self.valid, "reason": self.reason,
                "entities": list(self.entities), "checklist": checklist}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _r6(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


@dataclass(frozen=True)
class TaskScore:
    """One task: its repeats, their mean, and the checklist mean over repeats that have one."""

    task: str
    problem: str
    seed: int | None
    layers: tuple[str, ...]
    repeats: tuple[RepeatScore, ...]

    @property
    def score(self) -> float:
        return _mean([r.score for r in self.repeats]) or 0.0

    @property
    def checklist(self) -> float | None:
        return _mean([r.checklist.checklist_score for r in self.repeats if r.checklist is not None])

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "problem": self.problem, "seed": self.seed, "layers": list(self.layers),
                "score": round(self.score, 6), "checklist": _r6(self.checklist),
                "repeats": [r.to_json() for r in self.repeats]}


@dataclass(frozen=True)
class ScoreReport:
    """All tasks of a run; `score` is the benchmark score (mean over tasks)."""

    dataset: str
    outputs: str
    repeats: int
    judge: str
    tasks: tuple[TaskScore, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def score(self) -> float:
        return _mean([t.score for t in self.tasks]) or 0.0

    @property
    def checklist(self) -> float | None:
        """Mean over the tasks that have a checklist mean (tasks without explanations are left out)."""
        return _mean([c for t in self.tasks if (c := t.checklist) is not None])

    def layers(self) -> dict[str, tuple[float, int]]:
        """Layer tag -> (mean task score, number of tasks); a task counts under each of its tags."""
        groups: dict[str, list[float]] = {}
        for t in self.tasks:
            for layer in sorted(set(t.layers)):
                groups.setdefault(layer, []).append(t.score)
        return {layer: (sum(v) / len(v), len(v)) for layer, v in sorted(groups.items())}

    def to_json(self) -> dict[str, Any]:
        return {"format": SCORE_FORMAT, "dataset": self.dataset, "outputs": self.outputs, "repeats": self.repeats,
                "judge": self.judge, "score": round(self.score, 6), "checklist": _r6(self.checklist),
                "tasks_scored": len(self.tasks),
                "layers": {k: {"score": round(s, 6), "tasks": n} for k, (s, n) in self.layers().items()},
                "notes": list(self.notes), "tasks": [t.to_json() for t in self.tasks]}

    def table(self) -> str:
        """A plain aligned text table (3 decimals), the benchmark score, per-layer means and the
        reasons of the repeats that scored 0 because their output was missing or invalid."""
        head = ["task", "problem", "seed", *(f"r{k}" for k in range(1, self.repeats + 1)), "score", "checklist"]
        rows = [head]
        for t in self.tasks:
            cells = [f"{r.score:.3f}" + (" " if r.valid else "*") for r in t.repeats]
            rows.append([t.task, t.problem, "-" if t.seed is None else str(t.seed), *cells, f"{t.score:.3f}",
                         "-" if t.checklist is None else f"{t.checklist:.3f}"])
        lines = _aligned(rows, numeric=set(range(2, len(head))))
        checklist = "-" if self.checklist is None else f"{self.checklist:.3f}"
        lines += ["", f"benchmark score: {self.score:.3f} (mean over {len(self.tasks)} task{_s(len(self.tasks))}, "
                      f"{self.repeats} repeat{_s(self.repeats)} each); checklist: {checklist} ({self.judge} judge)"]
        for layer, (s, n) in self.layers().items():
            lines.append(f"  {layer}: {s:.3f} ({n} task{_s(n)})")
        failed = [(t.task, r) for t in self.tasks for r in t.repeats if not r.valid]
        if failed:
            lines += ["", "* output missing or invalid (scored 0):"]
            for task, r in failed:
                reason = " ".join((r.reason or "").split())
                lines.append(f"  {task} repeat {r.repeat}: {reason}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _aligned(rows: list[list[str]], *, numeric: set[int]) -> list[str]:
    """Columns padded to their widest cell (numbers right-aligned), a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(row: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths,
                                                                                                strict=True)))

    out = [line(row).rstrip() for row in rows]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


def _load_index(dataset: Path) -> DatasetIndex:
    try:
        return read_index(dataset)
    except DatasetError as err:
        raise ScoreError(str(err)) from None


def _load_truth(task: DatasetTask) -> GroundTruth:
    assert task.ground_truth is not None  # read_index always sets it
    try:
        return load_ground_truth(task.ground_truth, f"ground truth of {task.name}")
    except DatasetError as err:
        raise ScoreError(str(err)) from None


def _layers(task: DatasetTask) -> tuple[str, ...]:
    """Layer tags from the index entry if it has them, else from the problem registry."""
    if task.layers is not None:
        return task.layers
    from sregym.problems import get_problem

    try:
        return tuple(get_problem(task.problem).tags.layers)
    except KeyError:
        return ()


def _read_run(outputs: Path, index: DatasetIndex) -> dict[str, Any] | None:
    """`run.json` if there is one, checked to describe a run on this very dataset."""
    run_path = outputs / layout.RUN_JSON
    if not run_path.is_file():
        return None
    run = read_json(run_path, "run description", ScoreError)
    if not isinstance(run, dict):
        raise ScoreError(f"{run_path} is not a JSON object; {_HOW}")
    fingerprint = run.get("index_sha256")
    if fingerprint is not None and fingerprint != index.fingerprint:
        raise ScoreError(f"{outputs} holds a run on another dataset ({run.get('dataset')}), not on {index.root}: "
                         f"score it with --dataset {run.get('dataset')}, or pass the --outputs of a run on "
                         f"{index.root}")
    return run


def _repeat_count(outputs: Path, run: dict[str, Any] | None, tasks: Sequence[DatasetTask]) -> tuple[int, list[str]]:
    if run is not None:
        repeats = run.get("repeats")
        if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
            raise ScoreError(f"{outputs / layout.RUN_JSON}: `repeats` must be a positive integer, got {repeats!r}")
        return repeats, []
    found = [int(m.group(1)) for task in tasks if (outputs / task.name).is_dir()
             for d in (outputs / task.name).iterdir() if d.is_dir() and (m := _REPEAT_DIR.fullmatch(d.name))]
    if not found:
        raise ScoreError(f"{outputs} has no {layout.RUN_JSON} and no <task>/repeat-<k>/ directories of this "
                         f"dataset's tasks: {_HOW} on this dataset")
    return max(found), [f"no {layout.RUN_JSON}: repeats taken as {max(found)}, the highest repeat directory present"]


def _missing_reason(repeat_dir: Path) -> str:
    if not repeat_dir.is_dir():
        return f"no output: {repeat_dir} does not exist (the repeat did not run)"
    reason = f"no output: {repeat_dir / layout.OUTPUT_JSON} does not exist"
    try:
        status = read_json(repeat_dir / layout.STATUS_JSON, "status")
    except ValueError:
        return reason
    if isinstance(status, dict) and status.get("error"):
        reason += f" (agent error: {status['error']})"
    return reason


def score_repeat(truth: GroundTruth, repeat_dir: Path, repeat: int, *, judge: Judge | None = None,
                 judge_name: str = "deterministic", judge_model: str | None = None) -> RepeatScore:
    """Score `repeat_dir/output.json` against `truth` (0 with a reason when missing or invalid)."""
    path = repeat_dir / layout.OUTPUT_JSON
    if not path.is_file():
        return RepeatScore(repeat=repeat, score=0.0, reason=_missing_reason(repeat_dir))
    try:
        output = load_output(path)
    except OutputError as err:
        return RepeatScore(repeat=repeat, score=0.0, reason=str(err))
    submission = output.to_submission()
    score, recall, precision = root_cause_score(truth, submission)
    checklist = None
    if output.has_explanation:
        checklist = score_diagnosis(truth, submission, judge=judge, judge_name=judge_name, judge_model=judge_model)
    return RepeatScore(repeat=repeat, score=score, recall=recall, precision=precision, valid=True,
                       entities=tuple(str(r) for r in submission.root_causes), checklist=checklist)


def score_outputs(dataset: Path, outputs: Path, *, judge: Judge | None = None,
                  judge_name: str | None = None, judge_model: str | None = None) -> ScoreReport:
    """Score every task of `dataset` from the repeats in `outputs` (see the module docstring).

    `judge` answers the checklist (default: the deterministic judge); `judge_name` defaults to
    "deterministic" without a judge and "custom" with one. Raises `ScoreError` when the dataset or
    the outputs directory is not usable.
    """
    dataset, outputs = Path(dataset), Path(outputs)
    index = _load_index(dataset)
    if not outputs.is_dir():
        raise ScoreError(f"outputs directory not found: {outputs}; {_HOW}")
    repeats, notes = _repeat_count(outputs, _read_run(outputs, index), index.tasks)
    name = judge_name or ("deterministic" if judge is None else "custom")
    tasks = []
    for task in index.tasks:
        truth = _load_truth(task)
        scores = tuple(score_repeat(truth, outputs / task.name / layout.repeat_dir(k), k, judge=judge,
                                    judge_name=name, judge_model=judge_model) for k in range(1, repeats + 1))
        tasks.append(TaskScore(task=task.name, problem=task.problem, seed=task.seed, layers=_layers(task),
                               repeats=scores))
    known = {t.name for t in index.tasks}
    extra = sorted(d.name for d in outputs.iterdir() if d.is_dir() and d.name not in known)
    if extra:
        notes.append(f"ignored output directories not in the dataset index: {', '.join(extra)}")
    return ScoreReport(dataset=str(dataset.resolve()), outputs=str(outputs.resolve()), repeats=repeats,
                       judge=name, tasks=tuple(tasks), notes=tuple(notes))


__all__ = ["RepeatScore", "ScoreError", "ScoreReport", "TaskScore", "score_outputs", "score_repeat"]
