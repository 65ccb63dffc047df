"""A connection soak test deployed into the cluster: programs that open many TCP connections and
keep them open (`tcp-soak`, `twin/node/soak_image.py`).

`connection_soak` creates the given objects (a holding client, and where it needs one a server
and its Service). With `pin_to_labels`, every Deployment's pods get `nodeName` of the node that
runs the selected workload, as SREGym pins its flooding client to one worker. It waits until the
client's pods run, so the connections are held when inject returns; recover deletes what it
created (what the agent already removed is skipped), which closes the connections.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, delete_if_present, fault, node_of

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

POLL_S = 1.0


class ConnectionSoakParams(FaultParams):
    objects: list[dict[str, Any]]
    # Pin the Deployments' pods to the node running a pod of this workload (empty: no pinning).
    pin_namespace: str = ""
    pin_to_labels: dict[str, str] = {}
    wait_for: dict[str, str] = {}  # labels of the pods that must run before inject returns
    settle_timeout_s: float = 60.0


def _running(cluster: Cluster, namespace: str, labels: dict[str, str]) -> bool:
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return any((p.get("status") or {}).get("phase") == "Running"
               for p in cluster.list("Pod", namespace, label_selector=selector))


@fault
class ConnectionSoak(Fault):
    """Long-lived connections held by an in-cluster client."""

    name = "connection_soak"
    Params = ConnectionSoakParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ConnectionSoakParams)
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
        for kind, namespace, name in reversed(state.get("created") or []):
            delete_if_present(cluster, kind, namespace or None, name)
