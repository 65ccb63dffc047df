"""Containers of one pod share a network namespace: a second bind of a port fails (EADDRINUSE),
that container crash-loops with its program's bind error, and the pod is not Ready."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.twin.twin import Twin

NODE = "kind-worker"


def pod(name: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": NODE, "containers": containers}}


def statuses(twin: Twin, name: str) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in twin.get("pods", "default", name)["status"]["containerStatuses"]}


def ready(twin: Twin, name: str) -> str:
    conditions = twin.get("pods", "default", name)["status"]["conditions"]
    return next(c["status"] for c in conditions if c["type"] == "Ready")


def nc(name: str, port: int) -> dict[str, Any]:
    return {"name": name, "image": "busybox:1.36", "command": ["sh", "-c", f"exec nc -lk -p {port}"]}


@pytest.fixture
def twin() -> Twin:
    return Twin(seed=5)


def test_second_bind_of_a_port_crash_loops(twin: Twin):
    twin.apply(pod("pair", [nc("first", 8080), nc("second", 8080)]))
    twin.advance(90)
    first, second = statuses(twin, "pair")["first"], statuses(twin, "pair")["second"]
    assert "running" in first["state"] and first["restartCount"] == 0 and first["ready"]
    assert second["restartCount"] >= 2 and not second["ready"]
    assert second["lastState"]["terminated"]["exitCode"] == 1
    assert second["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff" or "running" in second["state"]
    assert "nc: bind: Address already in use" in twin.logs("default", "pair", "second", previous=True)
    assert ready(twin, "pair") == "False"


def test_go_sidecar_on_the_main_port_logs_eaddrinuse(twin: Twin):
    exporter = {"name": "metrics", "image": "prom/statsd-exporter:v0.26.1",
                "args": ["--web.listen-address=:80"]}
    twin.apply(pod("web", [{"name": "web", "image": "nginx:1.27"}, exporter]))
    twin.advance(60)
    web, metrics = statuses(twin, "web")["web"], statuses(twin, "web")["metrics"]
    assert "running" in web["state"] and web["restartCount"] == 0
    assert metrics["restartCount"] >= 1
    log = twin.logs("default", "web", "metrics", previous=True)
    assert 'level=error err="listen tcp :80: bind: address already in use"' in log
    assert 'msg="Accepting Prometheus Requests" addr=:80' in log
    assert ready(twin, "web") == "False"


def test_distinct_ports_share_the_pod_fine(twin: Twin):
    exporter = {"name": "metrics", "image": "prom/statsd-exporter:v0.26.1"}  # :9102 and :9125
    twin.apply(pod("web", [{"name": "web", "image": "nginx:1.27"}, exporter]))
    twin.advance(30)
    assert all(s["restartCount"] == 0 and s["ready"] for s in statuses(twin, "web").values())
    assert ready(twin, "web") == "True"
    assert "Listening on\" address=[::]:9102" in twin.logs("default", "web", "metrics")


def test_same_port_in_two_pods_is_no_conflict(twin: Twin):
    twin.apply(pod("a", [nc("server", 8080)]))
    twin.apply(pod("b", [nc("server", 8080)]))
    twin.advance(30)
    assert ready(twin, "a") == "True" and ready(twin, "b") == "True"


def test_udp_and_tcp_of_one_port_do_not_conflict(twin: Twin):
    udp = {"name": "udp", "image": "busybox:1.36", "command": ["sh", "-c", "exec nc -lk -u -p 9000"]}
    twin.apply(pod("mixed", [nc("tcp", 9000), udp]))
    twin.advance(30)
    assert all(s["restartCount"] == 0 for s in statuses(twin, "mixed").values())
