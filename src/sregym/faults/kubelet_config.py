"""A change to one node's kubelet configuration, made the way a node operator makes it without SSH:
a privileged, hostPID Job pinned to the node enters the host's namespaces, edits one eviction
threshold in `/var/lib/kubelet/config.yaml` with sed and runs `systemctl restart kubelet`, since
the kubelet reads that file only when it starts. The twin's shell runs both on the node
(`twin/userland/node_host.py`, `systemctl.py`), so the restarted kubelet loads the new threshold
(`twin/node/kubelet_config.py`).

The file outlives the Job, so recovering takes another such Job with the old value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, delete_if_present, fault, node_of
from sregym.faults.node_os import sysctl_pod_spec

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

CONFIG = "/var/lib/kubelet/config.yaml"
POLL_S = 2.0


def set_threshold_script(section: str, signal: str, value: str) -> str:
    """sed the `signal` line of the file's `section` map to `value`, then restart the kubelet."""
    return (f"sed -i 's/^  {signal}: .*$/  {signal}: {value}/' {CONFIG} && "
            f"grep -A4 '^{section}:' {CONFIG} && systemctl restart kubelet")


def config_job(name: str, namespace: str, node: str, script: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
            "spec": {"backoffLimit": 2,
                     "template": {"spec": sysctl_pod_spec(node, script, restart="Never")}}}


class KubeletConfigParams(FaultParams):
    name: str = "kubelet-config-sync"
    namespace: str = "kube-system"
    signal: str  # nodefs.available, imagefs.available, memory.available, nodefs.inodesFree
    value: str
    restore: str  # the node's value before the change
    section: str = "evictionHard"
    # The node is the one running a pod of this workload.
    target_namespace: str
    target_labels: dict[str, str]
    timeout_s: float = 120.0


def _finished(cluster: Cluster, namespace: str, name: str) -> bool:
    job = cluster.get("Job", namespace, name) or {}
    return int((job.get("status") or {}).get("succeeded") or 0) > 0


@fault
class KubeletConfig(Fault):
    """One eviction threshold of one node's kubelet changed and the kubelet restarted."""

    name = "kubelet_config"
    Params = KubeletConfigParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, KubeletConfigParams)
        node = node_of(cluster, p.target_namespace, p.target_labels, skip_terminating=True)
        cluster.create(config_job(p.name, p.namespace, node, set_threshold_script(p.section, p.signal, p.value)))
        waited = 0.0
        while not _finished(cluster, p.namespace, p.name):
            if waited >= p.timeout_s:
                raise RuntimeError(f"cannot inject: Job {p.name} did not finish after {waited:.0f}s")
            cluster.advance(POLL_S)
            waited += POLL_S
        return {"node": node}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, KubeletConfigParams)
        delete_if_present(cluster, "Job", p.namespace, p.name)
        node = state.get("node")
        restore = f"{p.name}-restore"
        if node and cluster.get("Job", p.namespace, restore) is None:
            cluster.create(config_job(restore, p.namespace, str(node),
                                      set_threshold_script(p.section, p.signal, p.restore)))
