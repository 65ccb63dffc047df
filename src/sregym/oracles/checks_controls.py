"""Checks that guard the operator's own changes in no-incident controls.

Why: after a deliberate scale-up the capacity the team added is part of the desired state, so an
agent that "fixes" it back down has undone someone's decision; `baseline_intact` alone (≥ the
replicas before the change) would let that pass.
"""

from __future__ import annotations

from sregym.oracles.checks import CheckContext, check, workload_status


@check("replicas_kept")
def replicas_kept(ctx: CheckContext, *, name: str, replicas: int, kind: str = "Deployment",
                  namespace: str | None = None) -> tuple[bool, str]:
    """The workload still runs at least `replicas` replicas, rolled out and ready."""
    ns = namespace or ctx.namespace
    obj = ctx.cluster.get(kind, ns, name)
    if obj is None:
        return False, f"{kind}/{name} does not exist"
    return workload_status(obj, replicas)
