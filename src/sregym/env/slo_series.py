"""The entry SLO through an attempt, as a short series for the result line.

A verdict says whether the fix held; a person reading an attempt also wants to see the incident:
the healthy baseline, the drop after the injection, where the agent acted, and the recovery
through the verification window. The twin keeps its entry-point history (an hour), so the series
is read once, after the attempt (the agent has gone, nothing it can query changes), in buckets
whose width grows with the attempt so the line stays at most `MAX_POINTS` points long. The same
seed and calls give the same history, so the same series.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sregym.env.models import EntrySloSeries

MAX_POINTS = 60
BUCKET_STEPS_S = (5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0)
HISTORY_S = 3600.0  # what the twin's data plane keeps (twin.dataplane.engine.ENTRY_HISTORY_S)


def bucket_width(span_s: float) -> float:
    """The narrowest round width that covers `span_s` in at most MAX_POINTS buckets."""
    for step in BUCKET_STEPS_S:
        if span_s / step <= MAX_POINTS:
            return step
    return math.ceil(span_s / MAX_POINTS)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, digits)


def record_series(cluster: Any, *, inject_at: float, baseline_s: float, agent_start: float,
                  actions: Sequence[float], diagnosis: float | None, done: float | None,
                  window_s: float | None, slo_success_ratio: float, slo_p95_ms: float) -> EntrySloSeries | None:
    """The series from `inject_at - baseline_s` to the cluster's now (times relative to
    `inject_at`); None for a cluster that keeps no entry history (a real cluster) and for an
    app whose entry saw no traffic at all."""
    between = getattr(cluster, "entry_stats_between", None)
    if between is None:
        return None
    end = float(cluster.now()) - inject_at
    start = max(-float(baseline_s), end - HISTORY_S)
    width = bucket_width(max(end - start, 1.0))
    first = math.floor(start / width) * width  # buckets aligned on the injection
    points = []
    t = first
    while t < end - 1e-9:
        stats = between(inject_at + max(t, start), inject_at + min(t + width, end))
        if stats is None:
            return None
        span = min(t + width, end) - max(t, start)
        has_traffic = stats.requests > 0
        points.append((round(t, 3), _round(stats.success_ratio, 4) if has_traffic else None,
                       _round(stats.p95_ms, 1) if has_traffic else None,
                       round(stats.requests / span, 3) if span > 0 else 0.0))
        t += width
    if not any(rps > 0 for *_, rps in points):
        return None  # an app without entry traffic (no data-plane workload): nothing to draw
    window = (round(done, 3), round(done + window_s, 3)) if done is not None and window_s else None
    return EntrySloSeries(bucket_s=width, points=tuple(points), baseline_start=round(start, 3),
                          agent_start=round(agent_start, 3), actions=tuple(round(a, 3) for a in actions),
                          diagnosis=diagnosis, done=done, window=window,
                          slo_success_ratio=slo_success_ratio, slo_p95_ms=slo_p95_ms)


__all__ = ["MAX_POINTS", "bucket_width", "record_series"]
