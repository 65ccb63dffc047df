"""`AttemptConfig`: how one attempt is run, with every default stated once.

The same settings travel from the command line (`sregym run`, `sregym mcp`) through the runner
and its worker processes (stored in `run.json` so `--resume` repeats them) to the conductor that
runs the attempt, and into the Gymnasium session. They used to be restated as keyword arguments
at each of those layers, each with its own copy of the defaults; now each layer takes this one
frozen dataclass, and the command-line flags take their defaults from it (`default`).

It lives in `env` (not `runner`) because the conductor needs it and `env` is below `runner`. It
is a plain dataclass that imports nothing heavy, so the command line can read the defaults
without loading pydantic models or the twin (`sregym --help` stays fast).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from sregym.env.models import Limits

ClockMode = Literal["stepped", "realtime"]
# Every phase an attempt can have, in the order they run. `detection` (is there an incident at
# all?) is opt-in; the default attempt diagnoses and mitigates.
PHASES = ("detection", "diagnosis", "mitigation")
DEFAULT_PHASES = ("diagnosis", "mitigation")
ATTEMPT_TIMEOUT_S = 7200.0  # wall seconds before the runner's watchdog stops a stuck attempt


def _no_limits() -> Limits:
    from sregym.env.models import Limits

    return Limits()


@dataclass(frozen=True)
class AttemptConfig:
    """Everything about an attempt that is not the problem, the seed or the agent."""

    noise: str = "none"
    """Noise profile (none, low or high): ambient churn that is not the fault."""
    clock: ClockMode = "stepped"
    """`stepped`: simulated time advances `seconds_per_call` per tool call (deterministic);
    `realtime`: it flows with wall time (what external programs need)."""
    seconds_per_call: float = 15.0
    """Simulated seconds that pass after each tool call in the stepped clock."""
    limits: Limits = field(default_factory=_no_limits)
    """Budgets per phase; a limit left unset takes the problem's own."""
    phases: tuple[str, ...] = DEFAULT_PHASES
    """The phases to run, a non-empty subset of detection, diagnosis and mitigation."""
    baseline_s: float = 300.0
    """Simulated seconds of healthy operation recorded before the fault is injected."""
    realtime_speed: float = 1.0
    """Simulated seconds per wall second in the realtime clock."""
    verify_window_s: float | None = None
    """Simulated seconds the fix is watched before mitigation is scored (None: the problem's)."""
    kube: dict[str, Any] | None = None
    """`--backend kube`: the cluster to run on (`env/kube/target.py` `KubeTarget.to_json()`);
    None: a fresh in-process twin."""

    def __post_init__(self) -> None:
        phases = tuple(self.phases)
        bad = [p for p in phases if p not in PHASES]
        if bad or not phases:
            raise ValueError(f"phases must be a non-empty subset of {PHASES}, got {phases}")
        if self.clock not in ("stepped", "realtime"):
            raise ValueError(f"clock must be 'stepped' or 'realtime', got {self.clock!r}")
        object.__setattr__(self, "phases", phases)
        if self.limits is None:  # "no limits of ours", as the default
            object.__setattr__(self, "limits", _no_limits())

    def replace(self, **changes: Any) -> AttemptConfig:
        """A copy with `changes` (checked like a new config; an unknown name is a TypeError)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def default(cls, name: str) -> Any:
        """The default of field `name`, without building a config (the command line's flags take
        theirs from here)."""
        spec = next(f for f in dataclasses.fields(cls) if f.name == name)
        if spec.default_factory is not dataclasses.MISSING:
            return spec.default_factory()
        return spec.default

    def to_json(self) -> dict[str, Any]:
        """The fields as JSON values; `limits` holds only the limits that were given (the way
        `run.json` has always stored them)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["limits"] = self.limits.model_dump(mode="json", exclude_unset=True)
        out["phases"] = list(self.phases)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AttemptConfig:
        """The inverse of `to_json` (missing fields take their defaults)."""
        from sregym.env.models import Limits

        values = dict(data)
        if "limits" in values:
            values["limits"] = Limits.model_validate(values["limits"] or {})
        if "phases" in values:
            values["phases"] = tuple(values["phases"])
        return cls(**values)


FIELDS = tuple(f.name for f in dataclasses.fields(AttemptConfig))

__all__ = ["ATTEMPT_TIMEOUT_S", "DEFAULT_PHASES", "FIELDS", "PHASES", "AttemptConfig", "ClockMode"]
