"""Score a run of an agent over a snapshot dataset, the ITBench-AA way.

Per repeat: precision at full recall of the submitted root-cause entities (any missed root cause
⇒ 0, else true positives / submitted), computed by the live oracle's own
`oracles.diagnosis.root_cause_score` on the ground truth the live oracle uses
(`GroundTruth.model_validate(ground_truth.json["ground_truth"])`), so aliases (a Pod of a
root-cause Deployment) and kind spellings count exactly as they do live. A missing or invalid
`output.json` scores 0 and the reason is kept. Task score = mean over repeats (a repeat the run
never produced counts 0); benchmark score = mean over tasks; per layer tag, the mean over the tasks
of problems with that tag.

The 3×3 checklist is scored only for repeats whose output has an explanation: without text the
checklist's characterization and impact questions have nothing to read, and an all-"no" checklist
would mean "no explanation given", not "a wrong explanation". The explanation is passed as both the
mechanism and the explanation of the `DiagnosisSubmission` (`AgentOutput.to_submission`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sregym.errors import SregymError
from sregym.oracles.diagnosis import Judge, root_cause_score, score_diagnosis
from sregym.snapshot.output import OutputError, load_output
from sregym.types import DiagnosisScore, GroundTruth

SCORE_FORMAT = "sregym-score/1"
DATASET_FORMAT = "sregym-dataset/1"
_REPEAT_DIR = re.compile(r"repeat-(\d+)")


class ScoreError(SregymError, ValueError):
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
        lines += ["", f"benchmark score: {self.score:.3f} (mean over {len(self.tasks)} tasks, "
                      f"{self.repeats} repeat{'' if self.repeats == 1 else 's'} each); checklist: {checklist} ({self.judge} judge)"]
        for layer, (s, n) in self.layers().items():
            lines.append(f"  {layer}: {s:.3f} ({n} task{'' if n == 1 else 's'})")
        failed = [(t.task, r) for t in self.tasks for r in t.repeats if not r.valid]
        if failed:
            lines += ["", "* output missing or invalid (scored 0):"]
            for task, r in failed:
                reason = " ".join((r.reason or "").split())
                lines.append(f"  {task} repeat {r.repeat}: {reason}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def _aligned(rows: list[list[str]], *, numeric: set[int]) -> list[str]:
    """Columns padded to their widest cell (numbers right-aligned), a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(row: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths,
                                                                                                strict=True)))

    out = [line(row).rstrip() for row in rows]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScoreError(f"{what} not found: {path}") from None
    except (OSError, ValueError) as err:
        raise ScoreError(f"{what} {path} is not readable JSON: {err}") from None


def _load_index(dataset: Path) -> list[dict[str, Any]]:
    if not dataset.is_dir():
        raise ScoreError(f"dataset directory not found: {dataset}")
    index_path = dataset / "index.json"
    if not index_path.is_file():
        raise ScoreError(f"{dataset} has no index.json: point --dataset at a directory written by "
                         "`sregym snapshot dataset`")
    index = _read_json(index_path, "dataset index")
    if not isinstance(index, dict) or index.get("format") != DATASET_FORMAT:
        raise ScoreError(f"{index_path} is not a {DATASET_FORMAT} index (format: "
                         f"{index.get('format') if isinstance(index, dict) else None!r})")
    tasks = index.get("tasks")
    if not isinstance(tasks, list) or not all(isinstance(t, dict) and "task" in t for t in tasks):
        raise ScoreError(f"{index_path}: `tasks` must be a list of objects with a `task` key")
    return tasks


def _load_truth(dataset: Path, entry: dict[str, Any]) -> GroundTruth:
    rel = entry.get("ground_truth") or f"ground_truth/{entry['task']}.json"
    path = dataset / rel
    data = _read_json(path, f"ground truth of {entry['task']}")
    try:
        return GroundTruth.model_validate(data["ground_truth"])
    except (KeyError, TypeError, ValueError) as err:
        raise ScoreError(f"{path}: no valid `ground_truth` object ({err})") from None


def _layers(entry: dict[str, Any]) -> tuple[str, ...]:
    """Layer tags from the index entry if it has them, else from the problem registry."""
    if isinstance(entry.get("layers"), list):
        return tuple(str(x) for x in entry["layers"])
    from sregym.problems import get_problem

    try:
        return tuple(get_problem(str(entry.get("problem", ""))).tags.layers)
    except KeyError:
        return ()


def _repeat_count(outputs: Path, tasks: list[dict[str, Any]]) -> tuple[int, list[str]]:
    run_path = outputs / "run.json"
    if run_path.is_file():
        run = _read_json(run_path, "run description")
        repeats = run.get("repeats") if isinstance(run, dict) else None
        if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
            raise ScoreError(f"{run_path}: `repeats` must be a positive integer, got {repeats!r}")
        return repeats, []
    found = [int(m.group(1)) for entry in tasks if (outputs / entry["task"]).is_dir()
             for d in (outputs / entry["task"]).iterdir() if d.is_dir() and (m := _REPEAT_DIR.fullmatch(d.name))]
    if not found:
        raise ScoreError(f"{outputs} has no run.json and no <task>/repeat-<k>/ directories: point --outputs at "
                         "a directory written by `sregym snapshot run`")
    return max(found), [f"no run.json: repeats taken as {max(found)}, the highest repeat directory present"]


def _missing_reason(repeat_dir: Path) -> str:
    if not repeat_dir.is_dir():
        return f"no output: {repeat_dir} does not exist (the repeat did not run)"
    reason = f"no output: {repeat_dir / 'output.json'} does not exist"
    try:
        status = json.loads((repeat_dir / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return reason
    if isinstance(status, dict) and status.get("error"):
        reason += f" (agent error: {status['error']})"
    return reason


def score_repeat(truth: GroundTruth, repeat_dir: Path, repeat: int, *, judge: Judge | None = None,
                 judge_name: str = "deterministic", judge_model: str | None = None) -> RepeatScore:
    """Score `repeat_dir/output.json` against `truth` (0 with a reason when missing or invalid)."""
    path = repeat_dir / "output.json"
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
    entries = _load_index(dataset)
    if not outputs.is_dir():
        raise ScoreError(f"outputs directory not found: {outputs}")
    repeats, notes = _repeat_count(outputs, entries)
    name = judge_name or ("deterministic" if judge is None else "custom")
    tasks = []
    for entry in entries:
        truth = _load_truth(dataset, entry)
        task = str(entry["task"])
        scores = tuple(score_repeat(truth, outputs / task / f"repeat-{k}", k, judge=judge, judge_name=name,
                                    judge_model=judge_model) for k in range(1, repeats + 1))
        seed = entry.get("seed")
        tasks.append(TaskScore(task=task, problem=str(entry.get("problem", "")),
                               seed=seed if isinstance(seed, int) else None, layers=_layers(entry),
                               repeats=scores))
    known = {str(e["task"]) for e in entries}
    extra = sorted(d.name for d in outputs.iterdir() if d.is_dir() and d.name not in known)
    if extra:
        notes.append(f"ignored output directories not in the dataset index: {', '.join(extra)}")
    return ScoreReport(dataset=str(dataset.resolve()), outputs=str(outputs.resolve()), repeats=repeats,
                       judge=name, tasks=tuple(tasks), notes=tuple(notes))


__all__ = ["RepeatScore", "ScoreError", "ScoreReport", "TaskScore", "score_outputs", "score_repeat"]
