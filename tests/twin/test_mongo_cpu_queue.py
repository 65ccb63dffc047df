"""A MongoDB container with a CPU limit queues what its limit cannot serve: operations take
longer with load (slow queries in mongod's log), work queued beyond the limit is still done
however late, the container's CPU usage stops at the limit, and a restarted mongod starts with
an empty queue. Without a limit nothing changes."""

from __future__ import annotations

from typing import Any

from sregym.twin.datastores import MongoServer, datastore_for
from sregym.twin.datastores.cpu_queue import MAX_WAIT_S
from sregym.twin.node.runtime import runtime_of
from sregym.twin.twin import Twin


def _twin(cpu_limit: str | None) -> Twin:
    resources = {"limits": {"cpu": cpu_limit}, "requests": {"cpu": cpu_limit}} if cpu_limit else {}
    twin = Twin(seed=5)
    twin.apply([{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "posts-db", "namespace": "default"},
                 "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "posts-db"}},
                          "template": {"metadata": {"labels": {"app": "posts-db"}}, "spec": {"containers": [
                              {"name": "mongo", "image": "mongo:4.4.6", "resources": resources}]}}}}])
    twin.advance(20)
    return twin


def _pod(twin: Twin) -> dict[str, Any]:
    return next(p for p in twin.list("pods", "default") if not p["metadata"].get("deletionTimestamp"))


def _drive(twin: Twin, rate: float, seconds: int) -> float:
    """`rate` finds/s for `seconds` ticks; the duration of the last class of finds (ms)."""
    duration = 0.0
    for _ in range(seconds):
        store = datastore_for(twin, _pod(twin))
        assert isinstance(store, MongoServer)
        duration = store.request("find", db="post", collection="post", rate=rate).service_ms
        twin.advance(twin.clock.tick)
    return duration


def test_below_the_limit_finds_stay_fast_above_it_they_queue_and_log_slow_queries() -> None:
    twin = _twin("15m")  # ~50 finds/s of 0.3 ms
    assert _drive(twin, 20.0, 10) < 2.0
    pod = _pod(twin)["metadata"]["name"]
    assert '"Slow query"' not in twin.logs("default", pod)
    slow = [_drive(twin, 150.0, 1) for _ in range(8)]
    assert slow == sorted(slow) and slow[-1] > 1000.0  # the backlog grows every second
    assert '"msg":"Slow query"' in twin.logs("default", pod)
    cpu, _memory = runtime_of(twin).container_usage("default", pod, "mongo")
    assert 0.015 <= cpu < 0.018  # throttled at the limit (plus idle), not the 45m the finds ask for
    # Work is done however late: the queue is bounded only at MAX_WAIT_S of it.
    longest = _drive(twin, 150.0, 120)
    assert MAX_WAIT_S * 1000.0 * 0.99 < longest < MAX_WAIT_S * 1000.0 + 10.0


def test_the_queue_drains_when_load_falls_and_a_restarted_mongod_starts_empty() -> None:
    twin = _twin("15m")
    assert _drive(twin, 150.0, 20) > 1000.0
    assert _drive(twin, 0.0, 60) < 2.0  # 20 s of backlog served in well under a minute
    _drive(twin, 150.0, 20)
    twin.delete("pods", "default", _pod(twin)["metadata"]["name"])
    twin.advance(20)
    assert _drive(twin, 20.0, 3) < 2.0


def test_without_a_cpu_limit_the_service_time_does_not_depend_on_load() -> None:
    twin = _twin(None)
    assert _drive(twin, 20.0, 5) == _drive(twin, 2000.0, 20)


def test_other_stores_with_a_cpu_limit_still_report_their_load_as_usage() -> None:
    twin = Twin(seed=5)
    twin.apply([{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "cache", "namespace": "default"},
                 "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "cache"}},
                          "template": {"metadata": {"labels": {"app": "cache"}}, "spec": {"containers": [
                              {"name": "memcached", "image": "memcached:1.6.7",
                               "resources": {"limits": {"cpu": "100m"}}}]}}}}])
    twin.advance(20)
    pod = _pod(twin)
    store = datastore_for(twin, pod)
    assert store is not None and store.kind == "memcached"
    store.request("get", rate=2000.0)
    twin.advance(twin.clock.tick)
    cpu, _memory = runtime_of(twin).container_usage("default", pod["metadata"]["name"], "memcached")
    assert cpu > 0.1 * 2000.0 * 0.08 / 1000.0  # the gets' CPU, not nothing
