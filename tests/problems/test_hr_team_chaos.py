"""Hotel Reservation problems rooted in a team's Chaos Mesh Schedule left running in the app's
namespace (AIOpsLab's Chaos Mesh scenarios): the Schedule is the ground truth's root cause and is
visible to the agent; restarting the victim does not end the symptom (the next run strikes
again), pausing the Schedule does (deleting it is the gold, run by the registry-wide check
protocol). Nothing the cluster shows names the benchmark."""

from __future__ import annotations

import json

import pytest

from sregym.apps.hotel_reservation import NAMESPACE
from sregym.faults.scheduled_chaos import spawned
from sregym.problems.builders import rollout_restart
from sregym.problems.catalog.hotel_reservation.team_chaos import SCENARIOS
from sregym.problems.family import family_of
from sregym.problems.registry import get_problem
from sregym.problems.run import apply_action
from support.problem_runs import deployed

AIOPSLAB = {"container_kill-detection", "container_kill-localization", "pod_failure_hotel_res-1", "pod_kill_hotel_res-1", "network_loss_hotel_res-1",
            "network_delay_hotel_res-1"}
FORBIDDEN = ("sregym", "benchmark", "fault", "inject", "aiopslab", "ground", "scheduled")
PAUSE = "experiment.chaos-mesh.org/pause"


def _ids() -> list[str]:
    return [f"hotel-reservation/{s.default_victim}-scheduled-{a}-v1" for a, s in SCENARIOS.items()]


def test_the_problems_cover_aiopslab_chaos_scenarios_and_name_the_schedule() -> None:
    covered = set()
    for problem_id in _ids():
        p = get_problem(problem_id)
        covered |= {s.split(":", 1)[1] for s in p.tags.sources if s.startswith("aiopslab:")}
        params = p.faults[0].params
        assert params["schedule_namespace"] == NAMESPACE  # the app namespace, which the agent sees
        assert [(rc.entity.kind, rc.entity.namespace, rc.entity.name) for rc in p.ground_truth.root_causes] == [
            ("Schedule", NAMESPACE, params["name"])]
        assert [(a.op, a.kind, a.name) for a in p.gold] == [("delete", "Schedule", params["name"])]
        visible = (p.title + json.dumps(params)).lower()
        assert not [w for w in FORBIDDEN if w in visible], visible
    assert covered == AIOPSLAB


def test_container_kill_names_the_victims_container_in_every_variant() -> None:
    family = family_of("hotel-reservation/geo-scheduled-container-kill-v1")
    assert family is not None
    variant = get_problem("hotel-reservation/geo-scheduled-container-kill-v1@service=rate")
    params = variant.faults[0].params
    assert params["experiment"]["containerNames"] == ["hotel-reserv-rate"]
    assert params["labels"] == {"io.kompose.service": "rate"}
    assert variant.ground_truth.root_causes[0].entity.name == "rate-container-kill"


@pytest.fixture(scope="module")
def injected():
    cluster, run = deployed("hotel-reservation/user-scheduled-pod-failure-v1")
    run.inject()
    run.advance(20)
    return cluster, run


def test_the_agent_sees_the_schedule_and_restarting_user_does_not_fix_it(injected) -> None:
    cluster, run = injected
    agent = cluster.as_user("agent")
    assert [(s["metadata"]["namespace"], s["metadata"]["name"]) for s in agent.list("Schedule", None)] == [
        (NAMESPACE, "user-pod-failure")]
    assert len(agent.list("PodChaos", NAMESPACE)) == 1  # the current run
    apply_action(cluster, rollout_restart(NAMESPACE, "user", stamp="2025-06-01T00:00:00Z"))
    score = run.verify(window_s=90)
    assert not score.passed


def test_pausing_the_schedule_as_the_agent_ends_the_symptom(injected) -> None:
    cluster, run = injected
    agent = cluster.as_user("agent")
    agent.patch("Schedule", NAMESPACE, "user-pod-failure", {"metadata": {"annotations": {PAUSE: "true"}}},
                patch_type="merge")
    run.advance(10)
    children = spawned(cluster, "PodChaos", "user-pod-failure", NAMESPACE)
    assert all((c["metadata"].get("annotations") or {}).get(PAUSE) == "true" for c in children)
    score = run.verify()
    assert score.passed, score
