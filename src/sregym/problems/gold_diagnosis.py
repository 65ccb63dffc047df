"""The gold diagnosis: what the `gold` agent submits, written from the problem's ground truth.

Kept apart from the agent so `sregym check` can score the very same submission with the
diagnosis oracle without running an attempt: a ground truth whose own words do not earn it the
diagnosis (a detail keyword that the detail never mentions, a root cause also listed as affected,
an impact nobody could describe) then fails `check` instead of showing up only in a full run.
"""

from __future__ import annotations

from typing import Any

from sregym.oracles.diagnosis import score_diagnosis, score_no_root_cause
from sregym.oracles.mechanisms import BUILTIN, Vocabulary
from sregym.problems.model import Problem
from sregym.problems.vocabulary import vocabulary_of
from sregym.types import DiagnosisScore, DiagnosisSubmission, GroundTruth

# The checklist question the gold diagnosis may miss: cue phrases of different mechanisms overlap
# ("nodeSelector" contains "selector"), so a right mechanism can also read as another one. That is
# the judge being strict with agents, not the ground truth being inconsistent.
MAY_MISS = frozenset({"C3"})


def gold_diagnosis_args(truth: GroundTruth, vocabulary: Vocabulary = BUILTIN) -> dict[str, Any]:
    """`submit_diagnosis` arguments written from the ground truth."""
    if not truth.root_causes:  # a no-incident control
        return {"root_cause_entities": [], "mechanism": "none", "affected_entities": [],
                "explanation": "Nothing is wrong: the system is operating normally."}
    cues = vocabulary.cues.get(truth.mechanism, ())
    mechanism = f"{truth.mechanism.replace('_', ' ')} ({cues[0]})" if cues else truth.mechanism
    impact = truth.impact_keywords[0] if truth.impact_keywords else "failing"
    return {"root_cause_entities": [str(rc.entity) for rc in truth.root_causes],
            "mechanism": mechanism,
            "affected_entities": [str(a.entity) for a in truth.affected],
            "explanation": f"{truth.detail}. {truth.description} Impact: requests {impact}."}


def submission_from_args(args: dict[str, Any]) -> DiagnosisSubmission:
    """The submission `submit_diagnosis` records for these arguments."""
    return DiagnosisSubmission.from_texts(args["root_cause_entities"], args["mechanism"],
                                          args.get("affected_entities", ()), args.get("explanation", ""))


def score_gold_diagnosis(problem: Problem) -> tuple[bool, str, DiagnosisScore]:
    """(passed, detail, score) of the gold diagnosis under the deterministic judge and the problem's
    vocabulary: every root cause found with full precision and every checklist answer yes (but
    `MAY_MISS`), and the checklist passing."""
    vocabulary = vocabulary_of(problem.id)
    args = gold_diagnosis_args(problem.ground_truth, vocabulary)
    if problem.is_control:  # nothing is broken: the gold diagnosis names no root cause
        score = score_no_root_cause(submission_from_args(args))
        return score.passed, "" if score.passed else "the gold diagnosis of a control names a root cause", score
    score = score_diagnosis(problem.ground_truth, submission_from_args(args), vocabulary=vocabulary)
    missed = [a for a in score.checklist if not a.answer and a.id not in MAY_MISS]
    problems = [f"{a.id} no: {a.evidence}" for a in missed]
    if score.root_cause_score < 1.0:
        problems.insert(0, f"root-cause score {score.root_cause_score} (recall {score.recall}, "
                           f"precision {score.precision})")
    if not score.passed:
        problems.append(f"checklist {score.checklist_score} below the pass mark")
    return not problems, "; ".join(problems), score
