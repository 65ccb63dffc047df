"""Astronomy Shop problems rooted in a Chaos Mesh Schedule left running in the shop's namespace
(ITBench's scheduled scenarios): the Schedule is named in the ground truth and visible to the
agent, which can pause or delete it; pausing ends the symptom like deleting does (the gold, run by
the registry-wide check protocol), while restarting the victim does not (the next run strikes
again). Nothing the cluster shows names the benchmark."""

from __future__ import annotations

import json

import pytest

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.faults.scheduled_chaos import spawned
from sregym.problems.catalog.astronomy_shop.common import restart
from sregym.problems.catalog.astronomy_shop.scheduled_chaos import CASES
from sregym.problems.registry import get_problem
from sregym.problems.run import apply_action
from support.problem_runs import deployed

ITBENCH = {17, 18, 19, 61, 80, 81, 83, 91}
FORBIDDEN = ("sregym", "benchmark", "fault", "inject", "itbench", "ground")
PROBLEM = "astronomy-shop/checkout-payment-scheduled-loss-v1"
PAUSE = "experiment.chaos-mesh.org/pause"


def test_the_family_covers_the_scheduled_scenarios_and_names_the_schedule() -> None:
    covered = set()
    for case in CASES.values():
        p = get_problem(f"astronomy-shop/{case.slug}-v1")
        covered |= {int(s.split(":")[1]) for s in p.tags.sources if s.startswith("itbench:")}
        schedule = p.faults[0].params
        assert schedule["schedule_namespace"] == NAMESPACE  # a user namespace the agent sees
        assert [(rc.entity.kind, rc.entity.namespace, rc.entity.name) for rc in p.ground_truth.root_causes] == [
            ("Schedule", NAMESPACE, schedule["name"])]
        assert p.ground_truth.affected[0].entity.name == case.victim
        assert [(a.op, a.kind, a.name) for a in p.gold] == [("delete", "Schedule", schedule["name"])]
        visible = (p.title + json.dumps(schedule)).lower()
        assert not [w for w in FORBIDDEN if w in visible], visible
    assert covered == ITBENCH


@pytest.fixture(scope="module")
def injected():
    cluster, run = deployed(PROBLEM)
    run.inject()
    run.advance(60)
    return cluster, run


def test_the_agent_sees_the_schedule_and_a_restart_of_the_victim_does_not_fix_it(injected) -> None:
    cluster, run = injected
    agent = cluster.as_user("agent")
    schedules = agent.list("Schedule", None)
    assert [(s["metadata"]["namespace"], s["metadata"]["name"]) for s in schedules] == [
        (NAMESPACE, "checkout-payment-network-loss")]
    assert len(agent.list("NetworkChaos", NAMESPACE)) == 1  # the running child
    apply_action(cluster, restart("checkout"))
    apply_action(cluster, restart("payment"))
    score = run.verify(window_s=90)
    assert not score.passed


def test_pausing_the_schedule_as_the_agent_ends_the_symptom(injected) -> None:
    cluster, run = injected
    agent = cluster.as_user("agent")
    agent.patch("Schedule", NAMESPACE, "checkout-payment-network-loss",
                {"metadata": {"annotations": {PAUSE: "true"}}}, patch_type="merge")
    run.advance(10)
    for child in spawned(cluster, "NetworkChaos", "checkout-payment-network-loss", NAMESPACE):
        assert (child["metadata"].get("annotations") or {}).get(PAUSE) == "true"
    score = run.verify()
    assert score.passed, score
