"""Metastable failures with a transient Chaos Mesh trigger: the trigger ends, the bad state
stays at the same load, only a policy fix ends it, and the durability check replays the trigger."""

from __future__ import annotations

import pytest

from sregym.faults.base import make_fault
from sregym.faults.chaos_objects import CHAOS_NAMESPACE
from sregym.problems.registry import PROBLEMS
from support.problem_runs import deployed

HR = "hotel-reservation/metastable-capacity-retry-storm-v1"
ASTRO = "astronomy-shop/metastable-catalog-retry-storm-v1"
CASES = {HR: ("hotel-reservation", "io.kompose.service=profile", "StressChaos"),
         ASTRO: ("astronomy-shop", "opentelemetry.io/name=product-catalog", "NetworkChaos")}


def _restarts(cluster, namespace: str, selector: str) -> int:
    return sum(int(cs.get("restartCount") or 0) for pod in cluster.list("Pod", namespace, label_selector=selector)
               for cs in (pod.get("status") or {}).get("containerStatuses") or [])


def test_transient_chaos_runs_out_and_leaves_no_experiment() -> None:
    cluster, run = deployed(HR)
    params = dict(run.problem.faults[1].params)
    fault = make_fault("transient_chaos", params)
    start = cluster.twin.clock.now
    state = fault.inject(cluster)
    assert state == {"name": params["name"], "kind": "StressChaos"}
    assert cluster.twin.clock.now - start >= params["seconds"]
    assert cluster.get("StressChaos", CHAOS_NAMESPACE, params["name"]) is None
    fault.recover(cluster, state)  # nothing left to delete: no error


def test_transient_chaos_refuses_a_selector_without_pods() -> None:
    cluster, _run = deployed(HR)
    fault = make_fault("transient_chaos", {"namespace": "hotel-reservation", "labels": {"io.kompose.service": "nope"},
                                           "action": {"action": "delay", "delay": {"latency": "30ms"}}})
    with pytest.raises(LookupError):
        fault.inject(cluster)


@pytest.mark.parametrize("problem_id", [HR, ASTRO])
def test_the_policy_alone_is_healthy_the_trigger_tips_it_and_only_the_policy_fix_recovers(problem_id: str) -> None:
    """Bistability at one load: the same configuration is healthy before the trigger and
    collapsed after it; the gold policy brings it back."""
    namespace, selector, _kind = CASES[problem_id]
    cluster, run = deployed(problem_id)
    policy, trigger = run.problem.faults
    make_fault(policy.fault, policy.params).inject(cluster)
    run.advance(90)
    healthy = cluster.entry_stats(30)
    assert healthy.success_ratio > 0.99 and healthy.p95_ms < 100
    restarts = _restarts(cluster, namespace, selector)
    make_fault(trigger.fault, trigger.params).inject(cluster)  # the trigger is over when this returns
    run.advance(120)
    collapsed = cluster.entry_stats(30)
    assert collapsed.success_ratio < 0.9
    assert abs(collapsed.requests - healthy.requests) < 0.2 * healthy.requests  # same offered load
    assert _restarts(cluster, namespace, selector) == restarts  # no restart broke the loop
    run.apply_gold()
    run.advance(60)
    assert cluster.entry_stats(30).success_ratio > 0.99


@pytest.mark.parametrize("problem_id", [HR, ASTRO])
def test_restarting_the_overloaded_service_fails_the_replayed_trigger(problem_id: str) -> None:
    """Clearing the queue is not a fix: the durability replay collapses the system again."""
    cluster, run = deployed(problem_id)
    run.inject()
    run.advance(30)
    callee = "profile" if problem_id == HR else "product-catalog"
    cluster.patch("Deployment", run.problem.namespace, callee,
                  {"spec": {"template": {"metadata": {"annotations": {
                      "kubectl.kubernetes.io/restartedAt": "2024-06-01T00:00:00Z"}}}}})
    score = run.verify(window_s=180)
    failed = {c.name for c in score.checks if not c.passed}
    assert "replayed_chaos_recovers" in failed


def test_both_are_metastable_problems() -> None:
    for problem_id in (HR, ASTRO):
        problem = PROBLEMS.get(problem_id)
        assert problem.tags.layers == ("metastable",)
        assert problem.mitigation.durability[0].check == "replayed_chaos_recovers"
