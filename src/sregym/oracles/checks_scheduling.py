"""Checks on scheduling policy: the cluster's default pod priority, and workloads that must keep
what they declare even while they wait for room.

Why: a preemption incident can be "fixed" by removing the workload that preempted, or by shrinking
the victim's requests until it squeezes in; both leave the policy that caused it in place. These
checks make the collateral visible (the other team's workload must keep its replicas and requests;
the victim must keep its requests) and the policy itself part of the fix (pods that name no
PriorityClass must not outrank the ones that do).
"""

from __future__ import annotations

from typing import Any

from sregym.oracles.checks import CheckContext, check
from sregym.twin.machinery.quantity import parse_quantity


def default_priority(cluster: Any) -> tuple[str | None, int]:
    """The PriorityClass admission gives a pod that names none: the global default with the
    smallest value (as the Priority admission plugin picks), else none (priority 0)."""
    defaults = [pc for pc in cluster.list("PriorityClass") if pc.get("globalDefault")]
    if not defaults:
        return None, 0
    chosen = min(defaults, key=lambda pc: int(pc.get("value", 0)))
    return chosen["metadata"]["name"], int(chosen.get("value", 0))


@check("default_priority_at_most")
def default_priority_at_most(ctx: CheckContext, *, value: int = 0) -> tuple[bool, str]:
    """Pods that name no PriorityClass get a priority of at most `value` (0: no global default
    above the built-in one), so an unclassified workload cannot preempt running services."""
    name, current = default_priority(ctx.cluster)
    if current > value:
        return False, f"PriorityClass {name} is the global default with value {current} (> {value})"
    return True, (f"the global default PriorityClass {name} has value {current}" if name
                  else "no PriorityClass is a global default")


@check("workload_declared")
def workload_declared(ctx: CheckContext, *, name: str, namespace: str | None = None, kind: str = "Deployment",
                      replicas: int = 1, requests: dict[str, dict[str, str]] | None = None) -> tuple[bool, str]:
    """The workload still exists, declares at least `replicas` replicas and, per container named in
    `requests`, at least the given resource requests. It need not be running (a lower-priority
    batch workload may wait for room); deleting it or shrinking it is what this guards against."""
    ns = namespace or ctx.namespace
    obj = ctx.cluster.get(kind, ns, name)
    if obj is None:
        return False, f"{kind}/{name} does not exist"
    spec = obj.get("spec") or {}
    declared = int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1)
    if declared < replicas:
        return False, f"{kind}/{name} declares {declared} replicas, fewer than {replicas}"
    containers = {c.get("name"): c for c in ((spec.get("template") or {}).get("spec") or {}).get("containers") or []}
    for container, wanted in sorted((requests or {}).items()):
        if container not in containers:
            return False, f"{kind}/{name} has no container {container}"
        have = ((containers[container].get("resources") or {}).get("requests") or {})
        for resource, quantity in sorted(wanted.items()):
            if resource not in have or parse_quantity(have[resource]) < parse_quantity(quantity):
                return False, (f"{kind}/{name} container {container} requests {resource} "
                               f"{have.get(resource, 'nothing')}, less than {quantity}")
    return True, f"{kind}/{name} declares {declared} replicas and its requests"
