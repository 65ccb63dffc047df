"""The GC-driven and connection-pool metastable families on Hotel Reservation: the configuration
alone is healthy, the trigger tips it, the bad state outlasts the trigger at the same load, only
the gold change ends it, and a restart alone fails the replayed trigger."""

from __future__ import annotations

import pytest

from sregym.faults.base import make_fault
from sregym.twin.dataplane.gc import GoGC
from support.problem_runs import deployed

GC = "hotel-reservation/metastable-gc-capacity-v1"
POOL = "hotel-reservation/metastable-connection-pool-v1"
CALLEE = {GC: "profile", POOL: "geo"}


def _proc(cluster, service: str):
    engine = cluster.twin.services.dataplane
    return next(p for k, p in sorted(engine.procs.items()) if k[2] == f"hotel-reserv-{service}")


def _geo_logs(cluster) -> str:
    pod = _proc(cluster, "geo").inst.pod
    return cluster.logs("hotel-reservation", pod, container="hotel-reserv-geo")


@pytest.mark.parametrize("problem_id", [GC, POOL])
def test_healthy_before_the_trigger_stuck_after_it_until_the_gold_change(problem_id: str) -> None:
    cluster, run = deployed(problem_id)
    policy, trigger = run.problem.faults
    make_fault(policy.fault, policy.params).inject(cluster)
    run.advance(60)
    healthy = cluster.entry_stats(30)
    assert healthy.success_ratio > 0.99 and healthy.p95_ms < 100
    make_fault(trigger.fault, trigger.params).inject(cluster)  # the trigger is over when this returns
    run.advance(120)
    stuck = cluster.entry_stats(30)
    assert stuck.success_ratio < 0.7
    assert abs(stuck.requests - healthy.requests) < 0.2 * healthy.requests  # the same offered load
    run.apply_gold()
    run.advance(60)
    assert cluster.entry_stats(30).success_ratio > 0.99


def test_the_gc_state_shows_in_profile_s_go_metrics() -> None:
    cluster, run = deployed(GC)
    run.inject()
    run.advance(60)
    proc = _proc(cluster, "profile")
    assert proc.gc_config == GoGC(memlimit_mib=12.0)
    assert proc.gc.gc_fraction == pytest.approx(0.5)
    heap = cluster.promql(f'go_memstats_heap_alloc_bytes{{pod="{proc.inst.pod}"}}')
    limit = cluster.promql(f'go_gc_gomemlimit_bytes{{pod="{proc.inst.pod}"}}')
    assert float(heap[0]["value"][1]) >= float(limit[0]["value"][1])


def test_geo_logs_the_go_driver_s_pool_errors_while_mongodb_geo_is_fast() -> None:
    cluster, run = deployed(POOL)
    run.inject()
    run.advance(60)
    logs = _geo_logs(cluster)
    assert "timed out while checking out a connection from connection pool: context deadline exceeded; " \
           "maxPoolSize: 4" in logs
    pool = _proc(cluster, "geo").pools["mongo"]
    assert pool.size == 4 and pool.last is not None and pool.last.late > 0.99


@pytest.mark.parametrize("problem_id", [GC, POOL])
def test_restarting_the_stuck_service_fails_the_replayed_trigger(problem_id: str) -> None:
    cluster, run = deployed(problem_id)
    run.inject()
    run.advance(30)
    cluster.patch("Deployment", "hotel-reservation", CALLEE[problem_id],
                  {"spec": {"template": {"metadata": {"annotations": {
                      "kubectl.kubernetes.io/restartedAt": "2024-06-03T00:00:00Z"}}}}})
    score = run.verify(window_s=180)
    failed = {c.name for c in score.checks if not c.passed}
    assert failed & {"replayed_burst_recovers", "replayed_chaos_recovers"}
