"""The diagnosis checklist: three dimensions × three yes/no questions, and the deterministic judge.

Dimensions are weighted 0.33 (localization), 0.33 (characterization) and 0.34 (scope); within a
dimension each "yes" counts a third. A diagnosis passes at 0.70 or more.

The deterministic judge answers from the structured submission only, so it is reproducible and
needs no model: entities are compared with the ground truth (aliases included), the mechanism
text is mapped to canonical mechanisms (the problem's `mechanisms.Vocabulary`), and the concrete detail and impact
are looked for by keyword. An empty submission answers "no" everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sregym.oracles.mechanisms import BUILTIN, Vocabulary
from sregym.types import ChecklistAnswer, DiagnosisSubmission, Dimension, EntityRef, GroundTruth

WEIGHTS: dict[str, float] = {"localization": 0.33, "characterization": 0.33, "scope": 0.34}
PASS_THRESHOLD = 0.70


@dataclass(frozen=True)
class Question:
    id: str
    dimension: Dimension
    text: str


QUESTIONS: tuple[Question, ...] = (
    Question("L1", "localization",
             "Does the diagnosis point at the component where the failure started (every true root "
             "cause, or an object that stands for it)?"),
    Question("L2", "localization",
             "Does it keep the origin apart from the components that only suffer downstream, i.e. "
             "it does not present a symptomatic component as a root cause?"),
    Question("L3", "localization",
             "Is every component it calls a root cause actually at fault (no healthy component "
             "accused)?"),
    Question("C1", "characterization",
             "Does it name the kind of fault that really happened (the right failure mechanism)?"),
    Question("C2", "characterization",
             "Does it state the concrete thing that was changed (the offending value, key, label, "
             "image or object)?"),
    Question("C3", "characterization",
             "Does it avoid claiming a different kind of fault than the one that happened?"),
    Question("S1", "scope",
             "Does it leave out components that have nothing to do with the incident?"),
    Question("S2", "scope",
             "Does it name every component involved (root causes and the affected ones)?"),
    Question("S3", "scope",
             "Does it describe the impact in a way consistent with what users and dependants "
             "actually experienced?"),
)


def aggregate(answers: Sequence[ChecklistAnswer]) -> tuple[float, dict[str, float]]:
    """Weighted total and per-dimension scores (share of yes per dimension)."""
    per: dict[str, float] = {}
    for dimension in WEIGHTS:
        mine = [a for a in answers if a.dimension == dimension]
        per[dimension] = round(sum(a.answer for a in mine) / 3.0, 6) if mine else 0.0
    total = sum(WEIGHTS[d] * per[d] for d in WEIGHTS)
    return round(total, 6), per


def _names(refs: Sequence[EntityRef]) -> str:
    return ", ".join(str(r) for r in refs) or "none"


def deterministic_judge(truth: GroundTruth, sub: DiagnosisSubmission, *,
                        vocabulary: Vocabulary = BUILTIN) -> list[ChecklistAnswer]:
    """Answer the nine questions from the structured submission; mechanisms are read with the
    problem's `vocabulary` (the built-in one unless its problem set added mechanisms)."""
    def in_root(ref: EntityRef) -> bool:
        return any(c.matches(ref) for c in truth.root_causes)

    def in_affected(ref: EntityRef) -> bool:
        return any(c.matches(ref) for c in truth.affected) and not in_root(ref)

    def involved(ref: EntityRef) -> bool:
        return any(c.matches(ref) for c in truth.involved)

    text = f"{sub.mechanism}\n{sub.explanation}".lower()
    empty = not sub.root_causes and not text.strip()
    answers: dict[str, tuple[bool, str]] = {}

    found = [c for c in truth.root_causes if any(c.matches(r) for r in sub.root_causes)]
    answers["L1"] = (len(found) == len(truth.root_causes) and bool(sub.root_causes),
                     f"root causes named: {len(found)}/{len(truth.root_causes)}")
    symptomatic = [r for r in sub.root_causes if in_affected(r)]
    answers["L2"] = (bool(sub.root_causes) and not symptomatic,
                     f"symptomatic components blamed as root cause: {_names(symptomatic)}")
    wrong = [r for r in sub.root_causes if not in_root(r)]
    answers["L3"] = (bool(sub.root_causes) and not wrong,
                     f"root causes not at fault: {_names(wrong)}")

    named = vocabulary.classify(sub.mechanism)
    answers["C1"] = (truth.mechanism in named, f"mechanism read as {sorted(named) or 'nothing'}; "
                                               f"expected {truth.mechanism}")
    keywords = [k for k in truth.detail_keywords if k.lower() in text]
    answers["C2"] = (bool(keywords), f"concrete details mentioned: {keywords or 'none'}")
    allowed = vocabulary.allowed(truth.mechanism)
    others = sorted(named - allowed)
    answers["C3"] = (bool(named) and not others, f"other fault types claimed: {others or 'none'}")

    mentioned = [*sub.root_causes, *sub.affected]
    uninvolved = [r for r in mentioned if not involved(r)]
    answers["S1"] = (bool(mentioned) and not uninvolved, f"uninvolved components named: {_names(uninvolved)}")
    missing = [c.entity for c in truth.involved if not any(c.matches(r) for r in mentioned)]
    answers["S2"] = (bool(mentioned) and not missing, f"involved components not named: {_names(missing)}")
    impact = [k for k in truth.impact_keywords if k.lower() in text]
    affected_named = [r for r in sub.affected if involved(r)] or [r for r in sub.root_causes if in_root(r)]
    answers["S3"] = (bool(sub.explanation.strip()) and bool(impact) and bool(affected_named),
                     f"impact words: {impact or 'none'}")

    out = []
    for q in QUESTIONS:
        answer, evidence = answers[q.id]
        out.append(ChecklistAnswer(id=q.id, dimension=q.dimension, question=q.text,
                                   answer=bool(answer) and not empty, evidence=evidence, confidence=1.0))
    return out
