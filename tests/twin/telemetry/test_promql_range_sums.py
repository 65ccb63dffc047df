"""The one-pass `sum by (...) (rate(x[r]))` (promql/range_sums.py) answers exactly what the general
evaluator answers: queries of that shape and of its near misses, at many instants of a cluster
whose series churn (a deleted pod's staleness markers, counter resets from restarts), compared
bit for bit with the pass switched off; and the pass is really taken for the alert rules' shape."""

from __future__ import annotations

import struct

import pytest

from sregym.apps import deploy_app
from sregym.twin.telemetry.promql import range_sums
from sregym.twin.telemetry.promql.engine import Engine
from sregym.twin.telemetry.promql.errors import PromQLError
from sregym.twin.twin import Twin

QUERIES = (
    'sum by (service_name, le) (rate(traces_span_metrics_duration_milliseconds_bucket{span_kind="SPAN_KIND_SERVER"}[2m]))',
    'histogram_quantile(0.95, sum by (service_name, le) (rate(traces_span_metrics_duration_milliseconds_bucket[2m])))',
    'sum by (service_name) (rate(traces_span_metrics_calls_total{status_code="STATUS_CODE_ERROR"}[1m]))'
    ' / sum by (service_name) (rate(traces_span_metrics_calls_total[1m]))',
    "sum(increase(container_cpu_usage_seconds_total[5m]))",
    "sum by (pod, namespace) (rate(container_cpu_usage_seconds_total[30s]))",
    "sum by (namespace, nonexistent) (rate(container_cpu_usage_seconds_total[45s] offset 1m))",
    "sum by (pod) (increase(kube_pod_container_status_restarts_total[10m]))",
    "sum by (le) ((rate(traces_span_metrics_duration_milliseconds_bucket[90s])))",
    "sum by (__name__) (rate(container_cpu_usage_seconds_total[1m]))",  # general path
    "sum without (pod) (rate(container_cpu_usage_seconds_total[1m]))",  # general path
    'sum by (job) (rate({__name__=~"up|scrape_samples_scraped"}[1m]))',  # general path: an error
)


def _answer(tsdb: object, query: str, t_ms: int) -> list[tuple[object, ...]]:
    """The result's labels and value bits, or the error the query ends in."""
    try:
        result = Engine(tsdb).instant(query, t_ms)  # type: ignore[arg-type]
    except PromQLError as exc:
        return [("error", str(exc))]
    value = result.value
    if not isinstance(value, list):
        return [("scalar", struct.pack("<d", float(value.value)))]
    return [(tuple(sorted(s.labels.items())), struct.pack("<d", s.value)) for s in value]


@pytest.fixture(scope="module")
def churned() -> Twin:
    twin = Twin(seed=8)
    deploy_app(twin, "hotel-reservation")
    twin.advance(150)
    pod = next(p["metadata"]["name"] for p in twin.list("pods", "hotel-reservation")
               if p["metadata"]["name"].startswith("search"))
    twin.delete("pods", "hotel-reservation", pod, grace_period=0)
    twin.patch("deployments", "hotel-reservation", "geo", {"spec": {"replicas": 0}})
    twin.advance(240)
    return twin


def test_one_pass_sums_equal_the_general_evaluator_bit_for_bit(churned: Twin, monkeypatch: pytest.MonkeyPatch) -> None:
    tsdb = churned.services.tsdb
    end_ms = round(churned.clock.now * 1000)
    instants = range(end_ms - 330_000, end_ms + 1, 7_000)
    fused_calls = 0
    original = range_sums.sum_by_of_range

    def counted(*args: object) -> object:
        nonlocal fused_calls
        fused_calls += 1
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr("sregym.twin.telemetry.promql.engine.sum_by_of_range", counted)
    compared = 0
    for query in QUERIES:
        for t_ms in instants:
            fast = _answer(tsdb, query, t_ms)
            monkeypatch.setattr(range_sums, "ENABLED", False)
            general = _answer(tsdb, query, t_ms)
            monkeypatch.setattr(range_sums, "ENABLED", True)
            assert fast == general, (query, t_ms)
            compared += bool(fast) and fast[0][0] != "error"
    assert compared > len(QUERIES) * len(instants) // 2  # most answers are not empty
    assert fused_calls >= 8 * len(instants)  # the eight fused shapes above (the division: twice)
