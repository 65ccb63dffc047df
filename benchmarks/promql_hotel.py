"""PromQL latency on typical dashboard queries over one simulated hour of Hotel Reservation.

    python benchmarks/promql_hotel.py [--hours 1] [--repeat 30] [--step 15]

Runs the stock app (default load, ~100 req/s) for `--hours` of simulated time with the real
scrapers (kube-state-metrics, cAdvisor, node-exporter, span metrics, app metrics every 15 s),
then times each query three ways and prints p50/p95 wall milliseconds:

- `instant`: `Engine.instant` over the full TSDB at the twin's "now" (what the rule evaluator and
  an admin query do);
- `api`: `GET /api/v1/query` with the agent's token through the Prometheus ASGI app (the agent's
  filtered view, parameter parsing and the JSON response included);
- `range`: `Engine.range` over the whole hour at `--step` seconds (a Grafana panel over 1 h).

The goal (issue 5) is p50 < 20 ms for instant queries. Each query's result size is printed too,
so an empty (wrongly labelled) query does not pass as a fast one.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

NS = "hotel-reservation"
SERVER = 'span_kind="SPAN_KIND_SERVER"'
QUERIES: tuple[tuple[str, str], ...] = (
    ("calls by service",
     f"sum by (service_name) (rate(traces_span_metrics_calls_total{{{SERVER}}}[5m]))"),
    ("error ratio by service",
     f'sum by (service_name) (rate(traces_span_metrics_calls_total{{{SERVER},status_code="STATUS_CODE_ERROR"}}[5m]))'
     f" / sum by (service_name) (rate(traces_span_metrics_calls_total{{{SERVER}}}[5m]))"),
    ("p95 latency by service",
     "histogram_quantile(0.95, sum by (le, service_name) "
     "(rate(traces_span_metrics_duration_milliseconds_bucket[5m])))"),
    ("p99 latency of frontend ops",
     "histogram_quantile(0.99, sum by (le, span_name) (rate(traces_span_metrics_duration_milliseconds_bucket"
     f'{{service_name="frontend",{SERVER}}}[5m])))'),
    ("cpu by pod",
     f'sum by (pod) (rate(container_cpu_usage_seconds_total{{namespace="{NS}",container!=""}}[5m]))'),
    ("memory by pod",
     f'sum by (pod) (container_memory_working_set_bytes{{namespace="{NS}",container!=""}})'),
    ("cpu throttling ratio",
     f'sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{{namespace="{NS}"}}[5m]))'
     f' / sum by (pod) (rate(container_cpu_cfs_periods_total{{namespace="{NS}"}}[5m]))'),
    ("restarts (1h)",
     f'sum by (pod) (increase(kube_pod_container_status_restarts_total{{namespace="{NS}"}}[1h]))'),
    ("not ready pods",
     f'sum by (pod) (kube_pod_status_ready{{namespace="{NS}",condition="false"}}) > 0'),
    ("top 5 busiest operations",
     "topk(5, sum by (service_name, span_name) (rate(traces_span_metrics_calls_total[5m])))"),
)


def percentiles(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[max(0, round(len(samples) * 0.95) - 1)]


def build(hours: float) -> tuple[Any, float]:
    from sregym.apps import deploy_app
    from sregym.twin.twin import Twin

    twin = Twin(seed=1)
    deploy_app(twin, "hotel-reservation")
    start = time.perf_counter()
    twin.advance(hours * 3600)
    return twin, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--step", type=float, default=15.0, help="range query step in seconds")
    args = parser.parse_args()

    from starlette.testclient import TestClient

    from sregym.twin.api.kubeconfig import make_tokens, token_for
    from sregym.twin.api.prometheus import LOOKBACK_MS, create_prometheus_app
    from sregym.twin.telemetry.promql import Engine

    twin, build_s = build(args.hours)
    tsdb = twin.services.tsdb
    now_ms = round(twin.clock.now * 1000)
    samples = sum(len(series.timestamps) for series in tsdb.all_series())
    stats = twin.services.dataplane.entry_stats(300)
    print(f"Hotel Reservation, {args.hours:g} h simulated in {build_s:.1f} s wall; {len(tsdb)} series, "
          f"{samples} samples; entry {stats.rps:.0f} req/s, success {stats.success_ratio:.4f}")

    engine = Engine(tsdb, lookback_ms=LOOKBACK_MS)
    tokens = make_tokens(1)
    client = TestClient(create_prometheus_app(twin, tokens=tokens))
    headers = {"Authorization": f"Bearer {token_for(tokens, 'agent')}"}
    start_ms = now_ms - round(args.hours * 3_600_000)
    step_ms = round(args.step * 1000)

    def api(query: str) -> None:
        body = client.get("/api/v1/query", params={"query": query}, headers=headers).json()
        assert body["status"] == "success", body

    print(f"{'query':<28} {'series':>6}  {'instant p50':>11} {'p95':>7}  {'api p50':>8} {'p95':>7}  "
          f"{'range p50':>9} {'p95':>7}   (ms; range {args.hours:g} h at {args.step:g} s)")
    instant_p50s = []
    for title, query in QUERIES:
        size = len(engine.instant(query, now_ms).to_api()["result"])
        i50, i95 = percentiles(lambda q=query: engine.instant(q, now_ms), args.repeat)
        a50, a95 = percentiles(lambda q=query: api(q), args.repeat)
        r50, r95 = percentiles(lambda q=query: engine.range(q, start_ms, now_ms, step_ms), max(3, args.repeat // 6))
        instant_p50s.append(i50)
        print(f"{title:<28} {size:>6}  {i50:>11.2f} {i95:>7.2f}  {a50:>8.2f} {a95:>7.2f}  {r50:>9.1f} {r95:>7.1f}")
    worst = max(instant_p50s)
    print(f"instant p50: median over queries {statistics.median(instant_p50s):.2f} ms, worst {worst:.2f} ms "
          f"-> goal p50 < 20 ms {'met' if worst < 20 else 'NOT met'}")


if __name__ == "__main__":
    main()
