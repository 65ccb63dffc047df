"""Astronomy Shop parity problems (SREGym's Astronomy Shop scenarios on mechanisms sregym already
has): one problem per SREGym id, nothing an agent reads names the benchmark, and the symptoms
come from the twin's mechanisms as real `kubectl` shows them — cart's gRPC health answers
NOT_SERVING under the flag, frontend-proxy's env has FRONTEND_HOST twice, a fix that only
unpins checkout's rollout brings its wrong port live, and a node-local Service leaves the
frontend without an endpoint. The check protocol runs in the registry-wide batch."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.kube import KubeHarness, serve_twin
from tests.support.problem_runs import deployed

from sregym.cluster.twin import TwinCluster
from sregym.oracles.mitigation import evaluate
from sregym.problems.model import CheckSpec
from sregym.problems.registry import get_problem, select
from sregym.problems.run import ProblemRun

NS = "astronomy-shop"
SOURCES = {
    "cart-failed-readiness-probe": "astronomy_shop_failed_readiness_probe",
    "frontend-liveness-probe": "liveness_probe_misconfiguration_astronomy_shop",
    "ad-liveness-probe-too-aggressive": "liveness_probe_too_aggressive_astronomy_shop",
    "frontend-proxy-env-shadowed": "env_variable_shadowing_astronomy_shop",
    "frontend-duplicate-pvc-mounts": "duplicate_pvc_mounts_astronomy_shop",
    "frontend-dns-nxdomain": "service_dns_resolution_failure_astronomy_shop",
    "coredns-stale-service-zone": "stale_coredns_config_astronomy_shop",
    "frontend-sidecar-port-conflict": "sidecar_port_conflict_astronomy_shop",
    "ad-host-port-conflict": "service_port_conflict_astronomy_shop",
    "checkout-unschedulable-wrong-port": "unschedulable_incorrect_port_assignment",
    "recommendation-traffic-policy-local": "internal_traffic_policy_local_astronomy_shop",
    "kubelet-stopped-on-frontend-node": "kubelet_crash",
}
FORBIDDEN = ("sregym", "benchmark", "fault", "inject", "chaos")
PLACE_ORDER = CheckSpec(check="service_error_free", params={
    "service": "checkout", "span_name": "oteldemo.CheckoutService/PlaceOrder", "window_s": 60.0})


@pytest.mark.parametrize("slug", sorted(SOURCES))
def test_each_scenario_is_one_shop_problem_that_names_no_benchmark(slug: str) -> None:
    p = get_problem(f"astronomy-shop/{slug}-v1")
    assert p.tags.sources == (f"sregym:{SOURCES[slug]}",)
    assert "astronomy-shop" in p.suites and p.app == NS
    visible = (p.title + json.dumps([f.params for f in p.faults])).lower()
    assert not [w for w in FORBIDDEN if w in visible], visible


def test_every_sregym_id_is_covered_once_in_the_suite() -> None:
    covered = [s for p in select(suite="astronomy-shop") for s in p.tags.sources
               if s.removeprefix("sregym:") in SOURCES.values()]
    assert sorted(covered) == sorted(f"sregym:{s}" for s in SOURCES.values())


# ------------------------------------------------------------------ through real kubectl
@pytest.fixture(scope="module")
def shop() -> ProblemRun:
    _, run = deployed("astronomy-shop/cart-failed-readiness-probe-v1", seed=5)
    return run


@pytest.fixture
def served(shop: ProblemRun, tmp_path: Path) -> Iterator[KubeHarness]:
    harness = serve_twin(shop.cluster.twin, tmp_path)
    try:
        yield harness
    finally:
        harness.server.stop()


def _run(shop: ProblemRun, slug: str) -> ProblemRun:
    """A run of `slug` on the shop's cluster, with the shop's baseline."""
    cluster: TwinCluster = shop.cluster  # type: ignore[assignment]
    run = ProblemRun(get_problem(f"astronomy-shop/{slug}-v1"), cluster, seed=5, noise="none")
    run.baseline, run.healthy = shop.baseline, shop.healthy
    return run


def test_the_lost_node_is_the_frontends(shop: ProblemRun) -> None:
    """The kubelet problem's gold gives up the node by name: it must be where frontend (the agent's
    target) runs, which placement makes the same for every seed."""
    from sregym.problems.catalog.astronomy_shop.node_lifecycle import FRONTEND_NODE

    p = get_problem("astronomy-shop/kubelet-stopped-on-frontend-node-v1")
    assert p.faults[0].params["target_labels"] == {"opentelemetry.io/name": "frontend"}
    assert p.gold[1].name == FRONTEND_NODE and p.tags.sources == ("sregym:kubelet_crash",)
    nodes = {pod["spec"].get("nodeName") for pod in shop.cluster.list(
        "Pod", NS, label_selector="opentelemetry.io/name=frontend")}
    assert nodes == {FRONTEND_NODE}


def _failing(run: ProblemRun, *checks: CheckSpec) -> list[str]:
    return [r.name for r in evaluate(run.check_context(), checks or run.problem.mitigation.must_fix, "must_fix")
            if not r.passed]


def test_cart_readiness_fails_because_the_flag_says_not_serving(shop: ProblemRun, served: KubeHarness) -> None:
    run = _run(shop, "cart-failed-readiness-probe")
    run.inject()
    served.advance(60)
    events = served.ok("-n", NS, "get", "events", "--field-selector", "reason=Unhealthy", "-o",
                       "jsonpath={range .items[*]}{.involvedObject.name} {.message}{'\\n'}{end}")
    assert any(line.startswith("cart-") and "NOT_SERVING" in line for line in events.splitlines()), events
    assert _failing(run) == ["workloads_ready"]
    run.apply_gold()  # the flag back off and flagd restarted: the probe passes, the rollout ends
    served.advance(90)
    assert _failing(run) == []
    run.recover()
    served.advance(60)


def test_frontend_proxy_env_defines_frontend_host_twice(shop: ProblemRun, served: KubeHarness) -> None:
    run = _run(shop, "frontend-proxy-env-shadowed")
    run.inject()
    served.advance(60)
    values = served.ok("-n", NS, "get", "deployment", "frontend-proxy", "-o",
                       'jsonpath={.spec.template.spec.containers[0].env[?(@.name=="FRONTEND_HOST")].value}')
    assert values.split() == ["frontend", "localhost"]
    assert _failing(run) == ["service_error_free"]
    served.ok("-n", NS, "patch", "deployment", "frontend-proxy", "--type", "json", "-p",
              json.dumps(run.problem.gold[0].patch))
    served.advance(120)
    assert _failing(run) == []
    run.recover()
    served.advance(60)


def test_unpinning_checkout_alone_brings_the_wrong_port_live(shop: ProblemRun, served: KubeHarness) -> None:
    """While the rollout is stuck the old pod serves with the right port: orders succeed. Removing
    only the nodeSelector lets the new pod run, and every PlaceOrder fails until the port is fixed."""
    run = _run(shop, "checkout-unschedulable-wrong-port")
    run.inject()
    served.advance(60)
    pending = served.ok("-n", NS, "get", "pods", "-l", "opentelemetry.io/name=checkout",
                        "--field-selector", "status.phase=Pending", "-o", "name")
    assert pending.strip(), "the new checkout pod should be Pending"
    assert _failing(run, PLACE_ORDER) == []
    served.ok("-n", NS, "patch", "deployment", "checkout", "--type", "json", "-p",
              '[{"op": "remove", "path": "/spec/template/spec/nodeSelector"}]')
    served.advance(120)
    assert _failing(run) == [] and _failing(run, PLACE_ORDER) == ["service_error_free"]
    served.ok("-n", NS, "set", "env", "deployment/checkout", "PRODUCT_CATALOG_ADDR=product-catalog:8080")
    served.advance(120)
    assert _failing(run, PLACE_ORDER) == []
    run.recover()
    served.advance(60)


def test_node_local_policy_leaves_the_frontend_without_an_endpoint(shop: ProblemRun, served: KubeHarness) -> None:
    run = _run(shop, "recommendation-traffic-policy-local")
    run.inject()
    served.advance(60)
    nodes = {name: served.ok("-n", NS, "get", "pods", "-l", f"opentelemetry.io/name={name}", "-o",
                             "jsonpath={.items[*].spec.nodeName}").split()
             for name in ("frontend", "recommendation")}
    assert nodes == {"frontend": ["kind-worker2"], "recommendation": ["kind-worker"]}
    assert served.ok("-n", NS, "get", "service", "recommendation", "-o",
                     "jsonpath={.spec.internalTrafficPolicy}") == "Local"
    assert _failing(run) == ["deployment_reaches"]
    served.ok("-n", NS, "patch", "service", "recommendation", "-p", '{"spec": {"internalTrafficPolicy": "Cluster"}}')
    served.advance(10)
    assert _failing(run) == []
    run.recover()
    served.advance(60)

