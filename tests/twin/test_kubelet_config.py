"""A node's `/var/lib/kubelet/config.yaml` is stored, read by the kubelet when it (re)starts, and
its eviction thresholds drive DiskPressure, the taint and evictions."""

from __future__ import annotations

from typing import Any

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.node.kubelet_config import load_thresholds
from sregym.twin.topology import Topology
from sregym.twin.userland.context import exec_context, run_exec

NODE = "kind-worker"
CONFIG = "/var/lib/kubelet/config.yaml"
RAISE = f"sed -i 's/nodefs.available: 10%/nodefs.available: 99%/' {CONFIG}"


def _host_pod() -> dict[str, Any]:
    container = {"name": "sh", "image": "debian:12", "command": ["sleep", "infinity"],
                 "securityContext": {"privileged": True}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "host", "namespace": "kube-system"},
            "spec": {"nodeName": NODE, "hostPID": True, "priorityClassName": "system-node-critical",
                     "containers": [container]}}


def _app() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"nodeSelector": {"kubernetes.io/hostname": NODE},
                                           "containers": [{"name": "web", "image": "busybox:1.36",
                                                           "command": ["sleep", "infinity"]}]}}}}


def _host(twin: Twin, script: str) -> Any:
    pod = twin.store.peek("Pod", "kube-system", "host")
    return run_exec(exec_context(twin, pod, "sh"), ["nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--",
                                                     "sh", "-c", script])


def _node(twin: Twin) -> dict[str, Any]:
    return twin.store.peek("Node", None, NODE)


def _condition(twin: Twin, kind: str) -> str:
    return next(c["status"] for c in _node(twin)["status"]["conditions"] if c["type"] == kind)


def _taints(twin: Twin) -> list[str]:
    return [t["key"] for t in _node(twin)["spec"].get("taints") or []]


def test_thresholds_parse_percentages_and_quantities_and_keep_defaults() -> None:
    thresholds = load_thresholds("evictionHard:\n  nodefs.available: 2Gi\n  memory.available: 5%\n")
    assert thresholds["nodefs.available"].quantity == 2 << 30
    assert thresholds["memory.available"].fraction == 0.05
    assert thresholds["imagefs.available"].fraction == 0.15  # not given: the default stays
    assert load_thresholds(": not yaml [")["nodefs.available"].fraction == 0.10


def test_a_raised_nodefs_threshold_acts_only_after_a_kubelet_restart_and_is_undone_the_same_way() -> None:
    twin = Twin(seed=3, topology=Topology.default(workers=1))
    twin.apply(_host_pod())
    twin.apply(_app())
    twin.advance(30)
    shown = _host(twin, f"cat {CONFIG}")
    assert shown.exit_code == 0 and "  nodefs.available: 10%\n" in shown.stdout

    assert _host(twin, RAISE).exit_code == 0
    assert "nodefs.available: 99%" in nodeos_of(twin).kubelet_config(NODE)
    twin.advance(30)
    assert _condition(twin, "DiskPressure") == "False"  # the running kubelet read the old file

    assert _host(twin, "systemctl restart kubelet").exit_code == 0
    twin.advance(60)
    assert _condition(twin, "DiskPressure") == "True"
    assert "node.kubernetes.io/disk-pressure" in _taints(twin)
    # The DaemonSet controller removes its evicted pods at once; the Evicted events stay.
    evicted = [e["message"] for e in twin.store.scan("Event") if e.get("reason") == "Evicted"]
    assert evicted, "the kubelet evicts under a threshold the disk cannot meet"
    assert evicted[0].startswith("The node was low on resource: ephemeral-storage. Threshold quantity: ")
    assert any(e.get("reason") == "EvictionThresholdMet" for e in twin.store.scan("Event"))

    assert _host(twin, f"sed -i 's/nodefs.available: 99%/nodefs.available: 10%/' {CONFIG}").exit_code == 0
    twin.advance(30)
    assert _condition(twin, "DiskPressure") == "True"  # still the loaded threshold
    assert _host(twin, "systemctl restart kubelet").exit_code == 0
    twin.advance(30)
    assert _condition(twin, "DiskPressure") == "False"  # a new kubelet forgets the old pressure
    twin.advance(30)
    assert "node.kubernetes.io/disk-pressure" not in _taints(twin)
