"""The demo-shop app: manifests as a user would `kubectl apply` them.

frontend (nginx, 2 replicas) → catalog (nginx on 8080 → 80, 2 replicas, configured from the
`catalog-config` ConfigMap) and cache (Redis); a load generator polls the frontend. Small enough to
deploy in a few simulated seconds, rich enough for image, Service, scheduling, config, quota and
admission problems. Its problems live in `problems/catalog/demo_shop/`.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.catalog import AppSpec, Slo, app

NAMESPACE = "demo-shop"


def _deployment(name: str, image: str, port: int | None, *, replicas: int = 1,
                env: list[dict[str, Any]] | None = None, command: list[str] | None = None,
                tier: str = "backend") -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": image,
                                 "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}
    if port is not None:
        container["ports"] = [{"containerPort": port, "name": "http" if port == 80 else "tcp"}]
        container["readinessProbe"] = {"tcpSocket": {"port": port}, "periodSeconds": 5}
    if env:
        container["env"] = env
    if command:
        container["command"] = command
    labels = {"app": name, "tier": tier}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [container]}}}}


def _service(name: str, port: int, target: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": name}},
            "spec": {"selector": {"app": name},
                     "ports": [{"name": "http" if port in (80, 8080) else "tcp", "port": port,
                                "targetPort": target, "protocol": "TCP"}]}}


def objects() -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "catalog-config", "namespace": NAMESPACE},
         "data": {"CATALOG_MODE": "full", "CATALOG_PAGE_SIZE": "20"}},
        _deployment("frontend", "nginx:1.27", 80, replicas=2, tier="web",
                    env=[{"name": "CATALOG_ADDR", "value": "catalog:8080"},
                         {"name": "CACHE_ADDR", "value": "cache:6379"}]),
        _service("frontend", 80, 80),
        _deployment("catalog", "nginx:1.27", 80, replicas=2,
                    env=[{"name": "CATALOG_MODE",
                          "valueFrom": {"configMapKeyRef": {"name": "catalog-config", "key": "CATALOG_MODE"}}},
                         {"name": "CATALOG_PAGE_SIZE",
                          "valueFrom": {"configMapKeyRef": {"name": "catalog-config",
                                                            "key": "CATALOG_PAGE_SIZE"}}}]),
        _service("catalog", 8080, 80),
        _deployment("cache", "redis:7.2", 6379),
        _service("cache", 6379, 6379),
        _deployment("loadgenerator", "busybox:1.36", None, tier="load",
                    command=["sh", "-c", "while true; do nc -z -w 2 frontend 80; sleep 5; done"]),
    ]


PORTS = {"frontend": 80, "catalog": 8080, "cache": 6379}


@app
def demo_shop() -> AppSpec:
    # No description: the brief says what every app without one gets (namespace, entry point).
    return AppSpec(name="demo-shop", namespace=NAMESPACE, objects_fn=objects, ports=PORTS,
                   slo=Slo(success_ratio=0.99, p95_latency_ms=1000.0, window_s=60.0, entry_service="frontend"),
                   entry_service="frontend", entry_port=PORTS["frontend"],
                   load_generators=(f"Deployment/{NAMESPACE}/loadgenerator",))
