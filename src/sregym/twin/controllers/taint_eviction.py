"""The taint eviction controller (kube-controller-manager's taint manager): NoExecute taints evict.

For every pod bound to a node with `NoExecute` taints, upstream's `processPodOnNode` decides:
a taint the pod does not tolerate deletes it now; if all are tolerated, the smallest
`tolerationSeconds` among the matching tolerations (none = forever) counted from the taint's
`timeAdded` is when it is deleted. Pods admitted with the DefaultTolerationSeconds plugin's
tolerations therefore leave an unreachable or not-ready node after 300 s. Deleting records the
`TaintManagerEviction` event ("Marking for deletion Pod ns/name"), first adds the
`DisruptionTarget` condition (reason `DeletionByTaintManager`) and then deletes the pod with its
own grace period. On a node whose kubelet is gone nobody confirms the deletion, so the pod stays
Terminating until the kubelet comes back or someone force-deletes it. A taint removed before the
deadline cancels the eviction (the deadline is recomputed from the taints every pass).

The `node.kubernetes.io/out-of-service` taint (non-graceful node shutdown) is how an operator
declares such a node dead: no pod tolerates it, so all are marked for deletion, and the pod
garbage collector's `gcTerminating` force-deletes the terminating pods of a node that is out of
service and not Ready, so their controllers' replacements (and volumes) can move on at once.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

from sregym.errors import ApiError
from sregym.twin.clock import parse_time
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import get_path, set_condition
from sregym.twin.workloads.placement import tolerates

COMPONENT = "taint-eviction-controller"
USER = "system:serviceaccount:kube-system:node-controller"
DISRUPTION_MESSAGE = "Taint manager: deleting due to NoExecute taint"
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"


def eviction_time(pod: dict[str, Any], taints: list[dict[str, Any]], now: float) -> float:
    """When the taint manager deletes `pod` under `taints` (math.inf: never)."""
    tolerations = get_path(pod, "spec", "tolerations", default=[]) or []
    due = math.inf
    for taint in taints:
        if taint.get("effect") != "NoExecute":
            continue
        matching = [t for t in tolerations if tolerates([t], taint)]
        if not matching:
            return now
        seconds = [t["tolerationSeconds"] for t in matching if t.get("tolerationSeconds") is not None]
        if not seconds:
            continue
        added = parse_time(taint["timeAdded"]) if taint.get("timeAdded") else now
        due = min(due, added + max(0, min(int(s) for s in seconds)))
    return due


@controller
class TaintEvictionController(Controller):
    """Deletes pods from nodes whose NoExecute taints they do not (or no longer) tolerate."""

    name = "taint-eviction"
    order = 6
    user = USER

    def reconcile(self) -> None:
        now = self.twin.clock.now
        tainted = {n["metadata"]["name"]: [t for t in get_path(n, "spec", "taints", default=[]) or []
                                           if t.get("effect") == "NoExecute"]
                   for n in self.twin.store.scan("Node")}
        tainted = {name: taints for name, taints in tainted.items() if taints}
        if not tainted:
            return
        lost = {name for name, taints in tainted.items()
                if any(t.get("key") == OUT_OF_SERVICE for t in taints) and not self._ready(name)}
        for pod in list(self.twin.store.scan("Pod")):
            node = get_path(pod, "spec", "nodeName")
            if node in lost and pod["metadata"].get("deletionTimestamp"):
                self._force_delete(pod)
                continue
            if node not in tainted or pod["metadata"].get("deletionTimestamp"):
                continue
            if get_path(pod, "status", "phase") in ("Succeeded", "Failed"):
                continue
            due = eviction_time(pod, tainted[node], now)
            if due <= now:
                self._evict(pod)

    def _ready(self, node: str) -> bool:
        obj = self.twin.store.peek("Node", None, node) or {}
        return any(c.get("type") == "Ready" and c.get("status") == "True"
                   for c in get_path(obj, "status", "conditions", default=[]) or [])

    def _force_delete(self, pod: dict[str, Any]) -> None:
        """PodGC: a terminating pod on an out-of-service node nobody will confirm is removed."""
        meta = pod["metadata"]
        with contextlib.suppress(ApiError):
            self.twin.store.delete("Pod", meta.get("namespace", "default"), meta["name"], grace_period=0,
                                   user="system:serviceaccount:kube-system:pod-garbage-collector")

    def _evict(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        namespace, name = meta.get("namespace", "default"), meta["name"]
        iso = self.twin.clock.iso()
        self.twin.events.normal(pod, "TaintManagerEviction", f"Marking for deletion Pod {namespace}/{name}",
                                component=COMPONENT)

        def disrupt(obj: dict[str, Any]) -> None:
            status = obj.setdefault("status", {})
            conditions = list(status.get("conditions") or [])
            set_condition(conditions, "DisruptionTarget", "True", iso, reason="DeletionByTaintManager",
                          message=DISRUPTION_MESSAGE, probe_time=True)
            status["conditions"] = conditions

        try:
            self.twin.store.mutate("Pod", namespace, name, disrupt, status=True, user=USER)
            self.twin.store.delete("Pod", namespace, name, user=USER)
        except ApiError:
            pass
