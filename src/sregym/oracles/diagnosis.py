"""The diagnosis oracle: root-cause precision at full recall, plus the 3×3 checklist.

Root-cause score: if any ground-truth root cause is not named (directly or through an alias, e.g.
one of a root-cause Deployment's Pods) the score is 0; otherwise it is the share of submitted
root causes that are true root causes. Several submitted aliases of one root cause count once as
a true positive, and their duplicates do not dilute precision: naming the Deployment and its Pod
is the same answer twice, not a false accusation.

The checklist is answered by the deterministic judge (`checklist.deterministic_judge`) or by an
LLM judge (`llm_judge.LLMJudge`); both return the same `ChecklistAnswer`s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from sregym.oracles.checklist import PASS_THRESHOLD, aggregate, deterministic_judge
from sregym.oracles.mechanisms import Vocabulary
from sregym.types import (
    ChecklistAnswer,
    DiagnosisScore,
    DiagnosisSubmission,
    EntityRef,
    GroundTruth,
    RootCause,
)

Judge = Callable[[GroundTruth, DiagnosisSubmission], Sequence[ChecklistAnswer]]


def match_root_cause(causes: Sequence[RootCause], ref: EntityRef) -> int | None:
    """Index of the root cause `ref` names (directly or by alias), or None."""
    for index, cause in enumerate(causes):
        if cause.matches(ref):
            return index
    return None


def root_cause_score(truth: GroundTruth, submission: DiagnosisSubmission) -> tuple[float, float, float]:
    """(score, recall, precision): precision at full recall, 0 when recall < 1."""
    found: set[int] = set()
    false_positives = 0
    for ref in dict.fromkeys(submission.root_causes):  # exact duplicates count once
        index = match_root_cause(truth.root_causes, ref)
        if index is None:
            false_positives += 1
        else:
            found.add(index)
    total = len(truth.root_causes)
    recall = len(found) / total if total else 1.0
    submitted = len(found) + false_positives
    precision = len(found) / submitted if submitted else 0.0
    score = precision if recall >= 1.0 else 0.0
    return score, recall, precision


def score_diagnosis(truth: GroundTruth, submission: DiagnosisSubmission, *,
                    judge: Judge | None = None, judge_name: str = "deterministic",
                    judge_model: str | None = None, vocabulary: Vocabulary | None = None) -> DiagnosisScore:
    """Score `submission`; the deterministic judge reads mechanisms with `vocabulary` (the
    problem's, from `sregym.problems.vocabulary_of`; the built-in one when None)."""
    score, recall, precision = root_cause_score(truth, submission)
    if judge is None:
        judge = deterministic_judge if vocabulary is None else partial(deterministic_judge, vocabulary=vocabulary)
    answers = tuple(judge(truth, submission))
    total, per_dimension = aggregate(answers)
    return DiagnosisScore(root_cause_score=round(score, 6), recall=round(recall, 6),
                          precision=round(precision, 6), checklist=answers,
                          checklist_score=round(total, 6), dimension_scores=per_dimension,
                          passed=total >= PASS_THRESHOLD, judge=judge_name, judge_model=judge_model)


def score_no_root_cause(submission: DiagnosisSubmission) -> DiagnosisScore:
    """Score a diagnosis of a no-incident control: nothing is broken, so the right diagnosis names
    no root cause. Naming one blames a healthy component; the checklist does not apply (there is
    no mechanism or scope to judge), so it is left empty."""
    clean = not submission.root_causes
    value = 1.0 if clean else 0.0
    return DiagnosisScore(root_cause_score=value, recall=1.0, precision=value, checklist=(),
                          checklist_score=value, dimension_scores={}, passed=clean, judge="no-root-cause")
