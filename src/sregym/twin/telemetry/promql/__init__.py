"""A PromQL engine with Prometheus 2.x semantics over the twin's TSDB.

Parsing is done by the `promql-parser` package; evaluation (selectors, lookback and staleness,
offset/@, subqueries, operators with vector matching, aggregations, functions) is ours and is
checked differentially against `promtool test rules` (tests/twin/telemetry/test_promql_diff.py).

    engine = Engine(tsdb, lookback_ms=300_000)
    engine.instant("sum by (job) (rate(http_requests_total[5m]))", t_ms)   # -> Result
    engine.range(query, start_ms, end_ms, step_ms)                          # -> Result (matrix)
"""

from __future__ import annotations

from sregym.twin.telemetry.promql.engine import Engine
from sregym.twin.telemetry.promql.errors import PromQLError
from sregym.twin.telemetry.promql.result import Result, Sample, SeriesPoints

__all__ = ["Engine", "PromQLError", "Result", "Sample", "SeriesPoints"]
