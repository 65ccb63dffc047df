"""The edge request-filter problem (`edge_filter.py`), through real `kubectl`: after injection
frontend-proxy is throttled at its 100m limit and the shop's entry SLO fails, the crafted
requests show in the proxy's access log but their source is not visible to the agent; fixing
the rule in the ConfigMap changes nothing until the proxy restarts (Envoy reads its file at
start); the restart ends the saturation. The check protocol runs in the registry-wide batch."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.kube import KubeHarness, serve_twin
from tests.support.problem_runs import deployed

from sregym.problems.catalog.astronomy_shop.edge_filter import BAD_RULE, CONFIGMAP, FIXED_RULE
from sregym.problems.run import ProblemRun

PID = "astronomy-shop/edge-request-filter-cpu-saturation-v1"
NS = "astronomy-shop"


@pytest.fixture(scope="module")
def incident() -> ProblemRun:
    _, run = deployed(PID, seed=5)
    run.inject()
    run.advance(run.problem.settle_s)
    return run


@pytest.fixture(scope="module")
def served(incident: ProblemRun, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHarness]:
    harness = serve_twin(incident.cluster.twin, Path(tmp_path_factory.mktemp("edge")), observability=True)
    try:
        yield harness
    finally:
        harness.server.stop()


def _throttled(run: ProblemRun) -> float:
    rows = run.cluster.promql('sum(rate(container_cpu_cfs_throttled_periods_total{namespace="astronomy-shop",'
                              'container="frontend-proxy"}[1m])) / sum(rate(container_cpu_cfs_periods_total{'
                              'namespace="astronomy-shop",container="frontend-proxy"}[1m]))')
    return float(rows[0]["value"][1]) if rows else 0.0


def test_the_proxy_saturates_and_the_source_stays_hidden(incident: ProblemRun, served: KubeHarness) -> None:
    assert _throttled(incident) > 0.9
    assert not any(r.passed for r in incident.must_fix_now())
    # What the agent sees: the rule in the proxy's configuration, not where the requests come from.
    data = json.loads(served.ok("get", "configmap", CONFIGMAP, "-n", NS, "-o", "json"))["data"]
    assert "envoy.filters.http.lua" in data["envoy.tmpl.yaml"] and BAD_RULE in data["envoy.tmpl.yaml"]
    denied = served.kubectl("get", "deployments", "-n", "sregym-system")
    assert denied.returncode != 0 or "sregym-loadgen-edge" not in denied.stdout


def test_a_fixed_rule_lands_only_with_a_restart(incident: ProblemRun, served: KubeHarness) -> None:
    text = json.loads(served.ok("get", "configmap", CONFIGMAP, "-n", NS, "-o", "json"))["data"]["envoy.tmpl.yaml"]
    patch = {"data": {"envoy.tmpl.yaml": text.replace(BAD_RULE, FIXED_RULE)}}
    served.ok("patch", "configmap", CONFIGMAP, "-n", NS, "--type", "merge", "-p", json.dumps(patch))
    served.advance(90)
    assert _throttled(incident) > 0.9  # the running Envoy still has the old rule
    served.ok("rollout", "restart", "deployment/frontend-proxy", "-n", NS)
    served.advance(120)
    assert _throttled(incident) < 0.25
