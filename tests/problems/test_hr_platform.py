"""Platform faults and checks on a bare twin: recover restores exactly, admission faults bite at
pod recreation, strategy and CronJob checks judge semantics."""

from __future__ import annotations

from typing import Any

from sregym.cluster.twin import TwinCluster
from sregym.faults.base import make_fault
from sregym.oracles.checks import CheckContext
from sregym.oracles.checks_platform import (
    cronjob_runs_complete,
    restart_keeps_available,
    rollout_keeps_capacity,
)

NS = "default"


def _deployment(name: str = "web", replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}


def _cluster() -> TwinCluster:
    cluster = TwinCluster.new(0)
    cluster.apply(_deployment())
    cluster.advance(20)
    return cluster


def test_patch_objects_recover_restores_spec() -> None:
    cluster = _cluster()
    before = cluster.get("Deployment", NS, "web")["spec"]
    fault = make_fault("patch_objects", {"patches": [{"name": "web", "namespace": NS, "patch": {
        "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}}}}]})
    state = fault.inject(cluster)
    ctx = CheckContext(cluster=cluster, namespace=NS)
    assert not rollout_keeps_capacity(ctx, deployment="web")[0]
    fault.recover(cluster, state)
    assert cluster.get("Deployment", NS, "web")["spec"] == before
    assert rollout_keeps_capacity(ctx, deployment="web")[0]


def test_quota_fault_blocks_recreated_pods_and_recover_heals() -> None:
    cluster = _cluster()
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "mem", "namespace": NS},
             "spec": {"hard": {"limits.memory": "1Gi"}}}
    fault = make_fault("create_objects_recreate_pods", {
        "objects": [quota], "recreate": [{"namespace": NS, "label_selector": "app=web"}]})
    state = fault.inject(cluster)
    assert state["deleted"] and state["created"][0]["name"] == "mem"
    cluster.advance(60)
    assert int((cluster.get("Deployment", NS, "web").get("status") or {}).get("readyReplicas") or 0) == 0
    fault.recover(cluster, state)
    cluster.advance(60)
    assert cluster.get("ResourceQuota", NS, "mem") is None
    assert int(cluster.get("Deployment", NS, "web")["status"].get("readyReplicas") or 0) == 1


def test_restart_keeps_available_fails_for_total_unavailability() -> None:
    cluster = _cluster()
    ctx = CheckContext(cluster=cluster, namespace=NS)
    assert restart_keeps_available(ctx, deployment="web")[0]
    cluster.patch("Deployment", NS, "web", {"spec": {"strategy": {"type": "Recreate", "rollingUpdate": None}}},
                  patch_type="merge")
    cluster.advance(10)
    assert not rollout_keeps_capacity(ctx, deployment="web")[0]


def _cronjob(native: bool) -> dict[str, Any]:
    archiver = {"name": "archiver", "image": "busybox:1.36", "command": ["sh", "-c", "echo done"]}
    sidecar = {"name": "shipper", "image": "fluent/fluent-bit:3.1.9"}
    pod: dict[str, Any] = {"restartPolicy": "Never"}
    if native:
        pod.update(initContainers=[{**sidecar, "restartPolicy": "Always"}], containers=[archiver])
    else:
        pod.update(containers=[archiver, sidecar])
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "archive", "namespace": NS},
            "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": pod}}}}}


def test_cronjob_runs_complete_only_with_native_sidecar() -> None:
    for native, expected in ((False, False), (True, True)):
        cluster = TwinCluster.new(0)
        cluster.apply(_cronjob(native))
        cluster.advance(300)
        passed, detail = cronjob_runs_complete(CheckContext(cluster=cluster, namespace=NS))
        assert passed is expected, detail
