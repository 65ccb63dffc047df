"""A workload pinned to one node, and that node cordoned and drained for maintenance.

Why both writes: cordoning alone moves nothing (running pods stay), and a drained pod of a free
workload just lands on another node. A Deployment whose pod template pins it to the node
(`nodeSelector: kubernetes.io/hostname=<node>`, left from an earlier debugging session) has
nowhere to go: its replacement stays Pending with `FailedScheduling ... 1 node(s) were
unschedulable, N node(s) didn't match Pod's node affinity/selector`. The node is found at inject
time (where the workload runs), so the same fault works whatever the scheduler chose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault, node_of

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

HOSTNAME = "kubernetes.io/hostname"
POLL_S = 5.0


def _pinned(pods: list[dict[str, Any]]) -> bool:
    """Every pod is a pinned one, Ready, none terminating: the pin's rollout is over."""
    return bool(pods) and all(
        not (pod.get("metadata") or {}).get("deletionTimestamp")
        and HOSTNAME in ((pod.get("spec") or {}).get("nodeSelector") or {})
        and any(c.get("type") == "Ready" and c.get("status") == "True"
                for c in (pod.get("status") or {}).get("conditions") or [])
        for pod in pods)


class PinnedCordonParams(FaultParams):
    namespace: str
    name: str  # the Deployment
    labels: dict[str, str]  # its pods' labels
    timeout_s: float = 180.0


@fault
class PinnedNodeCordoned(Fault):
    """Pin the Deployment to the node its pod runs on, cordon that node, and evict the pod."""

    name = "pinned_node_cordoned"
    Params = PinnedCordonParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, PinnedCordonParams)
        node = node_of(cluster, p.namespace, p.labels, skip_terminating=True)
        deployment = cluster.get("Deployment", p.namespace, p.name) or {}
        before = ((deployment.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeSelector")
        selector = ",".join(f"{k}={v}" for k, v in sorted(p.labels.items()))
        # The pin came first and rolled out onto the same node; maintenance came later.
        cluster.patch("Deployment", p.namespace, p.name,
                      {"spec": {"template": {"spec": {"nodeSelector": {HOSTNAME: node}}}}})
        waited = 0.0
        while not _pinned(cluster.list("Pod", p.namespace, label_selector=selector)):
            if waited >= p.timeout_s:
                raise RuntimeError(f"cannot inject: {p.name} did not roll out onto {node} in {waited:.0f}s")
            cluster.advance(POLL_S)
            waited += POLL_S
        cluster.patch("Node", None, node, {"spec": {"unschedulable": True}}, patch_type="merge")
        for pod in cluster.list("Pod", p.namespace, label_selector=selector):
            if (pod.get("spec") or {}).get("nodeName") == node:
                cluster.delete("Pod", p.namespace, pod["metadata"]["name"])
        return {"node": node, "node_selector": before}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, PinnedCordonParams)
        cluster.patch("Node", None, state["node"], {"spec": {"unschedulable": None}}, patch_type="merge")
        cluster.patch("Deployment", p.namespace, p.name,
                      {"spec": {"template": {"spec": {"nodeSelector": state.get("node_selector")}}}},
                      patch_type="merge")
