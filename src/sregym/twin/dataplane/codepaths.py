"""Code paths a program takes while one of its settings has a value: the failure branches that
feature flags switch on (the Astronomy Shop's `adFailure`, `paymentFailure`, `adHighCpu` ...).

Why data and not per-flag engine code: every such branch is one of a few mechanisms — a share of
requests fails with the code's own error, each request pays extra CPU or a pause (a forced full
GC), background threads burn CPU, or each request keeps memory it never frees. A `CodePath` says
which, gated by `when` ("NAME=value" / "NAME!=value", the `Call.feature` syntax) and optionally
scaled by a numeric setting (`scale="paymentFailure"`: the flag's 0.1 fails 10 % of charges). The
settings are whatever the program reads at run time — for flags, what its OpenFeature SDK
evaluated this tick (`dataplane/flag_client.py`) — so changing the flag changes the behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from sregym.twin.dataplane.programs import ProgramInstance


class CodePath(BaseModel):
    """One branch of a handler (on an `Operation`) or of the process (on a `ProgramSpec`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    when: str
    scale: str | None = None  # a setting whose number multiplies fail, leak and busy_cores
    # share of requests that enter the branch at all (the code's own coin flip: product-reviews'
    # `random.random() < 0.5`); fail, delay and logs apply to that share
    taken: float = Field(1.0, ge=0.0, le=1.0)
    fail: float = Field(0.0, ge=0.0, le=1.0)  # share of requests that fail in the branch
    error: str = ""  # what the caller receives
    error_class: str = "unavailable"
    log: str = ""  # what the program logs per request taking the branch (`log_level`)
    log_level: str = "error"
    delay_ms: float = 0.0  # pause per request (a forced GC, a sleep)
    delay_per_unit_ms: float = 0.0  # a pause of this many ms per unit of the scale setting (a fault-delay header)
    max_active: float = 0.0  # at most this many requests paused at once (Envoy's max_active_faults); 0: no cap
    cpu_ms: float = 0.0  # extra CPU per request
    busy_cores: float = 0.0  # background threads spinning while the branch is on
    leak_kib_per_request: float = 0.0  # memory each request keeps

    def factor(self, settings: dict[str, str]) -> float:
        """0 when the branch is off, else the scale (1 without a scale setting)."""
        negate = "!=" in self.when
        name, _, value = self.when.partition("!=" if negate else "=")
        if (settings.get(name.strip(), "") == value.strip()) == negate:
            return 0.0
        if self.scale is None:
            return 1.0
        try:
            return max(0.0, float(settings.get(self.scale, "0")))
        except ValueError:
            return 0.0


def extra_cpu_ms(paths: tuple[CodePath, ...], settings: dict[str, str]) -> float:
    return sum(p.cpu_ms * p.factor(settings) for p in paths if p.cpu_ms) if paths else 0.0


def busy_cores(paths: tuple[CodePath, ...], settings: dict[str, str]) -> float:
    return sum(p.busy_cores * min(1.0, p.factor(settings)) for p in paths if p.busy_cores) if paths else 0.0


@dataclass
class Branch:
    """The effect of an operation's active branches this tick."""

    fail: float = 0.0
    error: str = ""
    error_class: str = ""
    delay_ms: float = 0.0
    logs: list[tuple[str, str, float]] = field(default_factory=list)  # (level, line, share of requests)


def branch(paths: tuple[CodePath, ...], settings: dict[str, str], rate: float = 0.0) -> Branch | None:
    """The combined effect of an operation's branches, or None when none is on. `rate` (requests/s)
    caps a `max_active` pause: by Little's law rate × pause requests wait at once, and those beyond
    the cap pass undelayed, so the mean pause is the cap's share of it."""
    out: Branch | None = None
    for path in paths:
        factor = path.factor(settings)
        if factor <= 0:
            continue
        out = out or Branch()
        fail = min(1.0, path.fail * factor) * path.taken
        if fail > out.fail and path.error:
            out.error, out.error_class = path.error, path.error_class
        out.fail = 1.0 - (1.0 - out.fail) * (1.0 - fail)
        out.delay_ms += path.delay_ms * path.taken
        if path.delay_per_unit_ms:
            pause = path.delay_per_unit_ms * factor
            share = min(1.0, path.max_active / (rate * pause / 1000.0)) if path.max_active and rate > 0 else 1.0
            out.delay_ms += pause * share
        if path.log:
            out.logs.append((path.log_level, path.log, fail if path.fail else path.taken))
    return out


@dataclass
class Leaks:
    """Memory each process kept on its leaking branches (gone with the process)."""

    kept: dict[tuple[str, str, str], tuple[Any, float]] = field(default_factory=dict)

    def add(self, inst: ProgramInstance, served: dict[str, float], dt: float) -> None:
        spec = inst.spec
        kib = 0.0
        for op in spec.operations:
            rate = served.get(op.key, 0.0)
            if rate > 0 and op.paths:
                kib += rate * dt * sum(p.leak_kib_per_request * p.factor(inst.settings) for p in op.paths
                                       if p.leak_kib_per_request)
        if kib <= 0:
            return
        held = self.kept.get(inst.key)
        base = held[1] if held is not None and held[0] is inst else 0.0
        self.kept[inst.key] = (inst, base + kib / 1024.0)

    def mib(self, inst: ProgramInstance) -> float:
        held = self.kept.get(inst.key)
        return held[1] if held is not None and held[0] is inst else 0.0


@dataclass
class BranchLogs:
    """How many lines a branch logs this tick: its requests' expected count carried across ticks
    (rare requests still log now and then), at most `burst` per `window_s`."""

    carry: dict[tuple[Any, str], list[float]] = field(default_factory=dict)  # [window start, emitted, carry]

    def due(self, key: tuple[Any, str], count: float, now: float, burst: int, window_s: float) -> int:
        state = self.carry.setdefault(key, [now, 0.0, 0.0])
        if now - state[0] >= window_s:
            state[0], state[1] = now, 0.0
        state[2] += count
        lines = int(state[2])
        state[2] -= lines
        allowed = max(0, min(lines, burst - int(state[1])))
        state[1] += allowed
        return allowed


__all__ = ["Branch", "BranchLogs", "CodePath", "Leaks", "branch", "busy_cores", "extra_cpu_ms"]
