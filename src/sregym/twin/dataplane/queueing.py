"""Queueing arithmetic for the fluid model: a pod as a CPU-bound queue, latency distributions.

A latency is modelled as `d + Exp(m)`: a deterministic part (service time, waiting behind the
backlog, downstream) plus an exponential tail. That is enough to answer what callers need — the
probability an attempt exceeds its timeout, a p95, histogram bucket counts — with a handful of
floating-point operations, and it makes a deep backlog (large `d`) time out deterministically,
which is what keeps a retry storm alive.

Abandoned work: a gRPC caller sends its deadline with the call (`grpc-timeout`) and an HTTP client
that times out closes its connection, so the server's context of a call whose caller gave up is
cancelled and its handler returns at the first context check, costing almost nothing. In a FIFO a
request's wait is fixed at arrival by the work ahead of it, so the queue holds at most `deadline ×
cores` of live work per deadline class: whatever arrives beyond that will be dequeued after its
caller gave up. That excess is converted into *abandoned* requests, discarded first next tick at
`cancel_cost_ms` each. A queue fed only by such callers therefore never grows past their timeout,
and its backlog drains at once when the callers' policy allows it to (while an overloaded caller
policy still keeps every served request late).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

CFS_PERIOD_S = 0.1
MAX_QUEUE_FACTOR = 20.0  # cap of the M/M/1 waiting multiplier near saturation
# CPU to discard a call whose deadline passed: HTTP/2 frames, protobuf decode, interceptors and the
# handler's first context check (20 µs), never more than half the operation itself.
CANCEL_COST_MS = 0.02


@dataclass
class QueueState:
    """Carried across ticks for one serving process."""

    backlog_ms: float = 0.0  # CPU work queued (cpu-ms)
    abandoned: float = 0.0  # queued requests whose callers gave up (discarded at the head next)
    # The callers that cancel what they abandon, as last seen with arrivals: deadline ms -> req/s,
    # out of `deadline_of` req/s of arrivals in all (the rest is served however late).
    deadlines: Mapping[float, float] | None = None
    deadline_of: float = 0.0
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
    cancelled: float = 0.0  # abandoned requests discarded this tick


def serve(state: QueueState, work_ms: float, cores: float, dt: float, *, limit: float | None,
          mean_cost_ms: float, max_queue_s: float, deadlines: Mapping[float, float] | None = None,
          rate: float = 0.0, cancel_cost_ms: float = CANCEL_COST_MS) -> ServeResult:
    """Advance one tick: `work_ms` of CPU arrives, `cores` are available.

    `deadlines` maps a caller timeout (ms) to the req/s, out of the `rate` req/s arriving, sent
    by callers that cancel what they abandon; the rest of the arrivals is served however late
    (an open-loop load generator)."""
    cores = max(cores, 1e-3)
    capacity = cores * 1000.0 * dt
    cost = max(mean_cost_ms, 1e-6)
    cancel_cost = max(min(cancel_cost_ms, cost / 2.0), 1e-6)
    # Abandoned requests are the oldest: discarded first, at their small cost.
    cancelled = min(state.abandoned, capacity / cancel_cost) if state.abandoned > 0 else 0.0
    cancel_ms = cancelled * cancel_cost
    state.abandoned -= cancelled
    pending_before = state.abandoned * cancel_cost + cancel_ms
    before = state.backlog_ms
    total = before + work_ms
    served = min(capacity - cancel_ms, total)
    after = total - served
    cap = max_queue_s * cores * 1000.0
    dropped = max(0.0, after - cap)
    after -= dropped
    if work_ms > 0:  # without arrivals the queued work keeps the callers it came from
        state.deadlines, state.deadline_of = (deadlines, rate) if deadlines and rate > 0 else (None, 0.0)
    if state.deadlines and after > 0:
        doomed = 0.0
        for deadline, callers in state.deadlines.items():
            excess = after - deadline * cores
            if excess > 0:
                doomed += callers / state.deadline_of * excess
        if doomed > 0:
            after -= doomed
            state.abandoned = min(state.abandoned + doomed / cost, cap / cancel_cost)
    state.backlog_ms = after
    busy = served + cancel_ms
    rho = busy / capacity if capacity > 0 else 1.0
    queue_term = mean_cost_ms * min(rho / max(1e-6, 1.0 - rho), MAX_QUEUE_FACTOR) / max(1.0, cores)
    wait = (before + after + pending_before + state.abandoned * cancel_cost) / 2.0 / cores + queue_term
    demand = (total + pending_before) / (1000.0 * dt)
    throttle = 0.0
    if limit is not None and limit > 0:
        u = demand / limit
        throttle = 1.0 if u >= 1.0 else (max(0.0, (u - 0.5) / 0.5) ** 2) * 0.8
        periods = dt / CFS_PERIOD_S if busy > 0 else 0.0
        state.periods += periods
        throttled = periods * throttle
        state.throttled_periods += throttled
        state.throttled_seconds += throttled * CFS_PERIOD_S * min(1.0, max(0.05, 1.0 - limit / max(demand, limit)))
    return ServeResult(served_ms=served, served_fraction=served / total if total > 0 else 1.0,
                       drop_fraction=dropped / work_ms if work_ms > 0 else 0.0, wait_ms=wait,
                       utilisation=rho, throttle_ratio=throttle, cores_used=busy / (1000.0 * dt),
                       cancelled=cancelled)


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


def merge_components(components: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """The same mixture with the weights of identical `(d, m)` latencies added up. Steady traffic
    repeats the same components every tick, so a minute of ticks collapses to a few dozen."""
    weights: dict[tuple[float, float], float] = {}
    for w, d, m in components:
        weights[(d, m)] = weights.get((d, m), 0.0) + w
    return [(w, d, m) for (d, m), w in weights.items()]


def quantile(components: list[tuple[float, float, float]], q: float) -> float:
    """The q-quantile of a mixture of `(weight, d, m)` latencies (bisection on the CDF, to a
    relative precision of 1e-9: far below what any latency figure is read at)."""
    components = merge_components(components)
    total = sum(w for w, _, _ in components)
    if total <= 0:
        return 0.0
    # P(L > x) summed: exceed() inlined, the hot loop of every SLO read.
    waits = [(w, d, m) for w, d, m in components if m > 1e-9]
    steps = [(w, d) for w, d, m in components if m <= 1e-9]
    exp = math.exp
    lo, hi = 0.0, max(d + 12 * m for _, d, m in components) + 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        over = (sum(w if mid <= d else w * exp(-(mid - d) / m) for w, d, m in waits)
                + sum(w for w, d in steps if mid <= d))
        if (total - over) / total < q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-9 * hi:
            break
    return hi


__all__ = ["CANCEL_COST_MS", "QueueState", "ServeResult", "cdf", "exceed", "merge_components", "quantile", "serve",
           "truncated_mean"]
