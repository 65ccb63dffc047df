"""Noise from the first minute: every profile but `none` opens with unrelated warnings, a
container restart and error lines, the first before any fault; never on a protected workload;
the same seed gives the same opening."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.cluster.twin import TwinCluster
from sregym.noise.schedule import CHATTER, OPENING, OPENING_S, NoiseScheduler

pytestmark = pytest.mark.xdist_group("noise-opening")

NS = "default"
WORKERS = ("api", "cache", "db", "worker")
PROTECTED = frozenset({"db"})


def _deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": name, "image": "busybox:1.36",
                                                           "command": ["sh", "-c", "sleep infinity"]}]}}}}


@pytest.fixture(scope="module")
def opened() -> tuple[TwinCluster, NoiseScheduler, dict[str, str]]:
    """Four workloads, one protected; the `high` opening applied over its first minute."""
    cluster = TwinCluster.new(7)
    for name in WORKERS:
        cluster.apply(_deployment(name))
    cluster.advance(30)
    before = {p["metadata"]["name"]: p["metadata"]["labels"]["app"] for p in cluster.list("Pod", NS)}
    noise = NoiseScheduler(cluster, profile="high", seed=7, namespace=NS, protected=PROTECTED)
    first = noise.tick()
    assert [d.kind for d in first] == [OPENING["high"][0]]  # at once, before anything else happens
    for _ in range(int(OPENING_S) // 5 + 6):
        cluster.advance(5)
        noise.tick()
    return cluster, noise, before


def test_the_opening_lands_in_the_first_minute_on_unprotected_workloads(opened: Any) -> None:
    _, noise, _ = opened
    opening = [d for d in noise.applied if d.at_s <= OPENING_S]
    assert [d.kind for d in opening] == list(OPENING["high"])
    assert not {d.target for d in noise.applied} & PROTECTED


def test_first_reads_show_warnings_restarts_and_error_lines(opened: Any) -> None:
    cluster, _, before = opened
    warnings = [e for e in cluster.list("Event", NS) if e.get("type") == "Warning"]
    assert warnings
    pods = cluster.list("Pod", NS)
    restarts = {p["metadata"]["labels"]["app"]: sum(s.get("restartCount", 0)
                                                     for s in p["status"].get("containerStatuses") or [])
                for p in pods}
    assert any(restarts.values()), restarts
    chatter = [p for p in pods if set(cluster.twin.logs(NS, p["metadata"]["name"]).splitlines()) & set(CHATTER)]
    assert chatter
    # The protected workload is untouched: same pod, no restart, no warning, no chatter.
    db_pods = [p for p in pods if p["metadata"]["labels"]["app"] == "db"]
    assert [p["metadata"]["name"] for p in db_pods] == [n for n, app in before.items() if app == "db"]
    assert restarts["db"] == 0
    assert not [e for e in warnings if e["involvedObject"]["name"] in {p["metadata"]["name"] for p in db_pods}]
    assert all(p not in chatter for p in db_pods)


@pytest.mark.parametrize("profile", ["low", "high"])
def test_same_seed_same_opening_and_none_stays_quiet(opened: Any, profile: str) -> None:
    cluster, _, _ = opened
    plans = [NoiseScheduler(cluster, profile=profile, seed=11, namespace=NS, protected=PROTECTED).plan()
             for _ in range(2)]
    assert plans[0] == plans[1]
    assert plans[0][0].at_s == 0 and [d.kind for d in plans[0][:1]] == [OPENING[profile][0]]
    assert sum(d.at_s <= OPENING_S for d in plans[0]) >= len(OPENING[profile])
    assert NoiseScheduler(cluster, profile="none", seed=11, namespace=NS).plan() == []


def test_pod_replacing_noise_restarts_a_container_once_admission_changed() -> None:
    """An incident's LimitRange would reshape any pod noise makes the ReplicaSet re-create: once
    what admits pods changed since noise started, a pod kill or rollout restarts a container."""
    from sregym.noise.schedule import CHAOS_NAMESPACE, Disturbance

    cluster = TwinCluster.new(3)
    for name in ("api", "cache"):
        cluster.apply(_deployment(name))
    cluster.advance(20)
    noise = NoiseScheduler(cluster, profile="high", seed=3, namespace=NS)
    assert noise._apply(Disturbance(0, "pod-kill", "api", 1))  # before: a real pod kill
    cluster.apply({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits", "namespace": NS},
                   "spec": {"limits": [{"type": "Container", "default": {"memory": "8Mi"}}]}})
    assert noise._apply(Disturbance(0, "pod-kill", "cache", 2))
    assert noise._apply(Disturbance(0, "rollout", "cache", 3))
    actions = {o["metadata"]["name"]: o["spec"]["action"] for o in cluster.list("PodChaos", CHAOS_NAMESPACE)}
    assert actions == {"pod-kill-api-1": "pod-kill", "container-kill-cache-2": "container-kill",
                       "container-kill-cache-3": "container-kill"}
    restarted = cluster.get("Deployment", NS, "cache")["spec"]["template"]["metadata"].get("annotations") or {}
    assert "kubectl.kubernetes.io/restartedAt" not in restarted
