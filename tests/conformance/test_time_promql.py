"""PromQL on the client's clock: what a query computes from "now" agrees with the machine's now.

A real Prometheus evaluates `time()`, `timestamp()`, `hour()` and `@ <unix>` on the wall clock,
and kube-state-metrics/node-exporter/cAdvisor store wall-clock instants as sample values
(`kube_pod_created`, `node_boot_time_seconds`, ...). The served twin presents its simulated time
on the wall clock (`sregym/twin/api/wall_time.py`), so all of these must come out on that clock too,
while differences (`time() - kube_pod_created`) stay what they are in-process.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from typing import Any

import pytest

from sregym.twin.telemetry.promql import Engine
from support.kube import KubeHarness

NS = "hotel-reservation"


def _query(cluster: KubeHarness, query: str, **params: str) -> Any:
    qs = urllib.parse.urlencode({"query": query, **params})
    with urllib.request.urlopen(cluster.observability["prometheus"] + "/api/v1/query?" + qs, timeout=60) as resp:
        doc = json.load(resp)
    assert doc["status"] == "success", doc
    return doc["data"]


def _values(data: Any) -> list[float]:
    if data["resultType"] == "scalar":
        return [float(data["result"][1])]
    return [float(s["value"][1]) for s in data["result"]]


def _pod(cluster: KubeHarness) -> str:
    names = cluster.ok("get", "pods", "-n", NS, "-o", "name").split()
    return next(n.split("/", 1)[1] for n in names if n.split("/", 1)[1].startswith("frontend"))


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@pytest.mark.parametrize("query", ["time()", "scalar(vector(time()))", "max(timestamp(up))",
                                   "max(timestamp(vector(1)))", "max(node_time_seconds)"])
def test_now_in_a_query_is_the_wall_now(cluster: KubeHarness, query: str) -> None:
    before = time.time()
    (value,) = _values(_query(cluster, query))
    # timestamp(up) is the last scrape (at most one scrape interval old); the rest are "now".
    assert before - 60 <= value <= time.time() + 1, (query, value, before)


def test_date_functions_use_the_wall_clock(cluster: KubeHarness) -> None:
    hours = {datetime.now(UTC).hour}
    (value,) = _values(_query(cluster, "hour()"))
    hours.add(datetime.now(UTC).hour)
    assert int(value) in hours
    (year,) = _values(_query(cluster, "year()"))
    assert int(year) == datetime.now(UTC).year


def test_at_modifier_reads_a_wall_unix_time(cluster: KubeHarness) -> None:
    at = int(time.time()) - 30
    data = _query(cluster, f"up @ {at}")
    assert data["result"], data
    (stamp,) = _values(_query(cluster, f"max(timestamp(up @ {at}))"))
    assert at - 60 <= stamp <= at, (stamp, at)
    # An instant long before the cluster existed selects nothing, as on a real Prometheus.
    assert _query(cluster, f"up @ {at - 30 * 86400}")["result"] == []


def test_query_range_time_equals_the_step_times(cluster: KubeHarness) -> None:
    end = int(time.time())
    qs = urllib.parse.urlencode({"query": "time()", "start": end - 300, "end": end, "step": "60"})
    with urllib.request.urlopen(cluster.observability["prometheus"] + "/api/v1/query_range?" + qs,
                                timeout=60) as resp:
        doc = json.load(resp)
    (series,) = doc["data"]["result"]
    assert [(t, float(v)) for t, v in series["values"]] == [(t, float(t)) for t in range(end - 300, end + 1, 60)]


@pytest.mark.parametrize("metric, field", [("kube_pod_created", "{.metadata.creationTimestamp}"),
                                           ("kube_pod_start_time", "{.status.startTime}")])
def test_pod_instants_match_kubectl(cluster: KubeHarness, metric: str, field: str) -> None:
    pod = _pod(cluster)
    shown = _stamp(cluster.ok("get", "pod", pod, "-n", NS, "-o", f"jsonpath={field}"))
    (value,) = _values(_query(cluster, f'{metric}{{namespace="{NS}",pod="{pod}"}}'))
    # Whole seconds on both sides; the wall anchor may re-align by a second between the calls.
    assert abs(value - shown) <= 2, (metric, value, shown)


@pytest.mark.parametrize("query", ['time() - kube_pod_created{namespace="hotel-reservation"}',
                                   "time() - node_boot_time_seconds",
                                   'kube_pod_start_time{namespace="hotel-reservation"} - kube_pod_created',
                                   "node_time_seconds - time()"])
def test_differences_are_unchanged(cluster: KubeHarness, query: str) -> None:
    served = sorted(_values(_query(cluster, query)))

    def in_process() -> list[float]:
        engine = Engine(cluster.twin.services.tsdb, lookback_ms=300_000)
        result = engine.instant(query, round(cluster.twin.clock.now * 1000))
        return sorted(float(s.value) for s in result.value)

    expected = cluster.call(in_process)
    assert served and len(served) == len(expected)
    assert served == pytest.approx(expected, abs=1e-6)
