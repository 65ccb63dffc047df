"""Mitigation checks for the node lifecycle problems (a lost node, node memory pressure).

`pods_not_stranded` asks whether the application still depends on a node that is not Ready:
any pod of the namespace bound to such a node — still "Running" behind a dead kubelet, or
Terminating because nobody can confirm its deletion — holds its volumes and is not replaced by
its StatefulSet, and is what an operator clears (declaring the node out of service, or
force-deleting the pods) so the workload runs elsewhere.

`nodes_without_pressure` asks the nodes' own conditions: no node reports MemoryPressure (or
DiskPressure), so the kubelet has stopped evicting and the pressure taint is gone.

`node_repair_holds` is the durability check of a lost node: the node team repairs it (starts
the kubelet, resets the clock from the RTC — the twin-only hook `repair_node`) and every node
must then stay Ready for a while. Whatever broke the node and still runs there breaks it again.
On a real cluster the repair is a manual step, and the check only looks at the nodes.
"""

from __future__ import annotations

from typing import Any

from sregym.faults.node_lifecycle import repair_node
from sregym.oracles.checks import CheckContext, check

POLL_S = 10.0


def _conditions(node: dict[str, Any]) -> dict[str, str]:
    return {c.get("type", ""): c.get("status", "") for c in (node.get("status") or {}).get("conditions") or []}


def _not_ready(ctx: CheckContext) -> list[str]:
    return sorted(n["metadata"]["name"] for n in ctx.cluster.list("Node", None)
                  if _conditions(n).get("Ready") != "True")


@check("pods_not_stranded")
def pods_not_stranded(ctx: CheckContext, *, namespace: str | None = None) -> tuple[bool, str]:
    """No pod of the namespace is bound to a node that is not Ready."""
    lost = set(_not_ready(ctx))
    namespace = namespace or ctx.namespace
    stranded = sorted(p["metadata"]["name"] for p in ctx.cluster.list("Pod", namespace)
                      if (p.get("spec") or {}).get("nodeName") in lost)
    if stranded:
        return False, f"{len(stranded)} pod(s) of {namespace} stranded on not-Ready node(s) " \
                      f"{', '.join(sorted(lost))}: {', '.join(stranded[:5])}"
    return True, f"no pod of {namespace} on a not-Ready node" + (f" ({', '.join(sorted(lost))})" if lost else "")


@check("nodes_without_pressure")
def nodes_without_pressure(ctx: CheckContext, *, conditions: tuple[str, ...] | list[str] = ("MemoryPressure",)
                           ) -> tuple[bool, str]:
    """No node reports any of `conditions` True."""
    under = sorted(f"{n['metadata']['name']} ({c})" for n in ctx.cluster.list("Node", None)
                   for c in conditions if _conditions(n).get(c) == "True")
    if under:
        return False, "nodes under pressure: " + ", ".join(under)
    return True, "no node reports " + "/".join(conditions)


@check("node_repair_holds")
def node_repair_holds(ctx: CheckContext, *, hold_s: float = 180.0, ready_within_s: float = 60.0) -> tuple[bool, str]:
    """Durability: repair every not-Ready node; all nodes must be Ready within `ready_within_s`
    and stay Ready for `hold_s`."""
    broken = _not_ready(ctx)
    for node in broken:
        repair_node(ctx.cluster, node)
    waited = 0.0
    while _not_ready(ctx):
        if waited >= ready_within_s:
            return False, f"node(s) {', '.join(_not_ready(ctx))} not Ready {ready_within_s:.0f}s after the repair"
        ctx.cluster.advance(POLL_S)
        waited += POLL_S
    held = 0.0
    while held < hold_s:
        ctx.cluster.advance(POLL_S)
        held += POLL_S
        lost = _not_ready(ctx)
        if lost:
            return False, f"node(s) {', '.join(lost)} failed again {held:.0f}s after the repair"
    repaired = f"repaired {', '.join(broken)}; " if broken else ""
    return True, f"{repaired}every node stayed Ready for {hold_s:.0f}s"
