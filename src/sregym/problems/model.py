"""The problem spec: a frozen, declarative description of one benchmark problem.

A problem is data composed from registered parts: the app it runs on, the faults (registered
injectors with parameters), a noise profile, the ground truth, the mitigation checks (registered
checks with parameters), a gold solution (Kubernetes operations an operator would make with the
agent's credential) and limits. Nothing in it executes by itself; `sregym.problems.run` drives it.
Variants are made by calling the same builder with other parameters, never by copying a file.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from sregym.types import GroundTruth, Model

# `none` is the layer of a no-incident control: nothing is broken, so it counts under no fault layer.
Layer = Literal["app", "config", "k8s", "network", "control-plane", "os", "hardware", "metastable",
                "correlated", "concurrent", "none"]
Difficulty = Literal["easy", "medium", "hard"]
NoiseProfileName = Literal["none", "low", "high"]
# `incident`: faults are injected and the oracles grade a diagnosis and a fix. `control`: nothing
# is broken (noise only, or a benign operator change); the right detection answer is "no
# incident", the right diagnosis names no root cause, and any disruptive "fix" is collateral damage.
ProblemKind = Literal["incident", "control"]
# `app/name-vN`, and for a variant of a family (`problems/family.py`) `@name=value,...` after it.
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*-v\d+"
                 r"(@[a-z][a-z0-9_]*=[a-z0-9][a-z0-9.-]*(,[a-z][a-z0-9_]*=[a-z0-9][a-z0-9.-]*)*)?$")


def id_version(problem_id: str) -> int:
    """The N of `app/name-vN` (a variant has its family's version); 0 when the id has none."""
    tail = problem_id.partition("@")[0].rsplit("-v", 1)[-1]
    return int(tail) if tail.isdigit() else 0


class Tags(Model):
    """`sources`: the published scenarios a problem reproduces, as `<benchmark>:<id>`
    ("itbench:3", "itbench-aa"), so coverage tables and datasets can name them."""

    layers: tuple[Layer, ...]
    difficulty: Difficulty = "medium"
    suites: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


class FaultSpec(Model):
    """One registered fault injector and its parameters."""

    fault: str
    params: dict[str, Any] = Field(default_factory=dict)


class CheckSpec(Model):
    """One registered mitigation check and its parameters."""

    check: str
    params: dict[str, Any] = Field(default_factory=dict)


# What every problem keeps: the baseline workloads at their size and ready, the entry SLO on real
# traffic, the workload (load generators, request rate) intact, the baseline's probes, limits and
# policies in place. Problems add their own must_keep checks to these, never fewer.
BASELINE_KEEP: tuple[CheckSpec, ...] = (CheckSpec(check="baseline_intact"), CheckSpec(check="entry_slo"),
                                        CheckSpec(check="workload_intact"), CheckSpec(check="safeguards_kept"))


class MitigationSpec(Model):
    """`must_fix` fail while the fault is active; `must_keep` guard against collateral damage and
    reward hacks; `durability` prove the fix survives (they may change the cluster)."""

    must_fix: tuple[CheckSpec, ...] = ()
    must_keep: tuple[CheckSpec, ...] = BASELINE_KEEP
    durability: tuple[CheckSpec, ...] = ()
    window_s: float = 300.0


class Action(Model):
    """One Kubernetes operation of a gold solution (made with the agent credential). `wait` lets
    `seconds` of cluster time pass before the next step (a consumer group to empty, a timeout to
    run out), watching with `command` in the workload's pod when one is given, else `get pods`."""

    op: Literal["patch", "delete", "apply", "exec", "wait"]
    kind: str = ""
    namespace: str | None = None
    name: str = ""
    patch: Any = None
    patch_type: Literal["strategic", "merge", "json"] = "strategic"
    manifest: dict[str, Any] | None = None
    command: tuple[str, ...] = ()
    container: str | None = None
    seconds: float = Field(0.0, ge=0.0)

    @model_validator(mode="after")
    def _wait_has_seconds(self) -> Action:
        if (self.op == "wait") != (self.seconds > 0):
            raise ValueError("a wait action needs seconds > 0, and only a wait has seconds")
        return self


class Limits(Model):
    max_steps: int = 50
    max_sim_seconds: float = 1800.0


class Problem(Model):
    """One benchmark problem. `card` is the problem's documentation (the builder's docstring)."""

    id: str
    title: str
    card: str = ""
    app: str
    namespace: str
    tags: Tags
    kind: ProblemKind = "incident"
    faults: tuple[FaultSpec, ...] = ()
    # Benign operator changes (a rollout restart, a scale-up) made when faults would be injected.
    # They are part of normal operation, so `recover` leaves them in place.
    changes: tuple[FaultSpec, ...] = ()
    # The problem's environment, set up before the healthy baseline is recorded (an add-on such as
    # an Ingress controller the users go through). Part of the healthy system: never recovered.
    environment: tuple[FaultSpec, ...] = ()
    noise: NoiseProfileName = "low"
    ground_truth: GroundTruth
    mitigation: MitigationSpec
    gold: tuple[Action, ...] = ()
    limits: Limits = Limits()
    settle_s: float = 90.0  # simulated time after injection before the agent starts

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"problem id {value!r} must look like app/name-vN (lower-case, dashes), "
                             "optionally followed by @name=value,... for a variant")
        return value

    @model_validator(mode="after")
    def _non_empty(self) -> Problem:
        if self.kind == "control":
            return self._control_shape()
        if self.changes:
            raise ValueError("benign changes belong to control problems; an incident's writes are faults")
        if not self.faults:
            raise ValueError("a problem needs at least one fault")
        if not self.gold:
            raise ValueError("a problem needs a gold solution")
        if not self.ground_truth.root_causes:
            raise ValueError("a problem needs at least one root cause")
        return self

    def _control_shape(self) -> Problem:
        """A control is deliberately empty where an incident is not: no fault, no root cause, no
        must_fix check and no gold action (doing nothing is the reference solution)."""
        wrong = [name for name, value in (("faults", self.faults), ("gold", self.gold),
                                          ("ground_truth.root_causes", self.ground_truth.root_causes),
                                          ("mitigation.must_fix", self.mitigation.must_fix),
                                          ("mitigation.durability", self.mitigation.durability)) if value]
        if wrong:
            raise ValueError(f"a control problem has no {', '.join(wrong)} (nothing is broken)")
        return self

    @property
    def is_control(self) -> bool:
        return self.kind == "control"

    @property
    def suites(self) -> tuple[str, ...]:
        return self.tags.suites

    def public_card(self) -> str:
        """What `sregym show` prints without `--reveal`: title, app, tags, the situation."""
        lines = [f"{self.id}: {self.title}", f"app: {self.app} (namespace {self.namespace})",
                 f"layers: {', '.join(self.tags.layers)}; difficulty: {self.tags.difficulty}; "
                 f"suites: {', '.join(self.tags.suites) or '-'}"]
        return "\n".join(lines)
