"""Shared fixtures for the chaos tests: a twin with a small web app, and the API-server harness
of tests/twin/api (loaded by path: test directories are not packages)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from sregym.twin import Twin

_spec = importlib.util.spec_from_file_location("sregym_api_conftest",
                                               Path(__file__).parents[1] / "api" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_api)
kube = _api.kube

WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80}]
        resources: {limits: {memory: 256Mi, cpu: 500m}, requests: {memory: 64Mi, cpu: 100m}}
        readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 2, failureThreshold: 1}
      - name: sidecar
        image: busybox:1.36
        command: [sh, -c, "while true; do sleep 5; done"]
"""


def chaos(kind: str, name: str, spec: dict[str, Any], *, namespace: str = "chaos-mesh",
          annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


def ready_pods(twin: Twin, app: str = "web") -> list[dict[str, Any]]:
    out = []
    for pod in twin.list("pods", "default", label_selector=f"app={app}"):
        conds = {c["type"]: c["status"] for c in (pod.get("status") or {}).get("conditions") or []}
        if conds.get("Ready") == "True" and not pod["metadata"].get("deletionTimestamp"):
            out.append(pod)
    return out


@pytest.fixture
def twin() -> Twin:
    from sregym.twin.chaos import install_chaos_mesh

    t = Twin(seed=11)
    install_chaos_mesh(t)
    t.apply(WEB)
    assert t.settle(60, until=lambda: len(ready_pods(t)) == 4)
    return t
