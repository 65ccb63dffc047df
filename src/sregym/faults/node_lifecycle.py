"""Faults that take a node out from under the application: a host agent that stops the kubelet,
a memory-hungry batch job, and a host agent that sets the node's clock a year back.

All three are ordinary Kubernetes writes an operator could have made:

- `host_agent` creates a privileged DaemonSet in `kube-system`, pinned to the node that runs a
  given service (`kubernetes.io/hostname`), with the host's PID namespace and `/run/systemd`
  mounted, whose script acts on the node in a loop — `systemctl stop kubelet` (the node goes
  NotReady/Unknown, its pods are marked NotReady and later Terminating) or `date -s` through
  `nsenter -t 1` (the kubelet's TLS to the API server fails its certificate check). Because it
  loops, a node repaired while the agent still runs breaks again;
- `memory_hog` creates a Deployment of memory-holding batch workers, one per worker node by
  their requests, which push every node below the kubelet's `memory.available` threshold:
  MemoryPressure, evictions, replacements Pending behind the memory-pressure taint.

Recovery deletes the objects. A node the agent broke is repaired the way a node team would do it
(start the kubelet, reset the clock from the RTC) through the twin's node OS — the twin-only
hook `repair_node`; on a real cluster that is a manual step on the host.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, delete_if_present, fault, node_of

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

HOST_LABEL = "kubernetes.io/hostname"


def repair_node(cluster: Cluster, node: str) -> bool:
    """What the node team does on the host: start the kubelet, set the clock from the RTC.
    Twin only (False on a real cluster, where it is a manual step)."""
    twin = getattr(cluster, "twin", None)
    if twin is None or not node:
        return False
    from sregym.twin.chaos.nodeos import nodeos_of

    nodeos = nodeos_of(twin)
    nodeos.set_kubelet_running(node, True)
    nodeos.set_clock_offset(node, 0.0)
    return True


# ----------------------------------------------------------------------- host agent
class HostAgentParams(FaultParams):
    name: str = "node-maintenance-agent"
    namespace: str = "kube-system"
    target_namespace: str
    target_labels: dict[str, str]  # the service whose node the agent is pinned to
    script: str  # what the agent runs on the host, in a loop
    env: dict[str, str] = {}
    interval_s: int = 60
    image: str = "alpine:3.20"
    wait_s: float = 20.0  # let the first pass run before returning


def host_agent_daemonset(p: HostAgentParams, node: str) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": p.name}
    container = {
        "name": "agent", "image": p.image, "command": ["/bin/sh", "-c"],
        "args": [f"while true; do {p.script}; sleep {p.interval_s}; done"],
        "env": [{"name": k, "value": v} for k, v in p.env.items()],
        "securityContext": {"privileged": True},
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
        "volumeMounts": [{"name": "systemd", "mountPath": "/run/systemd"}],
    }
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": p.name, "namespace": p.namespace, "labels": dict(labels)},
            "spec": {"selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"hostPID": True, "nodeSelector": {HOST_LABEL: node},
                                           "tolerations": [{"operator": "Exists"}],
                                           "containers": [container],
                                           "volumes": [{"name": "systemd",
                                                        "hostPath": {"path": "/run/systemd"}}]}}}}


@fault
class HostAgent(Fault):
    """A privileged host agent pinned to one node, acting on the node's kubelet or clock."""

    name = "host_agent"
    twin_only = "repairing the node after recovery (start the kubelet, reset the clock) is a twin hook"
    Params = HostAgentParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, HostAgentParams)
        node = node_of(cluster, p.target_namespace, p.target_labels, skip_terminating=True)
        cluster.create(host_agent_daemonset(p, node))
        cluster.advance(p.wait_s)
        return {"node": node}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, HostAgentParams)
        delete_if_present(cluster, "DaemonSet", p.namespace, p.name)
        repair_node(cluster, str(state.get("node") or ""))


# ----------------------------------------------------------------------- memory hog
class MemoryHogParams(FaultParams):
    name: str = "nightly-report-builder"
    namespace: str = "analytics"
    replicas: int = 3
    request: str = "15872Mi"  # 15.5Gi
    hold: str = "15770M"  # what each worker keeps resident (~15.4Gi)
    image: str = "polinux/stress"
    wait_s: float = 5.0


def memory_hog_objects(p: MemoryHogParams) -> list[dict[str, Any]]:
    labels = {"app": p.name}
    container = {"name": "builder", "image": p.image,
                 "command": ["stress", "--vm", "1", "--vm-bytes", p.hold, "--vm-hang", "0"],
                 "resources": {"requests": {"cpu": "100m", "memory": p.request}}}
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": p.namespace}},
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": p.name, "namespace": p.namespace, "labels": dict(labels)},
             "spec": {"replicas": p.replicas, "selector": {"matchLabels": dict(labels)},
                      "template": {"metadata": {"labels": dict(labels)},
                                   "spec": {"containers": [container]}}}}]


@fault
class MemoryHog(Fault):
    """Batch workers that request and hold almost a node's memory each."""

    name = "memory_hog"
    Params = MemoryHogParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, MemoryHogParams)
        namespace, deployment = memory_hog_objects(p)
        created_ns = cluster.get("Namespace", None, p.namespace) is None
        if created_ns:
            cluster.create(namespace)
        cluster.create(deployment)
        cluster.advance(p.wait_s)
        return {"namespace_created": created_ns}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, MemoryHogParams)
        delete_if_present(cluster, "Deployment", p.namespace, p.name)
        if state.get("namespace_created"):
            delete_if_present(cluster, "Namespace", None, p.namespace)
