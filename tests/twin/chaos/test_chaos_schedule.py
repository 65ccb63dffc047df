"""Chaos Mesh Schedule: cron spawning, historyLimit, concurrencyPolicy, pause, status."""

from __future__ import annotations

import re

import pytest

from sregym.twin import Twin
from sregym.twin.chaos.schedule import unmet_run
from support.chaos_web import WEB, chaos, ready_pods

NAME = re.compile(r"^[a-z-]+-[bcdfghjklmnpqrstvwxz2456789]{5}$")


@pytest.fixture(scope="module")
def twin() -> Twin:
    twin = Twin(seed=7)
    twin.apply(WEB.replace("replicas: 4", "replicas: 2"))
    assert twin.settle(60, until=lambda: len(ready_pods(twin)) == 2)
    return twin


def _delay(pod: str, duration: str | None) -> dict:
    spec = {"action": "delay", "mode": "all", "selector": {"pods": {"default": [pod]}}, "delay": {"latency": "10ms"}}
    if duration:
        spec["duration"] = duration
    return spec


def _children(twin: Twin, schedule: str) -> list[dict]:
    return [o for o in twin.list("networkchaos", "default")
            if (o["metadata"].get("labels") or {}).get("managed-by") == schedule]


def _events(twin: Twin, name: str) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in twin.list("events", "default")
            if e["involvedObject"]["name"] == name]


def test_cron_spawns_children_and_keeps_history_limit(twin: Twin) -> None:
    pod = ready_pods(twin)[0]["metadata"]["name"]
    twin.create(chaos("Schedule", "every-minute", {
        "schedule": "* * * * *", "type": "NetworkChaos", "historyLimit": 2, "concurrencyPolicy": "Allow",
        "networkChaos": _delay(pod, "20s")}, namespace="default"))
    twin.advance(200)
    kids = _children(twin, "every-minute")
    assert len(kids) == 2 and all(NAME.match(k["metadata"]["name"]) for k in kids)
    schedule = twin.get("Schedule", "default", "every-minute")
    assert all(k["metadata"]["ownerReferences"][0] == {
        "apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule", "name": "every-minute",
        "uid": schedule["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True} for k in kids)
    assert kids[0]["spec"]["delay"] == {"latency": "10ms"}
    assert schedule["status"]["time"].endswith("Z")
    assert sorted(a["name"] for a in schedule["status"]["active"]) == sorted(k["metadata"]["name"] for k in kids)
    spawned = [m for t, r, m in _events(twin, "every-minute") if (t, r) == ("Normal", "Spawned")]
    assert len(spawned) >= 3 and spawned[0].startswith("Create new object: every-minute-")
    # The spawned experiments really ran.
    assert all(k["status"]["experiment"]["containerRecords"][0]["injectedCount"] == 1 for k in kids)


def test_forbid_waits_for_the_running_child_and_pause_stops_spawning(twin: Twin) -> None:
    pod = ready_pods(twin)[1]["metadata"]["name"]
    twin.create(chaos("Schedule", "forbid", {
        "schedule": "@every 30s", "type": "NetworkChaos", "historyLimit": 5,
        "networkChaos": _delay(pod, None)}, namespace="default"))
    twin.advance(100)
    kids = _children(twin, "forbid")
    assert len(kids) == 1
    name = kids[0]["metadata"]["name"]
    assert ("Warning", "Forbid", f"Forbid spawning new job because: {name} is still running") in \
        _events(twin, "forbid")
    twin.patch("Schedule", "default", "forbid",
               {"metadata": {"annotations": {"experiment.chaos-mesh.org/pause": "true"}}})
    twin.advance(5)
    child = twin.get("NetworkChaos", "default", name)
    assert child["metadata"]["annotations"]["experiment.chaos-mesh.org/pause"] == "true"
    assert child["status"]["experiment"]["desiredPhase"] == "Stop"
    twin.advance(60)
    assert len(_children(twin, "forbid")) == 1


def test_starting_deadline_misses_late_runs() -> None:
    assert unmet_run("*/5 * * * *", 0.0, 601.0) == (600.0, 900.0)
    assert unmet_run("@every 1m", 0.0, 59.0) == (None, 60.0)
    assert unmet_run("@every 1m", 0.0, 130.0) == (120.0, 180.0)
