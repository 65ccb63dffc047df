"""Noise writes transient error chatter into uninvolved containers' logs, through exec only."""

from __future__ import annotations

from sregym.cluster.twin import TwinCluster
from sregym.noise.schedule import CHATTER, PROFILES, NoiseScheduler


def test_log_chatter_lands_in_the_container_log_via_exec() -> None:
    cluster = TwinCluster.new(4)
    twin = cluster.twin
    twin.apply({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "worker", "namespace": "default", "labels": {"app": "worker"}},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "worker"}},
                         "template": {"metadata": {"labels": {"app": "worker"}},
                                      "spec": {"containers": [{"name": "w", "image": "busybox:1.36",
                                                               "command": ["sh", "-c", "sleep infinity"]}]}}}})
    twin.advance(30)
    noise = NoiseScheduler(cluster, profile="high", seed=4, namespace="default")
    (pod,) = twin.list("pods", "default", label_selector="app=worker")
    assert noise._chatter(pod)
    logs = twin.logs("default", pod["metadata"]["name"])
    written = [line for line in logs.splitlines() if line in CHATTER]
    assert len(written) == 2
    assert "log-chatter" in PROFILES["low"]["kinds"] and "log-chatter" in PROFILES["high"]["kinds"]
