"""How far a checklist judge agrees with human labels: Cohen's κ per question and pooled.

The labelled set (`tests/data/judge/` in the repository) holds diagnoses written the way agents
phrase them, each with the answers a careful grader gives to the nine checklist questions. A judge
is run on every item with the problem's ground truth and vocabulary, and its answers are compared
with the labels: κ per question, κ pooled over all 9 × N answers, and raw agreement. The problems
are split once (recorded in `split.json`): the judge is tuned on the development part, and the
held-out part shows whether the tuning generalises.

κ corrects raw agreement for the agreement two raters would reach by chance with their own
yes-rates: κ = (p_o − p_e) / (1 − p_e). When both raters give one answer everywhere (p_e = 1),
κ is 1 if they agree and 0 otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sregym.oracles.checklist import QUESTIONS
from sregym.types import ChecklistAnswer, DiagnosisSubmission, GroundTruth

QUESTION_IDS = tuple(q.id for q in QUESTIONS)
PARTS = ("all", "dev", "held-out")

JudgeFn = Callable[[str, GroundTruth, DiagnosisSubmission], Sequence[ChecklistAnswer]]


def default_set_dir() -> Path:
    """`tests/data/judge` of the source tree this package was installed from (editable installs)."""
    return Path(__file__).resolve().parents[3] / "tests" / "data" / "judge"


@dataclass(frozen=True)
class Item:
    """One labelled diagnosis."""

    id: str
    problem: str
    category: str
    source: str  # "template" or "hand"
    submission: DiagnosisSubmission
    expected: dict[str, bool]


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's κ of two raters' yes/no answers to the same questions."""
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two equally long, non-empty answer lists")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    yes_a, yes_b = sum(a) / n, sum(b) / n
    chance = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    if chance >= 1.0:
        return 1.0 if observed >= 1.0 else 0.0
    return (observed - chance) / (1 - chance)


def _item(raw: dict[str, Any], source: str) -> Item:
    sub = raw["submission"]
    expected = raw["expected"]
    if isinstance(expected, str):  # "YYN YYY NYY", question order
        flags = expected.replace(" ", "")
        expected = {q: f == "Y" for q, f in zip(QUESTION_IDS, flags, strict=True)}
    if set(expected) != set(QUESTION_IDS):
        raise ValueError(f"item {raw['id']}: labels must answer {', '.join(QUESTION_IDS)}")
    submission = DiagnosisSubmission.from_texts(sub.get("root_causes", ()), sub.get("mechanism", ""),
                                                sub.get("affected", ()), sub.get("explanation", ""))
    return Item(id=raw["id"], problem=raw["problem"], category=raw["category"],
                source=raw.get("source", source), submission=submission,
                expected={q: bool(expected[q]) for q in QUESTION_IDS})


def load_set(directory: Path | None = None) -> tuple[list[Item], frozenset[str]]:
    """(items, held-out problem ids) of the labelled set in `directory`."""
    root = directory or default_set_dir()
    items: list[Item] = []
    generated = root / "generated.json"
    if generated.exists():
        items += [_item(raw, "template") for raw in json.loads(generated.read_text())]
    for path in sorted(root.glob("*.yaml")):
        items += [_item(raw, "hand") for raw in yaml.safe_load(path.read_text()) or []]
    split = json.loads((root / "split.json").read_text())
    ids = [i.id for i in items]
    if len(ids) != len(set(ids)):
        raise ValueError("labelled set: item ids repeat")
    return items, frozenset(split["held_out"])


@dataclass
class Agreement:
    """κ and raw agreement of one judge against the labels, on one part of the set."""

    items: int
    kappa: dict[str, float]  # per question, plus "overall" (pooled over every answer)
    raw: dict[str, float]
    disagreements: list[tuple[str, str, bool, bool]] = field(default_factory=list)  # (item, q, label, judge)


def agreement(pairs: Iterable[tuple[Item, dict[str, bool]]]) -> Agreement:
    """Compare judged answers with the labels of their items."""
    pairs = list(pairs)
    kappa: dict[str, float] = {}
    raw: dict[str, float] = {}
    all_labels: list[bool] = []
    all_judged: list[bool] = []
    for q in QUESTION_IDS:
        labels = [item.expected[q] for item, _ in pairs]
        judged = [answers[q] for _, answers in pairs]
        kappa[q] = cohen_kappa(labels, judged)
        raw[q] = sum(x == y for x, y in zip(labels, judged, strict=True)) / len(labels)
        all_labels += labels
        all_judged += judged
    kappa["overall"] = cohen_kappa(all_labels, all_judged)
    raw["overall"] = sum(x == y for x, y in zip(all_labels, all_judged, strict=True)) / len(all_labels)
    wrong = [(item.id, q, item.expected[q], answers[q]) for item, answers in pairs for q in QUESTION_IDS
             if item.expected[q] != answers[q]]
    return Agreement(items=len(pairs), kappa=kappa, raw=raw, disagreements=wrong)


def deterministic(problem_id: str, truth: GroundTruth, sub: DiagnosisSubmission) -> Sequence[ChecklistAnswer]:
    from sregym.oracles.checklist import deterministic_judge
    from sregym.problems import vocabulary_of

    return deterministic_judge(truth, sub, vocabulary=vocabulary_of(problem_id))


def evaluate(judge: JudgeFn, items: Sequence[Item], held_out: frozenset[str]) -> dict[str, Agreement]:
    """The judge's agreement on the whole set, its development part and its held-out part."""
    from sregym.problems import get_problem

    judged: list[tuple[Item, dict[str, bool]]] = []
    for item in items:
        answers = judge(item.problem, get_problem(item.problem).ground_truth, item.submission)
        judged.append((item, {a.id: a.answer for a in answers}))
    parts = {"all": judged,
             "dev": [p for p in judged if p[0].problem not in held_out],
             "held-out": [p for p in judged if p[0].problem in held_out]}
    return {name: agreement(pairs) for name, pairs in parts.items() if pairs}


def render(results: dict[str, Agreement], title: str) -> str:
    """A plain-text table: κ per question and overall for each part, raw agreement overall."""
    head = f"{'part':<10}{'items':>6}  " + "".join(f"{q:>6}" for q in QUESTION_IDS) + f"{'κ all':>8}{'raw':>7}"
    lines = [title, head]
    for name, res in results.items():
        cells = "".join(f"{res.kappa[q]:>6.2f}" for q in QUESTION_IDS)
        lines.append(f"{name:<10}{res.items:>6}  {cells}{res.kappa['overall']:>8.3f}{res.raw['overall']:>7.3f}")
    return "\n".join(lines)


__all__ = ["PARTS", "QUESTION_IDS", "Agreement", "Item", "agreement", "cohen_kappa", "default_set_dir",
           "deterministic", "evaluate", "load_set", "render"]
