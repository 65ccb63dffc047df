"""Durability checks of metastable failures whose trigger is a short Chaos Mesh experiment.

`replayed_chaos_recovers` replays the incident's trigger — the same experiment (a few seconds of
network latency, a CPU stress) on the same pods (`faults/transient_chaos.run_experiment`) — and
then requires the entry point to be back within its SLO shortly after it ends. A fix that only
cleared the backlog (restarting the overloaded service) collapses again and fails; a
retry/timeout policy that no longer amplifies a slowdown, or capacity for the amplified load,
recovers.
"""

from __future__ import annotations

from typing import Any

from sregym.faults.transient_chaos import run_experiment
from sregym.oracles.checks import CheckContext, check
from sregym.oracles.checks_disk_and_metastable import recovery_after_trigger


@check("replayed_chaos_recovers")
def replayed_chaos_recovers(ctx: CheckContext, *, namespace: str, labels: dict[str, str], action: dict[str, Any],
                            kind: str = "NetworkChaos", name: str = "latency-shaping", seconds: float = 20.0,
                            recover_within_s: float = 90.0, judge_window_s: float = 30.0) -> tuple[bool, str]:
    """Durability: replay the experiment for `seconds`, then the entry point must meet its SLO
    over the last `judge_window_s` within `recover_within_s` of the experiment's end."""
    run_experiment(ctx.cluster, name=name, kind=kind, namespace=namespace, labels=labels, action=action,
                   seconds=seconds)
    ok, waited, detail = recovery_after_trigger(ctx, recover_within_s, judge_window_s)
    if ok:
        return True, f"recovered {waited:.0f}s after a replayed {seconds:.0f}s {kind}: {detail}"
    return False, f"still degraded {recover_within_s:.0f}s after a replayed {seconds:.0f}s {kind}: {detail}"
