"""Pods the scheduler cannot place: read the scheduler's own reason, then revert what changed.

The `FailedScheduling` event lists, per node, why it was rejected ("untolerated taint",
"didn't match pod anti-affinity rules", "volume node affinity conflict", "didn't have free
ports", "Insufficient memory"). The reason that rules out the worker nodes names the mechanism;
the fix reverts the recent change: the workload's previous revision when its pod template was
changed, otherwise the offending field is removed (or, for a taint, the taint on the nodes).
"""

from __future__ import annotations

import json
import re

from sregym.agents.baseline import remedies as fix
from sregym.agents.baseline.context import IMPACT, Ctx, Finding, callers, pod_spec, workloads_of_events

_TAINT = re.compile(r"untolerated taint \{([^:}]+):")
CONTROL_PLANE = "node-role.kubernetes.io/control-plane"

# scheduler phrase -> (mechanism wording, JSON-patch paths of the pod template fields that cause it)
REASONS: list[tuple[str, str, tuple[str, ...]]] = [
    ("didn't match pod anti-affinity", "pod anti-affinity (podAntiAffinity, topologyKey) leaves no node for the "
     "replicas: unschedulable", ("/spec/template/spec/affinity/podAntiAffinity",)),
    ("volume node affinity conflict", "volume node affinity conflict: the PersistentVolume's nodeAffinity and the "
     "pod's node placement exclude each other (unschedulable)",
     ("/spec/template/spec/nodeSelector", "/spec/template/spec/affinity/nodeAffinity")),
    ("free ports", "host port conflict: the hostPort is taken, no node has free ports (unschedulable)", ()),
    ("Insufficient memory", "unschedulable: memory request too large, larger than any node can offer", ()),
    ("Insufficient cpu", "unschedulable: cpu request larger than any node can offer", ()),
]


def _revision(dep: dict) -> int:
    value = ((dep.get("metadata") or {}).get("annotations") or {}).get("deployment.kubernetes.io/revision", "1")
    return int(value) if str(value).isdigit() else 1


def _revert(ctx: Ctx, deployment: str, paths: tuple[str, ...]) -> list[fix.Command]:
    """The previous revision when the template changed since deployment, else remove `paths`."""
    dep = ctx.deployment(deployment)
    if _revision(dep) > 1:
        return fix.rollout_undo(ctx.ns, deployment)
    spec = pod_spec(dep)
    present = [p for p in paths if _has(spec, p.split("/")[4:])]
    if not present:
        return fix.rollout_undo(ctx.ns, deployment)
    return fix.json_patch("deployment", deployment, ctx.ns, [{"op": "remove", "path": p} for p in present])


def _has(spec: dict, keys: list[str]) -> bool:
    node: object = spec
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def _tainted_nodes(ctx: Ctx, key: str) -> list[str]:
    text = ctx.get("get nodes -o jsonpath='{range .items[*]}{.metadata.name}{\"\\t\"}{.spec.taints}{\"\\n\"}{end}'")
    out = []
    for line in text.splitlines():
        name, _, taints = line.partition("\t")
        try:
            keys = {t.get("key") for t in json.loads(taints or "[]")}
        except ValueError:
            continue
        if key in keys:
            out.append(name)
    return out


def unschedulable(ctx: Ctx) -> Finding | None:
    events = [e for e in ctx.facts.events if e.reason == "FailedScheduling"]
    deps = workloads_of_events(ctx, events)
    if not deps:
        return None
    message = events[-1].message
    taints = sorted({k for e in events for k in _TAINT.findall(e.message) if k.strip() != CONTROL_PLANE})
    affected = [ctx.obj("Service", d) for d in deps] + callers(ctx, deps)
    if taints:
        nodes = sorted({n for k in taints for n in _tainted_nodes(ctx, k)})
        if nodes:
            cmds = [(f"taint nodes {n} {k}-", None) for n in nodes for k in taints]
            return Finding([f"Node/{n}" for n in nodes] + [ctx.dep(d) for d in deps],
                           "node taint without a matching toleration (untolerated taint, NoSchedule)",
                           f"Nodes {', '.join(nodes)} carry the taint {', '.join(taints)} and the pods of "
                           f"{', '.join(deps)} have no toleration for it, so they stay Pending "
                           f"(FailedScheduling: {message[:200]}). Fix: remove the taint. {IMPACT}", cmds,
                           affected=affected)
    for phrase, mechanism, paths in REASONS:
        if phrase in message:
            cmds = [c for d in deps for c in _revert(ctx, d, paths)]
            return Finding([ctx.dep(d) for d in deps], mechanism,
                           f"The pods of {', '.join(deps)} stay Pending: {message[:240]}. The pod template was "
                           f"changed; reverting the change lets the scheduler place them. {IMPACT}", cmds,
                           affected=affected)
    return None


__all__ = ["REASONS", "unschedulable"]
