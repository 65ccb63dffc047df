"""What crosses the conductor's boundary: limits, the incident brief, the attempt result.

`AttemptResult` is one line of a run's results file, so it is a strict pydantic model: a field
renamed by mistake fails loudly instead of silently producing a column of nulls.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sregym.types import ChecklistAnswer, CheckResult


class Limits(BaseModel):
    """Budgets per phase (each phase gets the full budget). None means no limit on that axis;
    `max_steps=None` takes the problem's own `limits.max_steps`, `max_sim_seconds=None` the
    problem's `limits.max_sim_seconds`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_steps: int | None = None
    max_tool_calls: int | None = None
    max_sim_seconds: float | None = None
    max_wall_seconds: float | None = None


class Brief(BaseModel):
    """The on-call page an agent starts from: what is alerting, and the app context."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    alerts: tuple[str, ...] = ()
    app: str
    namespaces: tuple[str, ...]
    phases: tuple[str, ...]
    started_at: str  # when the page fired, RFC 3339, on the agent's clock (twin/api/wall_time.py)


EntryKind = Literal["tool", "message", "program"]


class TrajectoryEntry(BaseModel):
    """One step of an attempt's trajectory (one line of `trajectories/<problem>__<seed>.jsonl`).

    - `kind="tool"`: a tool call — `tool`, its `args`, the `observation` the agent received;
    - `kind="message"`: the agent's own words — `tool` is the speaker (`assistant`), `args` holds
      the tool calls the message asked for (`tool_calls`) and its `purpose` (`turn`, `handover`),
      `observation` the text;
    - `kind="program"`: an external program's exit code, stdout and stderr (`command` agents).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    phase: str
    kind: EntryKind = "tool"
    tool: str
    args: dict[str, Any]
    observation: str
    is_error: bool
    sim_time: float  # simulated seconds since injection when the call was made


class DetectionOutcome(BaseModel):
    """The `detection` block of a result line: the agent's yes/no answer against the truth
    (`expected_incident` is false for a no-incident control). `passed` is `correct`; the onset
    fields are reported for a "yes" on an incident that names `started_at`, never graded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    submitted: bool
    incident: bool | None = None  # the answer; None when the agent never answered
    expected_incident: bool
    correct: bool = False
    started_at: str | None = None  # as the agent wrote it
    onset_error_s: float | None = None  # named start minus the real onset (seconds)
    onset_within_tolerance: bool | None = None
    evidence: str = ""
    passed: bool = False


class DiagnosisOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    submitted: bool
    root_cause_score: float = 0.0
    checklist: tuple[ChecklistAnswer, ...] = ()
    checklist_score: float = 0.0
    dimension_scores: dict[str, float] = Field(default_factory=dict)
    judge: str = "deterministic"
    judge_model: str | None = None
    passed: bool = False


class MitigationOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    declared_done: bool
    checks: tuple[CheckResult, ...] = ()
    window_s: float = 0.0
    passed: bool = False


class EntrySloSeries(BaseModel):
    """The app's entry-point SLO through one attempt, for a person looking at it afterwards (the
    viewer's timeline): one point per `bucket_s` of simulated time, `(t, success_ratio, p95_ms,
    rps)` with `t` the bucket's start in seconds since the injection (negative: the healthy
    baseline) and success/p95 null for a bucket without traffic; and the instants that explain
    the curve. Read from the twin's history once the attempt is over, so the agent never sees it;
    at most `env.slo_series.MAX_POINTS` points whatever the attempt's length."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bucket_s: float
    points: tuple[tuple[float, float | None, float | None, float], ...]
    baseline_start: float  # seconds since the injection (negative)
    agent_start: float  # the agent's first phase opened (after the settle time)
    actions: tuple[float, ...] = ()  # each tool call of the agent
    diagnosis: float | None = None
    done: float | None = None  # the agent declared the mitigation done
    window: tuple[float, float] | None = None  # the verification window
    slo_success_ratio: float
    slo_p95_ms: float


class AttemptResult(BaseModel):
    """One attempt of one agent on one problem with one seed: one line of `results.jsonl`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    problem_id: str
    problem_version: int
    layers: tuple[str, ...] = ()  # the problem's layer tags (public, like its card), for per-layer rates
    seed: int
    agent: str
    model: str | None = None
    noise: str
    clock: Literal["stepped", "realtime"]
    phases: tuple[str, ...]
    detection: DetectionOutcome | None = None  # None when the attempt had no detection phase
    diagnosis: DiagnosisOutcome | None = None  # None when the attempt had no diagnosis phase
    mitigation: MitigationOutcome | None = None  # None when it had no mitigation phase
    passed: bool  # end to end: every phase that ran passed
    steps: int
    tool_calls: int
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None  # set by the runner from the tokens and the model's price (runner.pricing)
    sim_seconds_to_detection: float | None = None  # time to detect (reported, as AIOpsLab's TTD)
    sim_seconds_to_diagnosis: float | None = None
    sim_seconds_to_mitigation: float | None = None
    truncated: bool = False
    truncation_reason: str | None = None
    wall_seconds: float
    environment_failure: bool = False
    environment_failure_reason: str | None = None
    skipped: bool = False  # not run on this backend (a twin-only problem on --backend kube): not scored
    skipped_reason: str | None = None
    agent_error: str | None = None  # the agent crashed (its own bug): an agent failure, not the env's
    entry_slo: EntrySloSeries | None = None  # the entry SLO through the attempt (twin only)


__all__ = ["AttemptResult", "Brief", "DetectionOutcome", "DiagnosisOutcome", "EntrySloSeries", "Limits", "MitigationOutcome", "TrajectoryEntry"]
