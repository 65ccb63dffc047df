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
