"""Node operating-system faults, made the way they happen on real clusters: kernel settings
changed from a privileged pod.

`node_sysctl` creates a privileged, hostPID DaemonSet in `kube-system` (named like the node
tuning an operator rolls out) pinned to the node that runs the selected workload. Its container
enters the host's namespaces (`nsenter -t 1 -m -u -i -n -p`) and runs `sysctl -w KEY=VALUE`,
then sleeps, as such tuning pods do. The twin's shell executes that command on the node
(`twin/userland/node_host.py`), so the setting lands in the node's kernel state and the symptoms
follow from it. Like a real sysctl, the value stays when the DaemonSet is deleted: recovering
takes setting it back (recover runs a privileged Job on the node that does so).

Pod-level kernel settings (`securityContext.sysctls`, e.g. a tiny
`net.ipv4.ip_local_port_range`) need no helper: `patch_objects` writes them into a Deployment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, delete_if_present, fault, node_of

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

POLL_S = 1.0
IMAGE = "busybox:1.36"
HOST_ENTER = ("nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--")


def sysctl_pod_spec(node: str, script: str, *, restart: str = "Always") -> dict[str, Any]:
    """A privileged hostPID pod on `node` that runs `script` in the host's namespaces."""
    return {"nodeSelector": {"kubernetes.io/hostname": node}, "hostPID": True, "hostNetwork": True,
            "restartPolicy": restart, "priorityClassName": "system-node-critical",
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "sysctl", "image": IMAGE, "command": [*HOST_ENTER, "sh", "-c", script],
                            "securityContext": {"privileged": True},
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}


def sysctl_daemonset(name: str, namespace: str, node: str, key: str, value: str) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": name}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": sysctl_pod_spec(node, f"sysctl -w {key}='{value}' && sleep infinity")}}}


def sysctl_job(name: str, namespace: str, node: str, key: str, value: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
            "spec": {"backoffLimit": 2, "ttlSecondsAfterFinished": 600,
                     "template": {"spec": sysctl_pod_spec(node, f"sysctl -w {key}='{value}'", restart="Never")}}}


class NodeSysctlParams(FaultParams):
    name: str = "node-sysctl-tuning"
    namespace: str = "kube-system"
    key: str
    value: str
    restore: str  # the node's value before the fault
    # The node is the one running a pod of this workload.
    target_namespace: str
    target_labels: dict[str, str]
    settle_timeout_s: float = 60.0


def _running(cluster: Cluster, namespace: str, labels: dict[str, str]) -> bool:
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return any((p.get("status") or {}).get("phase") in ("Running", "Succeeded")
               for p in cluster.list("Pod", namespace, label_selector=selector))


@fault
class NodeSysctl(Fault):
    """A kernel setting changed on one node by a privileged DaemonSet; it persists."""

    name = "node_sysctl"
    Params = NodeSysctlParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, NodeSysctlParams)
        node = node_of(cluster, p.target_namespace, p.target_labels)
        cluster.create(sysctl_daemonset(p.name, p.namespace, node, p.key, p.value))
        waited = 0.0
        while not _running(cluster, p.namespace, {"app.kubernetes.io/name": p.name}) and waited < p.settle_timeout_s:
            cluster.advance(POLL_S)
            waited += POLL_S
        return {"node": node}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, NodeSysctlParams)
        delete_if_present(cluster, "DaemonSet", p.namespace, p.name)
        node = state.get("node")
        if node:
            job = f"{p.name}-restore"
            if cluster.get("Job", p.namespace, job) is None:
                cluster.create(sysctl_job(job, p.namespace, str(node), p.key, p.restore))
