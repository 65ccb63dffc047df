"""Node pressure and lifecycle: a stopped kubelet, NoExecute taints and memory-pressure evictions.

One small twin per scenario (a Deployment pinned to one worker), advanced in simulated time;
each assertion names what a real 1.32 cluster shows (conditions, taints, events, pod phases).
"""

from __future__ import annotations

import re
from typing import Any

from sregym.twin import Twin
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.topology import Topology

NODE = "kind-worker"


def _deployment(name: str, *, containers: list[dict[str, Any]], tolerations: list[dict[str, Any]] | None = None,
                replicas: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeSelector": {"kubernetes.io/hostname": NODE}, "containers": containers}
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def _pods(twin: Twin, app: str) -> list[dict[str, Any]]:
    return [p for p in twin.store.scan("Pod", "default") if (p["metadata"].get("labels") or {}).get("app") == app]


def _conditions(obj: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {c["type"]: (c["status"], c.get("reason")) for c in obj["status"].get("conditions") or []}


def _events(twin: Twin, reason: str) -> list[str]:
    return [e["message"] for e in twin.store.scan("Event") if e.get("reason") == reason]


def test_stopped_kubelet_node_goes_unknown_pods_terminate_and_recover() -> None:
    twin = Twin(seed=3, topology=Topology.default(workers=1))
    twin.apply(_deployment("web", containers=[{"name": "web", "image": "nginx:1.27"}], replicas=2))
    twin.advance(30)
    old = {p["metadata"]["name"] for p in _pods(twin, "web")}
    lease = twin.store.peek("Lease", "kube-node-lease", NODE)["spec"]["renewTime"]
    nodeos_of(twin).set_kubelet_running(NODE, False)
    twin.advance(30)  # within node-monitor-grace-period (50 s)
    assert _conditions(twin.store.peek("Node", None, NODE))["Ready"] == ("True", "KubeletReady")
    twin.advance(30)
    node = twin.store.peek("Node", None, NODE)
    assert twin.store.peek("Lease", "kube-node-lease", NODE)["spec"]["renewTime"] == lease
    for cond in node["status"]["conditions"]:
        assert (cond["status"], cond["reason"], cond["message"]) == (
            "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert {(t["key"], t["effect"]) for t in node["spec"]["taints"]} == {
        ("node.kubernetes.io/unreachable", "NoSchedule"), ("node.kubernetes.io/unreachable", "NoExecute")}
    assert all(_conditions(p)["Ready"][0] == "False" for p in _pods(twin, "web"))
    assert f"Node {NODE} status is now: NodeNotReady" in _events(twin, "NodeNotReady")
    twin.advance(240)  # tolerationSeconds 300 from DefaultTolerationSeconds not yet over
    assert not any(p["metadata"].get("deletionTimestamp") for p in _pods(twin, "web"))
    twin.advance(40)
    stuck = [p for p in _pods(twin, "web") if p["metadata"]["name"] in old]
    assert len(stuck) == 2 and all(p["metadata"].get("deletionTimestamp") for p in stuck)  # Terminating
    assert all(_conditions(p)["DisruptionTarget"] == ("True", "DeletionByTaintManager") for p in stuck)
    assert sorted(m for m in _events(twin, "TaintManagerEviction") if "default/" in m) == sorted(
        f"Marking for deletion Pod default/{name}" for name in old)
    nodeos_of(twin).set_kubelet_running(NODE, True)
    twin.advance(20)
    node = twin.store.peek("Node", None, NODE)
    assert _conditions(node)["Ready"] == ("True", "KubeletReady")
    assert not node["spec"].get("taints")
    pods = _pods(twin, "web")
    assert not {p["metadata"]["name"] for p in pods} & old  # the kubelet confirmed the deletions
    assert twin.store.peek("Lease", "kube-node-lease", NODE)["spec"]["renewTime"] != lease


def test_noexecute_taint_evicts_after_toleration_seconds() -> None:
    twin = Twin(seed=4, topology=Topology.default(workers=1))
    tolerating = [{"key": "maint", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]
    twin.apply(_deployment("tol", containers=[{"name": "c", "image": "nginx:1.27"}], tolerations=tolerating))
    twin.apply(_deployment("plain", containers=[{"name": "c", "image": "nginx:1.27"}]))
    twin.advance(20)
    plain = {p["metadata"]["name"] for p in _pods(twin, "plain")}
    twin.store.mutate("Node", None, NODE, lambda n: n["spec"].update(
        taints=[{"key": "maint", "value": "now", "effect": "NoExecute", "timeAdded": twin.clock.iso()}]))
    twin.advance(2)
    assert plain and all(p["metadata"].get("deletionTimestamp") for p in _pods(twin, "plain")
                         if p["metadata"]["name"] in plain)
    assert not any(p["metadata"].get("deletionTimestamp") for p in _pods(twin, "tol"))
    twin.advance(50)
    assert not any(p["metadata"].get("deletionTimestamp") for p in _pods(twin, "tol"))
    twin.advance(15)
    name = next(m for m in _events(twin, "TaintManagerEviction") if "/tol-" in m)
    assert name.startswith("Marking for deletion Pod default/tol-")


def test_memory_pressure_condition_taint_and_eviction_message() -> None:
    twin = Twin(seed=5, topology=Topology.default(workers=1))
    twin.apply(_deployment("victim", containers=[{"name": "app", "image": "polinux/stress",
                                                   "command": ["stress", "--vm", "1", "--vm-bytes", "300M"]}]))
    twin.apply(_deployment("hog", containers=[{
        "name": "hog", "image": "polinux/stress", "command": ["stress", "--vm", "1", "--vm-bytes", "15400M"],
        "resources": {"requests": {"memory": "15600Mi"}}}]))
    twin.advance(40)
    node = twin.store.peek("Node", None, NODE)
    assert _conditions(node)["MemoryPressure"] == ("True", "KubeletHasInsufficientMemory")
    assert ("node.kubernetes.io/memory-pressure", "NoSchedule") in {
        (t["key"], t["effect"]) for t in node["spec"]["taints"]}
    evicted = [p for p in _pods(twin, "victim") if p["status"].get("reason") == "Evicted"]
    assert evicted, "the pod over its requests goes first"
    pod = evicted[0]
    assert pod["status"]["phase"] == "Failed"
    message = pod["status"]["message"]
    assert re.fullmatch(r"The node was low on resource: memory\. Threshold quantity: 100Mi, available: \d+(Ki|Mi)\. "
                        r"Container app was using 301Mi, request is 0, has larger consumption of memory\. ", message)
    assert message in _events(twin, "Evicted")
    assert "Attempting to reclaim memory" in _events(twin, "EvictionThresholdMet")
    assert f"Node {NODE} status is now: NodeHasInsufficientMemory" in _events(twin, "NodeHasInsufficientMemory")
    assert all(p["status"].get("reason") != "Evicted" for p in _pods(twin, "hog"))
    # The replacement cannot go back to the tainted node: its nodeSelector leaves it Pending.
    assert any(p["status"].get("phase") == "Pending" for p in _pods(twin, "victim"))
