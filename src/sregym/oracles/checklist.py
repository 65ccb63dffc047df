"""The diagnosis checklist: three dimensions × three yes/no questions, and the deterministic judge.

Dimensions are weighted 0.33 (localization), 0.33 (characterization) and 0.34 (scope); within a
dimension each "yes" counts a third. A diagnosis passes at 0.70 or more.

The deterministic judge answers from the structured submission only, so it is reproducible and
needs no model: entities are compared with the ground truth (aliases included), the mechanism
text is mapped to canonical mechanisms (the problem's `mechanisms.Vocabulary`), and the concrete detail and impact
are looked for by keyword. An empty submission answers "no" everywhere.
"""

from __future__ import annotations

import re
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


# Words that describe what users and dependants experience, on top of a problem's own impact words.
IMPACT_WORDS: tuple[str, ...] = (
    "fail", "error", "timeout", "time out", "timed out", "times out", "timing out", "unavailable", "down",
    "slow", "latency", "refused", "cannot", "can't", "unreachable", "500", "502", "503", "504", "outage",
    "degraded", "stuck", "never start", "no ready", "lost", "dropped", "broken", "not served", "not answer",
    "unable", "pile up", "evicted", "restart",
)

# Statements that deny an impact or leave it open: the impact is then not described.
_IMPACT_DENIED = re.compile(
    r"\bno (?:user[- ]facing |user[- ]visible |customer[- ]facing |visible |real |noticeable |user )?impact\b"
    r"|\b(?:users?|customers?|clients?) (?:are|were|is|was) (?:not|un)affected\b"
    r"|\b(?:every|all) requests? (?:still )?succeed|\brequests? still succeed"
    r"|\bnot sure (?:what|how|whether|if)\b|\b(?:impact|effect) (?:is )?(?:unknown|unclear|not known)\b"
    r"|\bunknown impact\b|\bunclear impact\b")


def _mentions(text: str, word: str) -> bool:
    """`word` at a word start; short words (under five characters) also need a word end, so "0"
    does not find "500" and "user" does not find "users"."""
    tail = "" if len(word) >= 5 or not word[-1:].isalnum() else r"(?![a-z0-9])"
    return re.search(rf"(?<![a-z0-9]){re.escape(word.lower())}{tail}", text) is not None


_DELETION = re.compile(r"\b(?:deleted|removed|missing|gone|no longer exists?|does not exist|doesn't exist|not found)\b")


def deleted_objects(truth: GroundTruth) -> set[str]:
    """Names of root causes the truth's detail says were deleted or removed."""
    detail = truth.detail.lower()
    return {c.entity.name.lower() for c in truth.root_causes
            if re.search(rf"{re.escape(c.entity.name.lower())}.{{0,60}}\b(?:was|were) (?:deleted|removed)", detail)}


def concrete_details(truth: GroundTruth, sub: DiagnosisSubmission, vocabulary: Vocabulary) -> list[str]:
    """The truth's detail keywords the submission's text contains, leaving out those that only
    name a component (a root cause or any entity the submission names) or the kind of fault (a cue
    of the mechanism): naming the object or the fault type is not stating what was changed. When
    every keyword is of that sort, the kind-of-fault words count again."""
    text = f"{sub.mechanism}\n{sub.explanation}".lower()
    names = {r.entity.name.lower() for r in truth.involved} | {r.name.lower() for r in (*sub.root_causes, *sub.affected)}
    if _DELETION.search(text):  # when the change is a deletion, the deleted object is the detail
        names -= deleted_objects(truth)
    cues = [c.lower() for c in vocabulary.cues.get(truth.mechanism, ())]
    keywords = [k for k in truth.detail_keywords if k.lower() not in names]
    specific = [k for k in keywords if not any(k.lower() in c for c in cues)]
    return [k for k in (specific or keywords) if _mentions(text, k)]


def impact_words(truth: GroundTruth, text: str) -> list[str]:
    """Impact words (the problem's and the general ones) the text contains."""
    return [w for w in dict.fromkeys((*truth.impact_keywords, *IMPACT_WORDS)) if _mentions(text, w)]


def impact_denied(text: str) -> str:
    """The phrase that denies an impact or leaves it open, or ''."""
    match = _IMPACT_DENIED.search(text)
    return match.group(0) if match else ""


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

    reading = vocabulary.read(sub.mechanism)
    allowed = vocabulary.allowed(truth.mechanism)
    # A shared symptom next to the right mechanism is only its symptom; without it, it is the claim.
    claims = reading.strong if truth.mechanism in reading.named else reading.named
    contradicted = sorted(claims - allowed)
    named_right = truth.mechanism in reading.strong or (truth.mechanism in reading.weak and not contradicted)
    answers["C1"] = (named_right, f"mechanism read as {sorted(reading.strong) or 'nothing'} "
                                  f"(through shared symptoms: {sorted(reading.weak) or 'nothing'}); "
                                  f"expected {truth.mechanism}")
    keywords = concrete_details(truth, sub, vocabulary)
    answers["C2"] = (bool(keywords) and bool(found),
                     f"concrete details mentioned: {keywords or 'none'}"
                     + ("" if found else " (no true root cause named, so no change is pinned on it)"))
    answers["C3"] = (bool(sub.mechanism.strip()) and not contradicted,
                     f"other fault types claimed: {contradicted or 'none'}")

    mentioned = [*sub.root_causes, *sub.affected]
    uninvolved = [r for r in mentioned if not involved(r)]
    answers["S1"] = (bool(mentioned) and not uninvolved, f"uninvolved components named: {_names(uninvolved)}")
    missing = [c.entity for c in truth.involved if not any(c.matches(r) for r in mentioned)]
    answers["S2"] = (bool(mentioned) and not missing, f"involved components not named: {_names(missing)}")
    impact = impact_words(truth, text)
    denied = impact_denied(text)
    answers["S3"] = (bool(sub.explanation.strip()) and bool(impact) and not denied,
                     f"impact words: {impact or 'none'}" + (f"; impact denied or left open: {denied!r}" if denied else ""))

    out = []
    for q in QUESTIONS:
        answer, evidence = answers[q.id]
        out.append(ChecklistAnswer(id=q.id, dimension=q.dimension, question=q.text,
                                   answer=bool(answer) and not empty, evidence=evidence, confidence=1.0))
    return out
