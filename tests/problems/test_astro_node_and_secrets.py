"""Astronomy Shop problems in what a workload is given (`node_and_secrets.py`), seen through real
`kubectl`: the rotated PostgreSQL password survives a postgresql restart while the stale
product-catalog keeps failing; postgresql under a tiny memory limit is OOMKilled and ITBench's
`rollout undo` fixes it; a kubelet restarted with an eviction threshold above the free disk
reports DiskPressure, taints its node and evicts, until the threshold is put back and the kubelet
restarted. The check protocol runs in the registry-wide batch."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.kube import KubeHarness, serve_twin
from tests.support.problem_runs import deployed

from sregym.cluster.twin import TwinCluster
from sregym.oracles.mitigation import evaluate
from sregym.problems.registry import get_problem
from sregym.problems.run import ProblemRun

NS = "astronomy-shop"
NODE = "kind-worker"


@pytest.fixture(scope="module")
def shop() -> ProblemRun:
    _, run = deployed("astronomy-shop/product-catalog-stale-credentials-v1", seed=5)
    return run


@pytest.fixture
def served(shop: ProblemRun, tmp_path: Path) -> Iterator[KubeHarness]:
    harness = serve_twin(shop.cluster.twin, tmp_path)
    try:
        yield harness
    finally:
        harness.server.stop()


def _run(shop: ProblemRun, slug: str) -> ProblemRun:
    cluster: TwinCluster = shop.cluster  # type: ignore[assignment]
    run = ProblemRun(get_problem(f"astronomy-shop/{slug}-v1"), cluster, seed=5, noise="none")
    run.baseline, run.healthy = shop.baseline, shop.healthy
    return run


def _failing(run: ProblemRun) -> list[str]:
    return [r.name for r in evaluate(run.check_context(), run.problem.mitigation.must_fix, "must_fix")
            if not r.passed]


def test_the_rotation_survives_a_postgresql_restart_and_only_a_product_catalog_restart_fixes_it(
        shop: ProblemRun, served: KubeHarness) -> None:
    run = _run(shop, "product-catalog-stale-credentials")
    run.inject()
    served.advance(60)
    secret = served.ok("-n", NS, "get", "secret", "product-catalog-db-conn", "-o",
                       "jsonpath={.data.DB_CONNECTION_STRING}", user="admin")
    assert "otelp-2q7k9m4x" in base64.b64decode(secret).decode()
    assert 'password authentication failed for user "otelu"' in served.ok("-n", NS, "logs", "deploy/postgresql",
                                                                         "--tail", "50")
    assert _failing(run) == ["service_error_free"]
    # What broke the earlier draft: a postgresql restart re-runs init.sql on an empty data directory.
    served.ok("-n", NS, "delete", "pod", "-l", "opentelemetry.io/name=postgresql", "--wait=false", user="admin")
    served.advance(60)
    assert _failing(run) == ["service_error_free"]  # product-catalog still sends the old password
    served.ok("-n", NS, "rollout", "restart", "deployment/product-catalog")
    served.advance(120)
    assert _failing(run) == []
    run.recover()
    served.advance(90)


def test_postgresql_under_a_tiny_memory_limit_crash_loops_until_the_rollout_is_undone(
        shop: ProblemRun, served: KubeHarness) -> None:
    run = _run(shop, "postgresql-resources-too-small")
    run.inject()
    served.advance(90)
    reasons = served.ok("-n", NS, "get", "pods", "-l", "opentelemetry.io/name=postgresql", "-o",
                        "jsonpath={range .items[*]}{.status.containerStatuses[0].lastState.terminated.reason} "
                        "{.status.containerStatuses[0].state.waiting.reason}{'\\n'}{end}")
    assert "OOMKilled" in reasons, reasons
    assert _failing(run) == ["workloads_ready"]
    served.ok("-n", NS, "rollout", "undo", "deployment/postgresql")  # ITBench's first solution
    served.advance(120)
    assert _failing(run) == []
    run.recover()
    served.advance(60)


def test_a_kubelet_restarted_with_a_raised_threshold_reports_disk_pressure_until_it_is_put_back(
        shop: ProblemRun, served: KubeHarness) -> None:
    run = _run(shop, "kubelet-eviction-threshold")
    run.inject()
    served.advance(60)
    condition = served.ok("get", "node", NODE, "-o",
                          "jsonpath={.status.conditions[?(@.type=='DiskPressure')].status}", user="admin")
    assert condition == "True"
    taints = served.ok("get", "node", NODE, "-o", "jsonpath={.spec.taints[*].key}", user="admin")
    assert "node.kubernetes.io/disk-pressure" in taints
    evicted = served.ok("-n", NS, "get", "events", "--field-selector", "reason=Evicted", "-o",
                        "jsonpath={range .items[*]}{.message}{'\\n'}{end}")
    assert "The node was low on resource: ephemeral-storage. Threshold quantity: " in evicted, evicted
    assert _failing(run) == ["nodes_without_pressure"]
    # A restart alone reloads the same file: the pressure stays.
    manifest = run.problem.gold[0].manifest
    assert manifest is not None
    restart_only = {**manifest, "metadata": {**manifest["metadata"], "name": "kubelet-restart-only"},
                    "spec": {**manifest["spec"], "containers": [{
                        **manifest["spec"]["containers"][0],
                        "command": ["nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--", "systemctl",
                                    "restart", "kubelet"]}]}}
    run.cluster.create(restart_only)
    served.advance(40)
    assert _failing(run) == ["nodes_without_pressure"]
    run.apply_gold()
    served.advance(40)
    shown = served.ok("-n", "kube-system", "logs", f"node-debugger-{NODE}", user="admin")
    assert "nodefs.available: 10%" in shown, shown
    assert _failing(run) == []
    run.recover()
    served.advance(60)
