"""Device-scoped IOChaos: bad sectors belong to the disk behind the volume, not to the pod."""

from __future__ import annotations

from sregym.twin import Twin
from sregym.twin.chaos.devices import DEVICE_SCOPE, SCOPE_ANNOTATION
from support.chaos_web import chaos

DB = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: db-data, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: db-fresh, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: db, namespace: default}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: mongo
        image: mongo:7.0
        volumeMounts: [{name: data, mountPath: /data/db}]
      volumes:
      - {name: data, persistentVolumeClaim: {claimName: db-data}}
"""
SPEC = {"action": "fault", "mode": "one", "selector": {"labelSelectors": {"app": "db"}, "namespaces": ["default"]},
        "volumePath": "/data/db", "path": "/data/db/**", "errno": 5, "percent": 100, "methods": ["READ", "WRITE"]}


def _db(twin: Twin) -> dict:
    pods = [p for p in twin.list("pods", "default", label_selector="app=db")
            if not p["metadata"].get("deletionTimestamp") and (p.get("status") or {}).get("phase") == "Running"]
    assert len(pods) == 1
    return pods[0]


def _running(twin: Twin) -> bool:
    return any((p.get("status") or {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
               for p in twin.list("pods", "default", label_selector="app=db"))


def _blk(twin: Twin, node: str) -> list[str]:
    return [line.text for line in twin.services.logs.node_lines(node, "kernel")
            if line.text.startswith("blk_update_request: I/O error, dev sdb")]


def test_device_scoped_fault_survives_pod_recreation_until_the_volume_changes(twin: Twin) -> None:
    twin.apply(DB)
    assert twin.settle(90, until=lambda: _running(twin))
    twin.create(chaos("IOChaos", "disk", SPEC, annotations={SCOPE_ANNOTATION: DEVICE_SCOPE}))
    twin.advance(2)
    service = twin.services.chaos
    first = _db(twin)
    assert service.io(first, "/data/db/collection-0.wt").errno == 5
    assert service.io(first, "/tmp") is None

    twin.delete("pods", "default", first["metadata"]["name"])
    assert twin.settle(90, until=lambda: _running(twin) and _db(twin)["metadata"]["uid"] != first["metadata"]["uid"])
    second = _db(twin)
    effect = service.io(second, "/data/db")
    assert effect is not None and effect.errno == 5  # the new pod mounts the same broken disk
    before = len(_blk(twin, second["spec"]["nodeName"]))
    twin.advance(60)
    assert len(_blk(twin, second["spec"]["nodeName"])) > before  # logged where the volume is attached

    twin.patch("deployments", "default", "db", {"spec": {"template": {"spec": {"volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "db-fresh"}}]}}}})
    assert twin.settle(120, until=lambda: _running(twin) and _db(twin)["metadata"]["uid"] != second["metadata"]["uid"])
    assert service.io(_db(twin), "/data/db") is None  # a fresh volume is a healthy disk

    twin.patch("deployments", "default", "db", {"spec": {"template": {"spec": {"volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "db-data"}}]}}}})
    assert twin.settle(120, until=lambda: _running(twin) and service.io(_db(twin), "/data/db") is not None)
    twin.delete("IOChaos", "chaos-mesh", "disk")
    twin.advance(2)
    assert service.io(_db(twin), "/data/db") is None  # deleting the experiment clears the disk
    assert not service.bad_disks.by_disk


def test_pod_scoped_iochaos_still_ends_with_the_pod(twin: Twin) -> None:
    """Without the annotation IOChaos keeps Chaos Mesh's semantics: a recreated pod is clean."""
    twin.apply(DB)
    assert twin.settle(90, until=lambda: _running(twin))
    twin.create(chaos("IOChaos", "io", SPEC))
    twin.advance(2)
    service = twin.services.chaos
    first = _db(twin)
    assert service.io(first, "/data/db") is not None
    twin.delete("pods", "default", first["metadata"]["name"])
    assert twin.settle(90, until=lambda: _running(twin) and _db(twin)["metadata"]["uid"] != first["metadata"]["uid"])
    assert service.io(_db(twin), "/data/db") is None
