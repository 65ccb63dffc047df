"""Routes kept across ticks (`dataplane.route_inputs`) change nothing an engineer can observe.

One short run walks through every kind of input a route depends on (a Deployment scaled to 0 and
back, a wrong `targetPort`, a deny-all NetworkPolicy, a NetworkChaos partition, a CoreDNS outage, a
deleted pod, a full conntrack table) and is run twice from the same seed: with routes cached across
ticks and with the cache re-evaluating every route once per tick. Metrics, spans, logs and API
objects must be identical, and the cached run must actually have skipped evaluations."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from sregym.twin import Twin
from sregym.twin.chaos import install_chaos_mesh
from sregym.twin.dataplane import route_inputs
from sregym.twin.dataplane.connect import Router
from sregym.twin.dataplane.synthetic import synthetic_app
from sregym.twin.node.logs import log_store

NS = "rc"
DENY = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "deny", "namespace": NS},
        "spec": {"podSelector": {"matchLabels": {"app": "svc-1-0"}}, "policyTypes": ["Ingress"]}}
PARTITION = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "NetworkChaos",
             "metadata": {"name": "part", "namespace": NS},
             "spec": {"action": "partition", "mode": "all", "direction": "both",
                      "selector": {"namespaces": [NS], "labelSelectors": {"app": "svc-1-1"}}}}


def _events(twin: Twin) -> None:
    """Route-changing writes, each undone, with ticks in between for the cache to go stale."""
    steps: list[tuple[Any, float]] = [
        (lambda: twin.patch("Deployment", NS, "svc-1-0", {"spec": {"replicas": 0}}), 8),
        (lambda: twin.patch("Deployment", NS, "svc-1-0", {"spec": {"replicas": 1}}), 12),
        (lambda: twin.patch("Service", NS, "svc-1-1",
                            {"spec": {"ports": [{"name": "grpc", "port": 9000, "targetPort": 9001}]}}), 6),
        (lambda: twin.patch("Service", NS, "svc-1-1",
                            {"spec": {"ports": [{"name": "grpc", "port": 9000, "targetPort": 9000}]}}), 6),
        (lambda: twin.create(DENY), 6),
        (lambda: twin.delete("NetworkPolicy", NS, "deny"), 6),
        (lambda: twin.create(PARTITION), 8),
        (lambda: twin.delete("NetworkChaos", NS, "part"), 8),
        (lambda: twin.patch("Deployment", "kube-system", "coredns", {"spec": {"replicas": 0}}), 15),
        (lambda: twin.patch("Deployment", "kube-system", "coredns", {"spec": {"replicas": 2}}), 15),
        (lambda: twin.delete("Pod", NS, twin.list("pods", NS, label_selector="app=svc-1-1")[0]
                             ["metadata"]["name"]), 15),
        (lambda: [twin.services.nodeos.set_conntrack_max(n, 1) for n in twin.services.nodeos.node_names()], 5),
        (lambda: [twin.services.nodeos.set_conntrack_max(n, 131072) for n in twin.services.nodeos.node_names()],
         8),
    ]
    for write, seconds in steps:
        write()
        twin.advance(seconds)


def _digest(twin: Twin) -> dict[str, str]:
    """Hashes of everything observable: series samples, spans, container and node logs, objects."""
    def h(items: Any) -> str:
        sha = hashlib.sha256()
        for item in items:
            sha.update(repr(item).encode())
        return sha.hexdigest()

    services = twin.services
    logs = log_store(twin)
    return {
        "metrics": h((s.labels, s.timestamps, s.values) for s in services.tsdb.all_series()),
        "spans": h(services.traces.spans()),
        "logs": h((cid, labels, [(ln.at, ln.stream, ln.text) for ln in logs.lines(cid)])
                  for cid, labels in logs.instances()),
        "node_logs": h((n, s, [(ln.at, ln.text) for ln in logs.node_lines(n, s)]) for n, s in logs.node_sources()),
        "objects": h((kind.key, obj) for kind, obj in twin.store.all_objects()),
    }


def _run(cross_tick: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, str], int]:
    monkeypatch.setattr(route_inputs, "CROSS_TICK", cross_tick)
    calls = [0]
    evaluate = Router._evaluate

    def counted(self: Router, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return evaluate(self, *args, **kwargs)

    monkeypatch.setattr(Router, "_evaluate", counted)
    twin = Twin(seed=17)
    install_chaos_mesh(twin)
    synthetic_app(NS, layers=(1, 2), rps=20, retries=1).deploy(twin)
    twin.advance(30)
    _events(twin)
    return _digest(twin), calls[0]


def test_cached_routes_give_the_same_run_as_per_tick_evaluation(monkeypatch: pytest.MonkeyPatch) -> None:
    cached, cached_calls = _run(True, monkeypatch)
    fresh, fresh_calls = _run(False, monkeypatch)
    assert cached == fresh
    assert cached_calls * 3 < fresh_calls  # the cache was really used


def test_a_closed_listener_invalidates_a_cached_route() -> None:
    """A port closing without any API write (the process stops listening) must not leave a
    cached route that still connects."""
    twin = Twin(seed=18)
    synthetic_app("rl", layers=(1, 1), rps=5).deploy(twin)
    twin.advance(20)
    dataplane = twin.services.dataplane
    src = twin.list("pods", "rl", label_selector="app=gateway")[0]
    assert dataplane.connect(src, "svc-1-0", 9000).ok
    twin.advance(1)
    assert dataplane.connect(src, "svc-1-0", 9000).ok  # served from the cache
    dst = twin.list("pods", "rl", label_selector="app=svc-1-0")[0]
    runtime = twin.services.runtime
    pod_rt = runtime.pod("rl", dst["metadata"]["name"])
    instance = next(iter(pod_rt.containers.values())).current
    instance.listening.clear()
    runtime.changed()
    twin.advance(1)
    assert dataplane.connect(src, "svc-1-0", 9000).error == "refused"
