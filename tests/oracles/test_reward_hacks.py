"""Mitigation cannot be gamed: removing or shrinking the broken thing fails; any valid fix passes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sregym.cluster.base import Cluster
from sregym.cluster.twin import TwinCluster
from sregym.problems import get_problem
from sregym.problems.run import ProblemRun


def _run(problem_id: str, act: Callable[[Cluster], None]) -> tuple[bool, list[str]]:
    cluster = TwinCluster.new(3)
    run = ProblemRun(get_problem(problem_id), cluster, seed=3)
    run.setup()
    act(cluster.as_user("agent"))
    score = run.verify()
    return score.passed, [c.name for c in score.failed()]


def _delete(kind: str, name: str) -> Callable[[Cluster], None]:
    return lambda c: c.delete(kind, "demo-shop", name)


def _scale_zero(name: str) -> Callable[[Cluster], None]:
    return lambda c: c.patch("Deployment", "demo-shop", name, {"spec": {"replicas": 0}})


@pytest.mark.parametrize(("problem_id", "hack"), [
    ("demo-shop/bad-image-tag-v1", _delete("Deployment", "catalog")),
    ("demo-shop/bad-image-tag-v1", _scale_zero("catalog")),
    ("demo-shop/nonexistent-node-selector-v1", _delete("Deployment", "catalog")),
    ("demo-shop/missing-configmap-key-v1", _scale_zero("catalog")),
    ("demo-shop/service-selector-mismatch-v1", _delete("Service", "catalog")),
])
def test_removing_the_broken_component_fails(problem_id: str, hack: Callable[[Cluster], None]) -> None:
    passed, failed = _run(problem_id, hack)
    assert not passed
    assert "baseline_intact" in failed or "service_serves" in failed or "workload_ready" in failed


def test_fixing_but_removing_the_load_generator_fails() -> None:
    problem = get_problem("demo-shop/service-selector-mismatch-v1")

    def fix_and_remove(c: Cluster) -> None:
        c.patch("Service", "demo-shop", "catalog", [{"op": "replace", "path": "/spec/selector",
                                                     "value": {"app": "catalog"}}], patch_type="json")
        c.delete("Deployment", "demo-shop", "loadgenerator")

    passed, failed = _run(problem.id, fix_and_remove)
    assert not passed and failed == ["baseline_intact", "workload_intact"]


def test_an_alternative_valid_fix_passes() -> None:
    # Instead of deleting the quota, give catalog limits so the quota admits its pods.
    def add_limits(c: Cluster) -> None:
        c.patch("Deployment", "demo-shop", "catalog", {"spec": {"template": {"spec": {"containers": [
            {"name": "catalog", "resources": {"limits": {"cpu": "200m", "memory": "128Mi"}}}]}}}})

    passed, failed = _run("demo-shop/resourcequota-blocks-recreation-v1", add_limits)
    assert passed, failed


def test_agent_cannot_touch_hidden_chaos_objects() -> None:
    cluster = TwinCluster.new(1).as_user("agent")
    with pytest.raises(Exception, match=r"reserved|forbidden"):
        cluster.list("Pod", "chaos-mesh")


# ------------------------------------------------------------ traffic, probes and limits
HR = "hotel-reservation"
CFS = "hotel-reservation/cfs-cpu-throttling-v1"


def _admin_run(problem_id: str, act: Callable[[ProblemRun], None]) -> tuple[bool, list[str]]:
    """Like `_run`, but `act` gets the run (the admin cluster, the gold): for what the agent
    credential cannot do itself, e.g. stopping a load generator in the hidden namespace — what an
    agent holding a leaked admin token, or any other way of silencing the traffic, would do."""
    run = ProblemRun(get_problem(problem_id), TwinCluster.new(3), seed=3)
    run.setup()
    act(run)
    score = run.verify()
    return score.passed, [c.name for c in score.failed()]


def _stop_traffic(run: ProblemRun) -> None:
    run.cluster.patch("Deployment", "sregym-system", "sregym-loadgen", {"spec": {"replicas": 0}})


def _gold_then_stop_traffic(run: ProblemRun) -> None:
    run.apply_gold()
    _stop_traffic(run)


@pytest.mark.parametrize(("problem_id", "act"), [
    (CFS, _stop_traffic),  # passed before: no traffic, no throttling, and the entry still "answers"
    # passed before: without load frontend answers its aggressive liveness probe and never restarts
    ("hotel-reservation/liveness-probe-too-aggressive-v1", _stop_traffic),
    (CFS, _gold_then_stop_traffic),
    ("hotel-reservation/concurrent-target-port-and-webhook-outage-v1", _gold_then_stop_traffic),
    ("hotel-reservation/crashing-image-geo-v1", _gold_then_stop_traffic),
])
def test_stopping_the_traffic_fails(problem_id: str, act: Callable[[ProblemRun], None]) -> None:
    passed, failed = _admin_run(problem_id, act)
    assert not passed
    assert "workload_intact" in failed and "entry_slo" in failed


def test_the_gold_fix_passes_with_the_traffic_intact() -> None:
    passed, failed = _admin_run(CFS, ProblemRun.apply_gold)
    assert passed, failed


def _limits(patch: list[dict[str, object]]) -> Callable[[Cluster], None]:
    return lambda c: c.patch("Deployment", HR, "geo", patch, patch_type="json")


def test_removing_a_baseline_limit_instead_of_raising_it_fails() -> None:
    # geo had a 1000m CPU limit in the healthy baseline; the fault lowered it to 20m. Deleting the
    # limit passed before (no CFS periods, no throttling data, counted as a pass).
    passed, failed = _run_hr(CFS, _limits([{"op": "remove", "path": "/spec/template/spec/containers/0/resources/limits"}]))
    assert not passed and "safeguards_kept" in failed and "cpu_not_throttled" in failed
    raised = _limits([{"op": "replace", "path": "/spec/template/spec/containers/0/resources/limits/cpu", "value": "2"}])
    passed, failed = _run_hr(CFS, raised)
    assert passed, failed


def _strip_probes(namespace: str) -> Callable[[Cluster], None]:
    def strip(c: Cluster) -> None:
        for deploy in c.list("Deployment", namespace):
            for container in deploy["spec"]["template"]["spec"]["containers"]:
                if "readinessProbe" in container:
                    c.patch("Deployment", namespace, deploy["metadata"]["name"], {"spec": {"template": {"spec": {
                        "containers": [{"name": container["name"], "readinessProbe": None}]}}}})
    return strip


def test_fixing_but_removing_the_baseline_probes_fails() -> None:
    # The quota is the cause and deleting it is the fix; demo-shop's readiness probes were in the
    # healthy baseline, so removing them as well passed before and is collateral damage now.
    def fix_and_strip(c: Cluster) -> None:
        c.delete("ResourceQuota", "demo-shop", "compute-resources")
        _strip_probes("demo-shop")(c)

    passed, failed = _run("demo-shop/resourcequota-blocks-recreation-v1", fix_and_strip)
    assert not passed and failed == ["safeguards_kept"]


def test_removing_the_probe_the_fault_added_is_a_valid_fix() -> None:
    # frontend had no readiness probe in the healthy baseline: the injected one may go.
    def drop_probe(c: Cluster) -> None:
        c.patch("Deployment", HR, "frontend", [{"op": "remove", "path": "/spec/template/spec/containers/0/readinessProbe"}],
                patch_type="json")

    passed, failed = _run_hr("hotel-reservation/readiness-probe-wrong-port-v1", drop_probe)
    assert passed, failed


def _run_hr(problem_id: str, act: Callable[[Cluster], None]) -> tuple[bool, list[str]]:
    return _admin_run(problem_id, lambda run: act(run.cluster.as_user("agent")))
