"""The detection oracle: was the agent right about whether there is an incident at all?

Why a separate question: before anyone diagnoses, on-call has to decide that something is wrong,
and a detector that pages on every rollout is as useless as one that never pages. AIOpsLab's
detection task grades exactly this yes/no answer; so does this oracle (`passed` is the answer
being right). When the agent says "yes" on a problem that has faults and names when the incident
started, the distance to the injection is reported too (`onset_error_s`, within
`ONSET_TOLERANCE_S` or not) but it is not part of the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from sregym.env.models import DetectionOutcome

ONSET_TOLERANCE_S = 300.0  # a named start this close to the injection counts as "on time"


@dataclass(frozen=True)
class DetectionAnswer:
    """What `submit_detection` recorded: the answer, the named start (Unix seconds on the agent's
    clock, None when not given) and the agent's evidence."""

    incident: bool
    started_at: float | None
    started_at_text: str | None
    evidence: str


def score_detection(answer: DetectionAnswer | None, *, expected_incident: bool,
                    onset: float | None) -> DetectionOutcome:
    """Grade `answer` (None: the agent never answered, which is wrong either way). `onset` is when
    the faults were injected, on the same clock as `answer.started_at` (None for a control)."""
    if answer is None:
        return DetectionOutcome(submitted=False, expected_incident=expected_incident)
    correct = answer.incident == expected_incident
    error = within = None
    if answer.incident and expected_incident and onset is not None and answer.started_at is not None:
        error = round(answer.started_at - onset, 3)
        within = abs(error) <= ONSET_TOLERANCE_S
    return DetectionOutcome(submitted=True, incident=answer.incident, expected_incident=expected_incident,
                            correct=correct, started_at=answer.started_at_text, onset_error_s=error,
                            onset_within_tolerance=within, evidence=answer.evidence[:2000], passed=correct)


__all__ = ["ONSET_TOLERANCE_S", "DetectionAnswer", "score_detection"]
