"""`node.bound_pods.pods_on`: the per-node pod lists per-node work reads instead of scanning every
pod once per node, equal to that scan (same pods, same order) after every write."""

from __future__ import annotations

from sregym.twin import Twin
from sregym.twin.node.bound_pods import pods_on


def _scanned(twin: Twin, node: str) -> list[str]:
    return [p["metadata"]["uid"] for p in twin.store.scan("Pod") if (p.get("spec") or {}).get("nodeName") == node]


def test_pods_on_equals_the_full_scan_after_each_write() -> None:
    twin = Twin(seed=2)
    twin.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                "spec": {"replicas": 9, "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
    nodes = [n["metadata"]["name"] for n in twin.store.scan("Node")]
    for _ in range(3):
        twin.advance(5)
        for node in nodes:
            assert [p["metadata"]["uid"] for p in pods_on(twin.store, node)] == _scanned(twin, node)
    worker = next(n for n in nodes if _scanned(twin, n) and "control-plane" not in n)
    before = len(pods_on(twin.store, worker))
    victim = next(p for p in pods_on(twin.store, worker) if p["metadata"]["namespace"] == "default")
    twin.store.delete("Pod", "default", victim["metadata"]["name"], grace_period=0)
    assert [p["metadata"]["uid"] for p in pods_on(twin.store, worker)] == _scanned(twin, worker)
    assert len(pods_on(twin.store, worker)) == before - 1
    assert pods_on(twin.store, "no-such-node") == []
