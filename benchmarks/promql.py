"""PromQL latency on dashboard-style queries over one simulated hour of ~2k series.

Synthetic span-metric-like data (the lead wires Hotel Reservation telemetry later): 20 services
x 10 operations x (calls counter + 8 latency buckets) scraped every 15 s for an hour. Prints
p50/p95 wall latency per query; the goal is p50 < 20 ms for instant queries.

    python benchmarks/promql.py
"""

from __future__ import annotations

import statistics
import time

from sregym.twin.telemetry.promql import Engine
from sregym.twin.telemetry.tsdb import TSDB

SCRAPE_MS = 15_000
HOUR_MS = 3_600_000
BOUNDS = ["5", "10", "25", "50", "100", "250", "1000", "+Inf"]

QUERIES = [
    "sum by (service_name) (rate(traces_span_metrics_calls_total[5m]))",
    'sum by (service_name) (rate(traces_span_metrics_calls_total{status_code="STATUS_CODE_ERROR"}[5m]))'
    " / sum by (service_name) (rate(traces_span_metrics_calls_total[5m]))",
    "histogram_quantile(0.95, sum by (service_name, le) "
    "(rate(traces_span_metrics_duration_milliseconds_bucket[5m])))",
    'histogram_quantile(0.99, sum by (le) (rate(traces_span_metrics_duration_milliseconds_bucket'
    '{service_name="svc-3"}[5m])))',
    "topk(5, sum by (service_name, span_name) (rate(traces_span_metrics_calls_total[5m])))",
]


def build() -> TSDB:
    db = TSDB()
    series = []
    for s in range(20):
        for o in range(10):
            base = {"service_name": f"svc-{s}", "span_name": f"op-{o}"}
            for status in ("STATUS_CODE_UNSET", "STATUS_CODE_ERROR"):
                series.append(({"__name__": "traces_span_metrics_calls_total", **base,
                                "status_code": status}, 1.0 + s % 7 + (o % 3), None))
            for i, le in enumerate(BOUNDS):
                series.append(({"__name__": "traces_span_metrics_duration_milliseconds_bucket", **base,
                                "le": le}, 1.0 + i, None))
    for t in range(0, HOUR_MS + 1, SCRAPE_MS):
        step = t // SCRAPE_MS
        for labels, per_scrape, _ in series:
            db.append(labels, t, per_scrape * step)
    return db


def measure(fn, repeat: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> None:
    db = build()
    engine = Engine(db)
    print(f"{len(db)} series, one hour at 15 s")
    for q in QUERIES:
        p50, p95 = measure(lambda q=q: engine.instant(q, HOUR_MS), 30)
        r50, r95 = measure(lambda q=q: engine.range(q, HOUR_MS - 3_600_000, HOUR_MS, 60_000), 5)
        print(f"instant p50 {p50:7.2f} ms p95 {p95:7.2f} ms | range 1h/1m p50 {r50:8.1f} ms p95 {r95:8.1f} ms"
              f" | {q[:70]}")


if __name__ == "__main__":
    main()
