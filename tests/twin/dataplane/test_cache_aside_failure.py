"""Cache-aside with a failing database: a handler returns at its first failed required call, so
a miss whose read failed sets nothing and the cache cannot refill from it.

Hotel Reservation's rate sets memcached items without an expiration and `-m 128` holds its whole
keyspace, so a revoked role on rate-db hides behind a warm cache; once the cache is cold (a
memcached restart) every miss fails, and keeps failing, until the role is granted back."""

from __future__ import annotations

from typing import Any

from sregym.apps import deploy_app
from sregym.cluster.twin import TwinCluster
from sregym.faults.base import make_fault
from sregym.twin.dataplane.synthetic import synthetic_app
from sregym.twin.datastores import datastore_for
from sregym.twin.twin import Twin

NS = "hotel-reservation"
GET_RATES = "/rate.Rate/GetRates"


def _proc(twin: Twin, service: str) -> Any:
    return next(p for p in twin.services.dataplane.procs.values() if p.inst.spec.trace_name == service)


def _memcached(cluster: TwinCluster) -> Any:
    pods = [p for p in cluster.list("Pod", NS, label_selector="io.kompose.service=memcached-rate")
            if not p["metadata"].get("deletionTimestamp")]
    return datastore_for(cluster.twin, pods[0])


def test_revoked_role_behind_a_cold_cache_keeps_failing_until_granted_back() -> None:
    cluster = TwinCluster.new(7)
    twin = cluster.twin
    deploy_app(twin, "hotel-reservation")
    twin.advance(150)
    revoke = make_fault("mongo_revoke_role", {"namespace": NS, "deployment": "mongodb-rate", "db": "rate-db"})
    state = revoke.inject(cluster)
    twin.advance(60)
    # warm cache: only the few keys never cached miss, and those fail
    assert _proc(twin, "rate").results[GET_RATES].success > 0.95
    pod = cluster.list("Pod", NS, label_selector="io.kompose.service=memcached-rate")[0]
    cluster.delete("Pod", NS, pod["metadata"]["name"], grace_period=0)
    for _ in range(4):  # two minutes: the cold cache never refills from failed reads
        twin.advance(30)
        assert _proc(twin, "rate").results[GET_RATES].success < 0.05
        assert _memcached(cluster).stats()["curr_items"] == 0
    assert twin.services.dataplane.entry_stats(30).success_ratio < 0.7
    rate_pod = cluster.list("Pod", NS, label_selector="io.kompose.service=rate")[0]["metadata"]["name"]
    assert "not authorized on rate-db" in cluster.logs(NS, rate_pod)
    revoke.recover(cluster, state)
    twin.advance(90)  # reads succeed again and their sets warm the cache
    assert _proc(twin, "rate").results[GET_RATES].success > 0.999
    assert _memcached(cluster).stats()["curr_items"] > 100


def test_a_failed_required_call_ends_the_handler() -> None:
    """gateway calls svc-1-0 then svc-1-1; while the first refuses, the second is never called."""
    twin = Twin(seed=31)
    synthetic_app("seq", layers=(1, 2), rps=50.0).deploy(twin)
    twin.advance(60)
    dp = twin.services.dataplane
    assert sum(_proc(twin, "svc-1-1").arrivals.values()) > 45.0
    twin.patch("Deployment", "seq", "svc-1-0", {"spec": {"replicas": 0}})
    twin.advance(40)
    assert dp.entry_stats(10).success_ratio < 0.01
    assert sum(_proc(twin, "svc-1-1").arrivals.values()) < 0.5
    twin.patch("Deployment", "seq", "svc-1-0", {"spec": {"replicas": 1}})
    twin.advance(40)
    assert sum(_proc(twin, "svc-1-1").arrivals.values()) > 45.0
