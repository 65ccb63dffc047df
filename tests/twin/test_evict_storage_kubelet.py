"""The kubelet's local-storage evictions: emptyDir sizeLimit, ephemeral-storage limits, DiskPressure
(bytes and inodes) and the image garbage collector.

One small twin per scenario (workloads pinned to the one worker), advanced in simulated time; each
assertion names what a 1.32 kubelet shows (pod status, messages, conditions, events, taints).
Writes come from busybox loops in the containers, so the per-pod accounting is exercised end to end.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from sregym.twin import Twin
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.controllers.kubelet_quantity import decimal_text, quantity_text
from sregym.twin.controllers.storage_eviction import DiskSignal
from sregym.twin.node.ephemeral_storage import pod_storage
from sregym.twin.topology import Topology

NODE = "kind-worker"
WRITE = "while true; do dd if=/dev/zero of={path} bs=1M count={mb} oflag=append conv=notrunc status=none; sleep 1; done"


def _twin() -> Twin:
    return Twin(seed=7, topology=Topology.default(workers=1))


def _deploy(twin: Twin, name: str, containers: list[dict[str, Any]], volumes: list[dict[str, Any]] | None = None) -> None:
    spec: dict[str, Any] = {"nodeSelector": {"kubernetes.io/hostname": NODE}, "containers": containers}
    if volumes:
        spec["volumes"] = volumes
    twin.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}})


def _writer(name: str, path: str, mb: int, **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox:1.36", "command": ["sh", "-c", WRITE.format(path=path, mb=mb)], **extra}


def _pods(twin: Twin, app: str) -> list[dict[str, Any]]:
    return [p for p in twin.store.scan("Pod", "default") if (p["metadata"].get("labels") or {}).get("app") == app]


def _evicted(twin: Twin, app: str) -> list[dict[str, Any]]:
    return [p for p in _pods(twin, app) if p["status"].get("reason") == "Evicted"]


def _events(twin: Twin, reason: str) -> list[str]:
    return [e["message"] for e in twin.store.scan("Event") if e.get("reason") == reason]


def _conditions(obj: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: c["status"] for c in obj["status"].get("conditions") or []}


def test_emptydir_over_its_size_limit_evicts_the_pod_and_frees_the_node_disk() -> None:
    twin = _twin()
    disk = nodeos_of(twin).disk(NODE)
    _deploy(twin, "logger", [_writer("app", "/logs/debug.log", 8, volumeMounts=[{"name": "logs", "mountPath": "/logs"}])],
            volumes=[{"name": "logs", "emptyDir": {"sizeLimit": "64Mi"}}])
    before = disk.used_bytes
    twin.advance(5)
    running = _pods(twin, "logger")[0]
    usage = pod_storage(twin, running)
    assert usage.volumes["logs"] > 0 and usage.containers["app"].rootfs == 0
    assert disk.used_bytes - before == usage.total - usage.containers["app"].logs  # df moves with the pod
    twin.advance(20)
    evicted = _evicted(twin, "logger")
    assert evicted, "the emptyDir outgrew its sizeLimit"
    status = evicted[0]["status"]
    message = 'Usage of EmptyDir volume "logs" exceeds the limit "64Mi". '
    assert (status["phase"], status["message"]) == ("Failed", message)
    assert "DisruptionTarget" not in _conditions(evicted[0])  # no condition for local storage limits
    assert message in _events(twin, "Evicted")
    assert any(p["status"].get("phase") in ("Pending", "Running") for p in _pods(twin, "logger"))  # replaced
    assert disk.used_bytes - before < 64 << 20  # the evicted pod's emptyDir is gone


@pytest.mark.parametrize(("containers", "message"), [
    ([_writer("app", "/var/tmp/blob", 8, resources={"limits": {"ephemeral-storage": "40Mi"}})],
     "Pod ephemeral local storage usage exceeds the total limit of containers 40Mi. "),
    ([_writer("small", "/var/tmp/blob", 8, resources={"limits": {"ephemeral-storage": "20Mi"}}),
      {"name": "big", "image": "busybox:1.36", "command": ["sleep", "infinity"],
       "resources": {"limits": {"ephemeral-storage": "1Gi"}}}],
     'Container small exceeded its local ephemeral storage limit "20Mi". '),
], ids=["pod-limit", "container-limit"])
def test_ephemeral_storage_limits_evict_with_the_kubelet_message(containers: list[dict[str, Any]],
                                                                 message: str) -> None:
    twin = _twin()
    _deploy(twin, "w", containers)
    twin.advance(25)
    evicted = _evicted(twin, "w")
    assert evicted and evicted[0]["status"]["message"] == message
    assert message in _events(twin, "Evicted")
    node = twin.store.peek("Node", None, NODE)
    assert _conditions(node)["DiskPressure"] == "False"  # independent of node pressure


def test_disk_pressure_reclaims_images_then_evicts_the_largest_consumer() -> None:
    twin = _twin()
    nodeos = nodeos_of(twin)
    disk = nodeos.disk(NODE)
    _deploy(twin, "quiet", [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "infinity"]}])
    _deploy(twin, "hog", [_writer("app", "/var/tmp/blob", 300)])
    twin.advance(5)
    nodeos.fill_disk(NODE, disk.avail_bytes - int(disk.size_bytes * 0.16))
    twin.advance(30)
    node = twin.store.peek("Node", None, NODE)
    assert _conditions(node)["DiskPressure"] == "True"
    assert ("node.kubernetes.io/disk-pressure", "NoSchedule") in {(t["key"], t["effect"]) for t in node["spec"]["taints"]}
    assert "Attempting to reclaim ephemeral-storage" in _events(twin, "EvictionThresholdMet")
    kubelet = [line.text for line in twin.services.logs.node_lines(NODE, "kubelet")]
    assert any('"Attempting to delete unused images"' in t for t in kubelet)
    evicted = _evicted(twin, "hog")
    assert evicted and not _evicted(twin, "quiet")
    status = evicted[0]["status"]
    assert re.fullmatch(r"The node was low on resource: ephemeral-storage\. Threshold quantity: 15763389\d+, "
                        r"available: \d+(Ki)?\. Container app was using \d+Mi, request is 0, has larger consumption "
                        r"of ephemeral-storage\. ", status["message"]), status["message"]
    assert _conditions(evicted[0])["DisruptionTarget"] == "True"
    assert any("node.kubernetes.io/disk-pressure" in m for m in _events(twin, "FailedScheduling"))


def test_inode_pressure_evicts_the_pod_with_most_files() -> None:
    twin = _twin()
    nodeos = nodeos_of(twin)
    disk = nodeos.disk(NODE)
    _deploy(twin, "files", [{"name": "app", "image": "busybox:1.36", "command": [
        "sh", "-c", "i=0; while true; do i=$((i+1)); dd if=/dev/zero of=/var/tmp/f$i bs=1 count=1 status=none; "
                    "sleep 0.1; done"]}])
    twin.advance(3)
    nodeos.fill_inodes(NODE, disk.inodes_free - int(disk.inodes * 0.05) - 50)
    twin.advance(20)
    evicted = _evicted(twin, "files")
    assert evicted
    threshold = quantity_text(int(disk.inodes * 0.05000000074505806))
    assert re.fullmatch(rf"The node was low on resource: inodes\. Threshold quantity: {threshold}, "
                        r"available: \d+k?\. ", evicted[0]["status"]["message"])


def test_image_gc_reports_free_disk_space_failed_above_the_high_threshold() -> None:
    twin = _twin()
    nodeos = nodeos_of(twin)
    disk = nodeos.disk(NODE)
    nodeos.fill_disk(NODE, disk.avail_bytes - int(disk.size_bytes * 0.17))  # 83 % used: no pressure
    twin.advance(5)
    nodeos.fill_disk(NODE, int(disk.size_bytes * 0.08))  # 91 %: pressure and GC
    twin.advance(310)
    failed = _events(twin, "FreeDiskSpaceFailed")
    assert failed and re.fullmatch(r"Failed to garbage collect required amount of images\. Attempted to free \d+ "
                                   r"bytes, but only found \d+ bytes eligible to free\.", failed[0])


@pytest.mark.parametrize(("value", "binary", "text"), [
    (100 << 20, True, "100Mi"), (10508926313, True, "10508926313"), (0, True, "0"),
    (300000, False, "300k"), (327680, False, "327680"), (2_000_000, False, "2M")])
def test_kubelet_quantities(value: int, binary: bool, text: str) -> None:
    assert (quantity_text(value) if binary else decimal_text(value)) == text


def test_percentage_thresholds_are_float32_like_the_kubelet() -> None:
    signal = DiskSignal("nodefs.available", "ephemeral-storage", 0.10, 105089261568, 1)
    assert signal.threshold == 10508926313  # int64(float64(capacity) * float64(float32(0.1)))
