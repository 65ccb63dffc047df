"""A small web Deployment and Chaos Mesh object builders shared by the chaos tests.

A module, not conftest contents: test modules import these names, and `from conftest import`
resolves to whichever conftest was imported first when several test directories are collected in
one pytest call.
"""

from __future__ import annotations

from typing import Any

from sregym.twin import Twin

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
