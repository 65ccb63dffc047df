"""The disk-signal problems: a slow disk under mongodb-geo, a failing journal fsync of mongodb-reservation.

One test per problem: deploy, inject, see the symptom through the agent's interfaces (PromQL,
logs, pod status) and the must_fix check fail, apply the gold solution, see the check pass.
`sregym check` of both (durability included) is run by the registry-wide suites, not here.
"""

from __future__ import annotations

from sregym.cluster.twin import TwinCluster
from sregym.oracles.checks_disk_and_metastable import service_calls_succeed
from sregym.oracles.checks_disk_signals import service_latency_within
from support.problem_runs import deployed

NS = "hotel-reservation"
SLOW = "hotel-reservation/slow-disk-geo-v1"
FSYNC = "hotel-reservation/kernel-fsync-eio-reservation-db-v1"


def _pod(cluster: TwinCluster, service: str) -> dict:
    return next(p for p in cluster.list("Pod", NS, label_selector=f"io.kompose.service={service}")
                if not p["metadata"].get("deletionTimestamp"))


def test_slow_disk_under_geo_shows_in_disk_metrics_and_slow_queries_until_moved() -> None:
    cluster, run = deployed(SLOW)
    ctx = run.check_context()
    assert service_latency_within(ctx, service="geo", max_p95_ms=100.0)[0]
    run.inject()
    run.advance(45)
    ok, detail = service_latency_within(ctx, service="geo", max_p95_ms=100.0)
    assert not ok and "p95 latency" in detail
    assert cluster.entry_stats(30).p95_ms > ctx.slo_p95_ms
    db = _pod(cluster, "mongodb-geo")
    sel = f'device="sdb",node="{db["spec"]["nodeName"]}"'
    busy = cluster.promql(f"rate(node_disk_io_time_seconds_total{{{sel}}}[30s])")
    assert float(busy[0]["value"][1]) > 0.9
    assert '"msg":"Slow query"' in cluster.logs(NS, db["metadata"]["name"])
    run.apply_gold()
    run.advance(75)
    assert service_latency_within(ctx, service="geo", max_p95_ms=100.0, window="30s")[0]


def test_kernel_fsync_errors_crash_mongodb_reservation_until_the_pod_is_recreated() -> None:
    cluster, run = deployed(FSYNC)
    ctx = run.check_context()
    run.inject()
    assert cluster.get("KernelChaos", "chaos-mesh", "kernel-io") is not None
    run.advance(40)
    db = _pod(cluster, "mongodb-reservation")
    status = db["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 1 and status["lastState"]["terminated"]["exitCode"] == 134
    assert "fdatasync: Input/output error" in cluster.twin.logs(NS, db["metadata"]["name"], previous=True)
    run.apply_gold()
    run.advance(60)
    assert _pod(cluster, "mongodb-reservation")["metadata"]["uid"] != db["metadata"]["uid"]
    assert service_calls_succeed(ctx, service="reservation", window="30s")[0]
