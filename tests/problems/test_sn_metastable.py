"""Social Network's metastable cache stampede: the undersized MongoDB is healthy while the post
cache is warm, a cache restart tips it into a state that outlives the restart at the same load,
the symptoms are the real ones (mongod's slow queries, post-storage's timeouts, a cache that stays
partly empty), restarts are no fix, and only capacity for a cold cache recovers."""

from __future__ import annotations

from pathlib import Path

import pytest

from sregym.faults.base import make_fault
from sregym.problems.registry import PROBLEMS
from sregym.twin.datastores import Memcached, bank_of
from support.kube import serve_twin
from support.problem_runs import deployed

PID = "social-network/metastable-post-cache-stampede-v1"
NS = "social-network"


def _pods(cluster, service: str) -> list[dict]:
    return [p for p in cluster.list("Pod", NS, label_selector=f"service={service}")
            if not p["metadata"].get("deletionTimestamp")]


def _cached_posts(cluster) -> float:
    (pod,) = _pods(cluster, "post-storage-memcached")
    store = bank_of(cluster.twin).instances[(NS, pod["metadata"]["name"], "post-storage-memcached")]
    assert isinstance(store, Memcached)
    return store.cache.items


def _restarts(cluster, service: str) -> int:
    return sum(int(cs.get("restartCount") or 0) for pod in _pods(cluster, service)
               for cs in (pod.get("status") or {}).get("containerStatuses") or [])


def test_healthy_with_a_warm_cache_collapsed_after_a_cache_restart_and_capacity_recovers() -> None:
    cluster, run = deployed(PID)
    resize, cache_restart = run.problem.faults
    make_fault(resize.fault, resize.params).inject(cluster)
    run.advance(120)
    healthy = cluster.entry_stats(60)
    assert healthy.success_ratio > 0.995 and healthy.p95_ms < 100  # the limit alone is fine
    warm = _cached_posts(cluster)
    make_fault(cache_restart.fault, cache_restart.params).inject(cluster)  # over when this returns
    run.advance(180)
    collapsed = cluster.entry_stats(60)
    assert collapsed.success_ratio < 0.5
    assert abs(collapsed.requests - healthy.requests) < 0.05 * healthy.requests  # same offered load
    assert _cached_posts(cluster) < 0.7 * warm  # the misses are never written back
    (cache_pod,) = _pods(cluster, "post-storage-memcached")
    assert cache_pod["status"]["phase"] == "Running" and _restarts(cluster, "post-storage-memcached") == 0
    (mongo_pod,) = _pods(cluster, "post-storage-mongodb")
    assert '"msg":"Slow query"' in cluster.logs(NS, mongo_pod["metadata"]["name"])
    (post_pod,) = _pods(cluster, "post-storage-service")
    post_log = cluster.logs(NS, post_pod["metadata"]["name"])
    assert "MongoDB find failed" in post_log
    run.apply_gold()
    run.advance(90)
    assert cluster.entry_stats(30).success_ratio > 0.995


@pytest.mark.parametrize("restarted", ["post-storage-mongodb", "post-storage-memcached", "post-storage-service"])
def test_a_restart_is_no_fix(restarted: str) -> None:
    cluster, run = deployed(PID)
    run.inject()
    run.advance(30)
    cluster.patch("Deployment", NS, restarted, {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": "2024-06-01T00:00:00Z"}}}}})
    score = run.verify()
    assert not score.passed
    assert "entry_slo" in {c.name for c in score.checks if not c.passed}


def test_gold_passes_with_the_replayed_cache_restart() -> None:
    cluster, run = deployed(PID)
    run.inject()
    run.advance(30)
    assert cluster.entry_stats(30).success_ratio < 0.5
    run.apply_gold()
    score = run.verify()
    assert score.passed, [(c.name, c.detail) for c in score.checks]
    assert any(c.name == "replayed_chaos_recovers" and c.passed for c in score.checks)


def test_what_kubectl_shows_and_the_fix_as_an_operator_types_it(tmp_path: Path) -> None:
    """Real kubectl: the cache pod is Running and never restarted, MongoDB sits at its CPU limit
    and logs slow queries; `kubectl set resources` on MongoDB ends the incident."""
    cluster, run = deployed(PID)
    run.inject()
    run.advance(60)
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        cache = harness.ok("get", "pods", "-n", NS, "-l", "service=post-storage-memcached", "--no-headers")
        assert "1/1" in cache and "Running" in cache and cache.split()[3] == "0"
        top = harness.ok("top", "pod", "-n", NS, "-l", "service=post-storage-mongodb", "--no-headers")
        assert top.split()[1] in ("10m", "11m")  # throttled at its limit
        assert '"msg":"Slow query"' in harness.ok("logs", "deploy/post-storage-mongodb", "-n", NS, "--tail=50")
        harness.ok("set", "resources", "deployment/post-storage-mongodb", "-n", NS,
                   "--limits=cpu=1", "--requests=cpu=100m")
    finally:
        harness.server.stop()
    run.advance(120)
    assert cluster.entry_stats(30).success_ratio > 0.995


def test_it_is_a_metastable_social_network_problem() -> None:
    problem = PROBLEMS.get(PID)
    assert problem.tags.layers == ("metastable",)
    assert "social-network" in problem.tags.suites
    assert problem.mitigation.durability[0].check == "replayed_chaos_recovers"
    assert problem.mitigation.durability[0].params["kind"] == "PodChaos"
