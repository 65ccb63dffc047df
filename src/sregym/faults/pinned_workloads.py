"""Workloads someone deployed next to the app, optionally pinned to the node of one of its
services: a connection soak test (`tcp-soak`, `twin/node/soak_image.py`) holding thousands of
connections, or a privileged node probe that stops time sync and moves the node's clock.

`pinned_workloads` creates the given objects. With `pin_to_labels`, every Deployment's pods get
`nodeName` of the node that runs the selected workload, as SREGym pins its flooding client and
its clock injector to one worker. It waits until the `wait_for` pods run, so the effect is in
place when inject returns; recover deletes what it created (what the agent already removed is
skipped), which closes held connections. What a workload changed on the node (a clock) is not
undone by deleting it: the problem's recover step or gold does that.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, delete_if_present, fault, node_of
from sregym.faults.node_os import sysctl_pod_spec

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

POLL_S = 1.0
RECOVER_JOB = "node-maintenance"


class PinnedWorkloadsParams(FaultParams):
    objects: list[dict[str, Any]]
    # Pin the Deployments' pods to the node running a pod of this workload (empty: no pinning).
    pin_namespace: str = ""
    pin_to_labels: dict[str, str] = {}
    wait_for: dict[str, str] = {}  # labels of the pods that must run before inject returns
    settle_timeout_s: float = 60.0
    # Run on the pinned node at recover, in the host's namespaces (what the workload changed there).
    recover_host_command: str = ""


def _running(cluster: Cluster, namespace: str, labels: dict[str, str]) -> bool:
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return any((p.get("status") or {}).get("phase") == "Running"
               for p in cluster.list("Pod", namespace, label_selector=selector))


@fault
class PinnedWorkloads(Fault):
    """Workloads created next to the app, pinned to one service's node."""

    name = "pinned_workloads"
    Params = PinnedWorkloadsParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, PinnedWorkloadsParams)
        node = node_of(cluster, p.pin_namespace, p.pin_to_labels) if p.pin_to_labels else ""
        created: list[list[str]] = []
        namespace = ""
        for obj in p.objects:
            obj = copy.deepcopy(obj)
            if node and obj.get("kind") == "Deployment":
                obj["spec"]["template"]["spec"]["nodeName"] = node
            cluster.create(obj)
            meta = obj["metadata"]
            namespace = meta.get("namespace", "")
            created.append([obj["kind"], meta.get("namespace", ""), meta["name"]])
        waited = 0.0
        while p.wait_for and not _running(cluster, namespace, p.wait_for) and waited < p.settle_timeout_s:
            cluster.advance(POLL_S)
            waited += POLL_S
        return {"node": node, "created": created}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, PinnedWorkloadsParams)
        for kind, namespace, name in reversed(state.get("created") or []):
            delete_if_present(cluster, kind, namespace or None, name)
        node = state.get("node")
        if p.recover_host_command and node and cluster.get("Job", "kube-system", RECOVER_JOB) is None:
            cluster.create({"apiVersion": "batch/v1", "kind": "Job",
                            "metadata": {"name": RECOVER_JOB, "namespace": "kube-system"},
                            "spec": {"backoffLimit": 2, "ttlSecondsAfterFinished": 600, "template": {
                                "spec": sysctl_pod_spec(str(node), p.recover_host_command, restart="Never")}}})
