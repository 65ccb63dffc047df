"""Mitigation checks for problems caused by programs that act on the cluster from inside it.

`object_released` asks whether an object that was deleted while a finalizer held it is really
gone (not still `Terminating`): whether its controller finished its cleanup with restored
permissions or an engineer removed the finalizer by hand, the name is free again, and nothing
else passes. (A CronJob that keeps rewriting a workload needs no check of its own: its next run
inside the mitigation window breaks the workload again, which the workload's checks see.)
"""

from __future__ import annotations

from sregym.oracles.checks import CheckContext, check


@check("object_released")
def object_released(ctx: CheckContext, *, kind: str, name: str, namespace: str | None = None) -> tuple[bool, str]:
    """The object no longer exists (a Terminating object with finalizers still exists)."""
    ns = namespace or ctx.namespace
    obj = ctx.cluster.get(kind, ns, name)
    if obj is None:
        return True, f"{kind} {name} is gone"
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return False, (f"{kind} {name} is still Terminating (deletionTimestamp {meta['deletionTimestamp']}, "
                       f"finalizers {meta.get('finalizers') or []})")
    return False, f"{kind} {name} still exists"

