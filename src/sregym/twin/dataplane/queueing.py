"""Queueing arithmetic for the fluid model: a pod as a CPU-bound queue, latency distributions.

A latency is modelled as `d + Exp(m)`: a deterministic part (service time, waiting behind the
backlog, downstream) plus an exponential tail. That is enough to answer what callers need — the
probability an attempt exceeds its timeout, a p95, histogram bucket counts — with a handful of
floating-point operations, and it makes a deep backlog (large `d`) time out deterministically,
which is what keeps a retry storm alive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CFS_PERIOD_S = 0.1
MAX_QUEUE_FACTOR = 20.0  # cap of the M/M/1 waiting multiplier near saturation


@dataclass
class QueueState:
    """Carried across ticks for one serving process."""

    backlog_ms: float = 0.0  # CPU work queued (cpu-ms)
    periods: float = 0.0
    throttled_periods: float = 0.0
    throttled_seconds: float = 0.0


@dataclass(frozen=True)
class ServeResult:
    served_ms: float  # CPU work done this tick
    served_fraction: float  # of the offered work (backlog + arrivals)
    drop_fraction: float  # of the arrivals rejected (queue overflow)
    wait_ms: float  # waiting time of a request arriving now
    utilisation: float
    throttle_ratio: float  # share of CFS periods throttled
    cores_used: float


def serve(state: QueueState, work_ms: float, cores: float, dt: float, *, limit: float | None,
          mean_cost_ms: float, max_queue_s: float) -> ServeResult:
    """Advance one tick: `work_ms` of CPU arrives, `cores` are available."""
    cores = max(cores, 1e-3)
    capacity = cores * 1000.0 * dt
    before = state.backlog_ms
    total = before + work_ms
    served = min(capacity, total)
    after = total - served
    cap = max_queue_s * cores * 1000.0
    dropped = max(0.0, after - cap)
    after -= dropped
    state.backlog_ms = after
    rho = served / capacity if capacity > 0 else 1.0
    queue_term = mean_cost_ms * min(rho / max(1e-6, 1.0 - rho), MAX_QUEUE_FACTOR) / max(1.0, cores)
    wait = (before + after) / 2.0 / cores + queue_term
    demand = total / (1000.0 * dt)
    throttle = 0.0
    if limit is not None and limit > 0:
        u = demand / limit
        throttle = 1.0 if u >= 1.0 else (max(0.0, (u - 0.5) / 0.5) ** 2) * 0.8
        periods = dt / CFS_PERIOD_S if served > 0 else 0.0
        state.periods += periods
        throttled = periods * throttle
        state.throttled_periods += throttled
        state.throttled_seconds += throttled * CFS_PERIOD_S * min(1.0, max(0.05, 1.0 - limit / max(demand, limit)))
    return ServeResult(served_ms=served, served_fraction=served / total if total > 0 else 1.0,
                       drop_fraction=dropped / work_ms if work_ms > 0 else 0.0, wait_ms=wait,
                       utilisation=rho, throttle_ratio=throttle, cores_used=served / (1000.0 * dt))


def exceed(d: float, m: float, t: float) -> float:
    """P(d + Exp(m) > t)."""
    if t <= d:
        return 1.0
    if m <= 1e-9:
        return 0.0
    return math.exp(-(t - d) / m)


def cdf(d: float, m: float, x: float) -> float:
    return 1.0 - exceed(d, m, x)


def truncated_mean(d: float, m: float, t: float) -> float:
    """E[L | L <= t] for L = d + Exp(m) (the latency of attempts that beat the timeout)."""
    if t <= d or m <= 1e-9:
        return min(d, t)
    span = t - d
    q = math.exp(-span / m)
    if q >= 1.0 - 1e-12:
        return d + span / 2
    return d + m - span * q / (1.0 - q)


def quantile(components: list[tuple[float, float, float]], q: float) -> float:
    """The q-quantile of a mixture of `(weight, d, m)` latencies (bisection on the CDF)."""
    total = sum(w for w, _, _ in components)
    if total <= 0:
        return 0.0
    lo, hi = 0.0, max(d + 12 * m for _, d, m in components) + 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        value = sum(w * cdf(d, m, mid) for w, d, m in components) / total
        if value < q:
            lo = mid
        else:
            hi = mid
    return hi


__all__ = ["QueueState", "ServeResult", "cdf", "exceed", "quantile", "serve", "truncated_mean"]
