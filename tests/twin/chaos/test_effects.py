"""The query service: network, http, dns, io, stress (OOM), time — and the kernel's view of IOChaos."""

from __future__ import annotations

from sregym.twin import Twin
from support.chaos_web import chaos, ready_pods

DB = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: db-data, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default, labels: {app: db}}
spec:
  containers:
  - name: mongo
    image: mongo:7.0
    volumeMounts: [{name: data, mountPath: /data/db}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: db-data}}
"""


def _pod(twin: Twin, name: str) -> dict:
    return twin.store.peek("Pod", "default", name)


def test_network_delay_and_partition(twin: Twin) -> None:
    pods = sorted(p["metadata"]["name"] for p in ready_pods(twin))
    a, b, c = pods[0], pods[1], pods[2]
    twin.create(chaos("NetworkChaos", "delay", {
        "action": "delay", "mode": "all", "direction": "to",
        "selector": {"pods": {"default": [a]}},
        "delay": {"latency": "200ms", "jitter": "10ms", "correlation": "25"}}))
    twin.create(chaos("NetworkChaos", "split", {
        "action": "partition", "mode": "all", "direction": "both",
        "selector": {"pods": {"default": [b]}},
        "target": {"mode": "all", "selector": {"pods": {"default": [c]}}}}))
    service = twin.services.chaos
    assert service.network(_pod(twin, a), _pod(twin, c)) is None  # nothing injected before a tick
    twin.advance(1)
    effect = service.network(_pod(twin, a), _pod(twin, c))
    assert effect is not None and effect.delay_ms == 200 and effect.jitter_ms == 10 and not effect.partition
    # The reply path of a flow into the delayed pod is shaped too.
    assert service.network(_pod(twin, c), _pod(twin, a)).delay_ms == 200
    cut = service.network(_pod(twin, c), _pod(twin, b))
    assert cut is not None and cut.partition
    assert service.network(_pod(twin, b), pods and _pod(twin, pods[3])) is None  # not a target
    twin.delete("NetworkChaos", "chaos-mesh", "split")
    twin.advance(1)
    assert service.network(_pod(twin, c), _pod(twin, b)) is None


def test_stress_memory_over_limit_is_oom_killed(twin: Twin) -> None:
    target = ready_pods(twin)[0]["metadata"]["name"]
    twin.create(chaos("StressChaos", "mem", {
        "mode": "all", "selector": {"pods": {"default": [target]}}, "containerNames": ["nginx"],
        "stressors": {"memory": {"workers": 1, "size": "512MB"}, "cpu": {"workers": 2, "load": 50}}}))
    twin.advance(2)
    status = twin.get("pods", "default", target)["status"]["containerStatuses"]
    nginx = next(s for s in status if s["name"] == "nginx")
    assert nginx["lastState"]["terminated"]["reason"] == "OOMKilled"
    assert nginx["lastState"]["terminated"]["exitCode"] == 137
    assert nginx["restartCount"] == 1
    cpu, memory = twin.services.chaos.stress(_pod(twin, target))
    assert cpu == 1.0 and memory == 512 << 20
    # The stressor died with the killed instance: the restarted one runs normally.
    twin.advance(20)
    nginx = next(s for s in twin.get("pods", "default", target)["status"]["containerStatuses"]
                 if s["name"] == "nginx")
    assert nginx["restartCount"] == 1 and "running" in nginx["state"]


def test_iochaos_fault_errno_and_kernel_block_errors(twin: Twin) -> None:
    twin.apply(DB)
    assert twin.settle(60, until=lambda: (_pod(twin, "db").get("status") or {}).get("phase") == "Running")
    twin.create(chaos("IOChaos", "io", {
        "action": "fault", "mode": "one", "selector": {"labelSelectors": {"app": "db"}, "namespaces": ["default"]},
        "volumePath": "/data/db", "path": "/data/db/**", "errno": 5, "percent": 100, "methods": ["READ", "WRITE"]}))
    twin.advance(1)
    service = twin.services.chaos
    db = _pod(twin, "db")
    effect = service.io(db, "/data/db")
    assert effect is not None and effect.errno == 5 and effect.error_name == "EIO"
    assert effect.message == "input/output error"
    assert service.io(db, "/tmp") is None
    assert service.io(_pod(twin, ready_pods(twin)[0]["metadata"]["name"]), "/data/db") is None
    node = db["spec"]["nodeName"]
    twin.advance(40)
    kernel = [line.text for line in twin.services.logs.node_lines(node, "kernel")]
    blk = [t for t in kernel if t.startswith("blk_update_request: I/O error, dev sdb, sector ")]
    assert len(blk) >= 2
    assert any(t.startswith("Buffer I/O error on dev sdb1, logical block ") for t in kernel)
    assert twin.services.nodeos.disk(node, "sdb").bad_sectors
    twin.delete("IOChaos", "chaos-mesh", "io")
    twin.advance(1)
    assert service.io(db, "/data/db") is None


def test_dns_http_and_time_effects(twin: Twin) -> None:
    target = ready_pods(twin)[0]["metadata"]["name"]
    sel = {"pods": {"default": [target]}}
    twin.create(chaos("DNSChaos", "dns", {"action": "error", "mode": "all", "selector": sel,
                                          "patterns": ["geo.*", "*.example.com"]}))
    twin.create(chaos("HTTPChaos", "http", {"mode": "all", "selector": sel, "target": "Request", "port": 80,
                                            "method": "GET", "path": "/api/*", "abort": True}))
    twin.create(chaos("TimeChaos", "skew", {"mode": "all", "selector": sel, "timeOffset": "-10m",
                                            "containerNames": ["nginx"]}))
    twin.advance(1)
    service = twin.services.chaos
    pod = _pod(twin, target)
    assert service.dns(pod, "geo.default.svc.cluster.local.") == "error"
    assert service.dns(pod, "www.example.com") == "error"
    assert service.dns(pod, "profile") is None
    effect = service.http(pod, 80, "GET", "/api/hotels?x=1")
    assert effect is not None and effect.abort
    assert service.http(pod, 80, "POST", "/api/hotels") is None
    assert service.http(pod, 8080, "GET", "/api/hotels") is None
    assert service.time_offset(pod) == -600.0
    twin.services.nodeos.set_clock_offset(pod["spec"]["nodeName"], 2.5)
    assert service.time_offset(pod) == -597.5
