"""Which part of the verification window is judged: the trailing steady state after convergence.

A valid fix does not always take effect the moment the agent says done: a ReplicaSet that was
refused pod creation retries only when its back-off expires, a database restarted as part of the
fix is itself a short outage, a rollout replaces pods one by one. Judging the SLO from a fixed
point of the window would fail such fixes for a transient that is part of the fix, so the judged
part starts once the system has **converged** — every Deployment and StatefulSet of the app's
namespace rolled out, ready at its desired size, with no old pods left — and the SLO window that
is judged lies wholly after that instant.

The rule (`JudgedPart.plan`), for a window of `W` seconds and an SLO window of `S` seconds:

- the convergence instant `c` is the first sample (at 0 s, then every 30 s) at which the system
  has converged, bounded by `W/2` (a fix never converging still gets judged, from `W/2` on);
- the judged part begins `extra = max(0, min(c, W/2) + S - W/2)` seconds after the second half
  of the window would have: `must_keep` checks are sampled every 30 s from `W/2 + extra` to the
  end, which moves to `W + extra`. The judged part is always `W/2` long, so a fix has to hold for
  as long whatever its convergence time; `must_fix` is evaluated at the end.

A system that converges within `W/2 - S` seconds is judged exactly as before (second half of the
window); a slow one is judged later, by at most `S` seconds. A fix that holds only briefly fails:
a break after convergence lands in the judged part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sregym.oracles.checks import workload_status

if TYPE_CHECKING:
    from sregym.oracles.checks import CheckContext

CONVERGENCE_KINDS = ("Deployment", "StatefulSet")


def converged(ctx: CheckContext) -> tuple[bool, str]:
    """Whether every Deployment and StatefulSet of the namespace is rolled out and ready at its
    desired size (the workloads' own spec, not the baseline: this is about motion, not health)."""
    for kind in CONVERGENCE_KINDS:
        for obj in ctx.cluster.list(kind, ctx.namespace):
            ok, detail = workload_status({**obj, "kind": kind})
            if not ok:
                return False, detail
    return True, "every workload rolled out and ready"


@dataclass(frozen=True)
class JudgedPart:
    """Where the judged part of a window lies (seconds from the start of verification)."""

    window_s: float
    converged_at: float | None  # None: not converged by the bound
    start_s: float  # first must_keep sample
    end_s: float  # end of the window (must_fix evaluated here)

    @classmethod
    def plan(cls, window_s: float, slo_window_s: float, converged_at: float | None) -> JudgedPart:
        half = window_s / 2
        bound = half if converged_at is None else min(converged_at, half)
        extra = max(0.0, bound + slo_window_s - half)
        return cls(window_s=window_s, converged_at=converged_at, start_s=half + extra, end_s=window_s + extra)

    @property
    def converge_by_s(self) -> float:
        """The latest instant convergence is waited for."""
        return self.window_s / 2


__all__ = ["CONVERGENCE_KINDS", "JudgedPart", "converged"]
