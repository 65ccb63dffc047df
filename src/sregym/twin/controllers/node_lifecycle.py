"""The node lifecycle controller (kube-controller-manager): node health from heartbeats, taints
from conditions.

A kubelet proves it is alive by renewing its node Lease every 10 s (and, rarely, by posting its
status). Every `--node-monitor-period` (5 s) this controller looks at each Node's latest
heartbeat; when none came for `--node-monitor-grace-period` (50 s, the 1.32 default; it was 40 s
before), it does what upstream's `tryUpdateNodeHealth` and `MarkPodsNotReady` do:

- every node condition the kubelet owns (Ready, MemoryPressure, DiskPressure, PIDPressure)
  becomes `Unknown` with reason `NodeStatusUnknown` and message "Kubelet stopped posting node
  status.", `lastHeartbeatTime` kept, `lastTransitionTime` now; a `NodeNotReady` event on the
  Node;
- each pod on the node gets `Ready=False` and a Warning `NodeNotReady` ("Node is not ready")
  event, so endpoints drop it while its containers, unwatched, keep running.

Taints follow conditions (TaintNodesByCondition and taint-based evictions), for whatever set the
condition, the kubelet's eviction manager or this controller: Ready False/Unknown give
`node.kubernetes.io/not-ready` / `unreachable` with both NoSchedule and NoExecute; Memory, Disk
and PID pressure give `memory-pressure`, `disk-pressure`, `pid-pressure` NoSchedule. A taint
disappears when its condition clears (a restarted kubelet posting Ready). NoExecute taints are
acted on by the taint eviction controller (`taint_eviction.py`).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.clock import parse_time
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import get_path

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

NODE_MONITOR_PERIOD = 5.0
NODE_MONITOR_GRACE_PERIOD = 50.0
NODE_LEASE_NAMESPACE = "kube-node-lease"
KUBELET_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
UNKNOWN_REASON = "NodeStatusUnknown"
UNKNOWN_MESSAGE = "Kubelet stopped posting node status."
COMPONENT = "node-controller"
USER = "system:serviceaccount:kube-system:node-controller"
# (condition, status) -> the taints it implies, in upstream's order.
CONDITION_TAINTS: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {
    ("Ready", "False"): (("node.kubernetes.io/not-ready", "NoSchedule"),
                         ("node.kubernetes.io/not-ready", "NoExecute")),
    ("Ready", "Unknown"): (("node.kubernetes.io/unreachable", "NoSchedule"),
                           ("node.kubernetes.io/unreachable", "NoExecute")),
    ("MemoryPressure", "True"): (("node.kubernetes.io/memory-pressure", "NoSchedule"),),
    ("DiskPressure", "True"): (("node.kubernetes.io/disk-pressure", "NoSchedule"),),
    ("PIDPressure", "True"): (("node.kubernetes.io/pid-pressure", "NoSchedule"),),
}
MANAGED_TAINTS = {taint for taints in CONDITION_TAINTS.values() for taint in taints}


def conditions_of(node: dict[str, Any]) -> dict[str, str]:
    return {c.get("type", ""): c.get("status", "") for c in get_path(node, "status", "conditions", default=[]) or []}


@controller
class NodeLifecycleController(Controller):
    """Marks silent nodes Unknown and keeps every node's condition taints in step."""

    name = "node-lifecycle"
    order = 5
    user = USER

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._next = 0.0

    def reconcile(self) -> None:
        now = self.twin.clock.now
        monitor = now >= self._next
        if monitor:
            self._next = now + NODE_MONITOR_PERIOD
        for node in list(self.twin.store.scan("Node")):
            name = node["metadata"]["name"]
            if monitor and self._silent(node, now) and conditions_of(node).get("Ready") != "Unknown":
                self._mark_unknown(name)
            # Taints follow a node's conditions as soon as the update is seen (an informer event).
            current = self.twin.store.peek("Node", None, name)
            if current is not None:
                self._sync_taints(current)

    # -------------------------------------------------------------- health
    def _heartbeat(self, node: dict[str, Any]) -> float:
        name = node["metadata"]["name"]
        times = []
        lease = self.twin.store.peek("Lease", NODE_LEASE_NAMESPACE, name)
        renewed = get_path(lease or {}, "spec", "renewTime")
        if renewed:
            times.append(parse_time(renewed))
        for cond in get_path(node, "status", "conditions", default=[]) or []:
            if cond.get("type") == "Ready" and cond.get("lastHeartbeatTime"):
                times.append(parse_time(cond["lastHeartbeatTime"]))
        created = node["metadata"].get("creationTimestamp")
        if not times and created:
            times.append(parse_time(created))
        return max(times, default=self.twin.clock.now)

    def _silent(self, node: dict[str, Any], now: float) -> bool:
        return now - self._heartbeat(node) > NODE_MONITOR_GRACE_PERIOD

    def _mark_unknown(self, name: str) -> None:
        iso = self.twin.clock.iso()

        def unknown(obj: dict[str, Any]) -> None:
            for cond in get_path(obj, "status", "conditions", default=[]) or []:
                if cond.get("type") in KUBELET_CONDITIONS and cond.get("status") != "Unknown":
                    cond.update(status="Unknown", reason=UNKNOWN_REASON, message=UNKNOWN_MESSAGE,
                                lastTransitionTime=iso)

        try:
            updated = self.twin.store.mutate("Node", None, name, unknown, status=True, user=USER)
        except ApiError:
            return
        if updated is None:
            return
        self.twin.events.normal(updated, "NodeNotReady", f"Node {name} status is now: NodeNotReady",
                                component=COMPONENT)
        self._mark_pods_not_ready(name, iso)

    def _mark_pods_not_ready(self, node: str, iso: str) -> None:
        for pod in list(self.twin.store.scan("Pod")):
            if get_path(pod, "spec", "nodeName") != node:
                continue
            if get_path(pod, "status", "phase") in ("Succeeded", "Failed"):
                continue

            def not_ready(obj: dict[str, Any]) -> None:
                for cond in get_path(obj, "status", "conditions", default=[]) or []:
                    if cond.get("type") == "Ready" and cond.get("status") != "False":
                        cond["status"] = "False"
                        cond["lastTransitionTime"] = iso

            meta = pod["metadata"]
            try:
                updated = self.twin.store.mutate("Pod", meta.get("namespace"), meta["name"], not_ready,
                                                 status=True, user=USER)
            except ApiError:
                continue
            if updated is not None:
                self.twin.events.warning(updated, "NodeNotReady", "Node is not ready", component=COMPONENT)

    # -------------------------------------------------------------- taints
    def _sync_taints(self, node: dict[str, Any]) -> None:
        conditions = conditions_of(node)
        wanted: list[tuple[str, str]] = []
        for (cond, status), taints in CONDITION_TAINTS.items():
            if conditions.get(cond) == status:
                wanted.extend(taints)
        existing = get_path(node, "spec", "taints", default=[]) or []
        have = {(t.get("key"), t.get("effect")) for t in existing}
        if have & MANAGED_TAINTS == set(wanted):
            return
        iso = self.twin.clock.iso()

        def retaint(obj: dict[str, Any]) -> None:
            spec = obj.setdefault("spec", {})
            kept = [t for t in spec.get("taints") or []
                    if (t.get("key"), t.get("effect")) not in MANAGED_TAINTS
                    or (t.get("key"), t.get("effect")) in wanted]
            present = {(t.get("key"), t.get("effect")) for t in kept}
            for key, effect in wanted:
                if (key, effect) not in present:
                    kept.append({"key": key, "effect": effect, "timeAdded": iso})
            if kept:
                spec["taints"] = kept
            else:
                spec.pop("taints", None)

        with contextlib.suppress(ApiError):
            self.twin.store.mutate("Node", None, node["metadata"]["name"], retaint, user=USER)
