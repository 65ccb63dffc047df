"""Locust's web API (`/stats/requests`) over what the simulated users sent.

`ClosedLoopWorkload` tallies every tick's requests per (method, name) here (`LocustTally.record`),
with the outcome the data plane gave that request's route on the previous tick (the proxy's
operation: its success ratio and latency), so the JSON agrees with the span metrics. The body has
Locust 2.x's shape: `stats` (one entry per name, sorted, then `Aggregated`), `errors`
(`{method, name, error, occurrences}`), `total_rps`, `total_fail_per_sec`, `fail_ratio`,
`current_response_time_percentiles`, `state`, `user_count`. Fractions carry across ticks, so
the counts are whole requests.
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from sregym.twin.dataplane.browser import BROWSER_SUFFIX
from sregym.twin.dataplane.envoy import config_of, outcomes, route_for
from sregym.twin.dataplane.pages import Page, PageRequest
from sregym.twin.dataplane.state import match_operation

CURRENT_WINDOW_S = 10  # Locust's current_rps: the last ten seconds


@dataclass
class _Entry:
    requests: int = 0
    failures: int = 0
    fail_carry: float = 0.0
    total_ms: float = 0.0
    min_ms: float | None = None
    max_ms: float = 0.0
    content: int = 0
    recent: deque[tuple[float, int, int]] = field(default_factory=lambda: deque(maxlen=CURRENT_WINDOW_S + 1))


@dataclass
class LocustTally:
    entries: dict[tuple[str, str], _Entry] = field(default_factory=dict)
    errors: dict[tuple[str, str, str], int] = field(default_factory=dict)
    base_url: str = ""

    def record(self, twin: Any, workload: Any, sent: dict[tuple[str, str], int], now: float) -> None:
        """Count one tick's requests with the outcome their route had on the last tick."""
        for (method, name), count in sorted(sent.items()):
            success, latency_ms, status = _outcome(twin, workload, method, name)
            entry = self.entries.setdefault((method, name), _Entry())
            entry.fail_carry += count * (1.0 - success)
            failed = min(count, int(entry.fail_carry + 1e-9))
            entry.fail_carry -= failed
            entry.requests += count
            entry.failures += failed
            entry.total_ms += count * latency_ms
            entry.min_ms = latency_ms if entry.min_ms is None else min(entry.min_ms, latency_ms)
            entry.max_ms = max(entry.max_ms, latency_ms)
            entry.content += (count - failed) * 1200
            entry.recent.append((now, count, failed))
            if failed:
                reason = {500: "Internal Server Error", 503: "Service Unavailable", 504: "Gateway Timeout"}
                error = f"HTTPError('{status} Server Error: {reason.get(status, '')} for url: {self.base_url}{name}')"
                self.errors[(method, name, error)] = self.errors.get((method, name, error), 0) + failed


def _outcome(twin: Any, workload: Any, method: str, name: str) -> tuple[float, float, int]:
    """(success ratio, latency ms, failure status) of `method name` at the workload's target now."""
    engine = twin.services.dataplane
    ticks = engine.entry.get(workload.spec.name) if engine is not None else None
    if not ticks:
        return 1.0, 1.0, 500
    last = ticks[-1]
    weight = sum(c[0] for c in last.components)
    latency = sum(c[0] * (c[1] + c[2]) for c in last.components) / weight if weight > 0 else 1.0
    overall = last.success / last.rate if last.rate > 0 else 1.0
    _runs, src = workload.source_pod(twin)
    host, port = workload.spec.host_port
    for leg in engine.route(src, host, port, connect_timeout_ms=workload.spec.timeout_ms).legs:
        proc = engine.proc_at(leg.result.dst_ip, leg.result.target_port) if leg.result.ok else None
        if proc is None:
            return (0.0, latency, 503) if not leg.result.ok else (overall, latency, 500)
        config = config_of(proc)
        route = route_for(config, name) if config is not None else None
        if config is not None and route is not None:  # what the proxy answered, flags and all
            parts = outcomes(engine, proc, config, route, method, name)
            good = sum(f for f, o in parts if o.status < 400)
            mean = sum(f * o.latency_ms for f, o in parts) / max(sum(f for f, _ in parts), 1e-9)
            bad = max((p for p in parts if p[1].status >= 400), key=lambda p: p[0], default=None)
            return good, mean + 2 * leg.result.latency_ms, bad[1].status if bad else 500
        op = match_operation(proc, name, method)
        res = proc.results.get(op.key) if op is not None else None
        if res is not None:
            return res.success, res.mean + 2 * leg.result.latency_ms, 503 if res.error_class == "unavailable" else 500
    return overall, latency, 500


def _stat(method: str, name: str, e: _Entry, now: float) -> dict[str, Any]:
    recent = [(n, f) for at, n, f in e.recent if at > now - CURRENT_WINDOW_S]
    avg = e.total_ms / e.requests if e.requests else 0.0
    return {"method": method, "name": name, "safe_name": name, "num_requests": e.requests,
            "num_failures": e.failures, "avg_response_time": avg,
            "min_response_time": 0 if e.min_ms is None else round(e.min_ms),
            "max_response_time": round(e.max_ms),
            "current_rps": sum(n for n, _ in recent) / CURRENT_WINDOW_S if recent else 0.0,
            "current_fail_per_sec": sum(f for _, f in recent) / CURRENT_WINDOW_S if recent else 0.0,
            "median_response_time": _round(avg), "avg_content_length": e.content / e.requests if e.requests else 0.0,
            "response_time_percentile_0.95": _round(avg * 2.2), "response_time_percentile_0.99": _round(e.max_ms)}


def _round(ms: float) -> int:
    """Locust's bucketing of response times (2 significant digits above 100 ms, 3 above 1 s)."""
    if ms < 100:
        return round(ms)
    digits = 10 ** (int(math.log10(ms)) - 1 if ms < 1000 else int(math.log10(ms)) - 2)
    return int(round(ms / digits) * digits)


def stats_requests(tally: LocustTally, users: int, now: float) -> dict[str, Any]:
    stats = [_stat(m, n, e, now) for (m, n), e in sorted(tally.entries.items(), key=lambda kv: (kv[0][1], kv[0][0]))]
    total = _Entry()
    for e in tally.entries.values():
        total.requests += e.requests
        total.failures += e.failures
        total.total_ms += e.total_ms
        total.content += e.content
        total.max_ms = max(total.max_ms, e.max_ms)
        if e.min_ms is not None:
            total.min_ms = e.min_ms if total.min_ms is None else min(total.min_ms, e.min_ms)
    aggregated = _stat("", "Aggregated", total, now)
    recent: dict[float, tuple[int, int]] = {}
    for e in tally.entries.values():
        for at, n, f in e.recent:
            if at > now - CURRENT_WINDOW_S:
                got = recent.get(at, (0, 0))
                recent[at] = (got[0] + n, got[1] + f)
    aggregated["current_rps"] = sum(n for n, _ in recent.values()) / CURRENT_WINDOW_S
    aggregated["current_fail_per_sec"] = sum(f for _, f in recent.values()) / CURRENT_WINDOW_S
    stats.append(aggregated)
    errors = [{"method": m, "name": n, "error": err, "occurrences": count}
              for (m, n, err), count in sorted(tally.errors.items())]
    return {"stats": stats[:500], "errors": errors[:500], "total_rps": aggregated["current_rps"],
            "total_fail_per_sec": aggregated["current_fail_per_sec"],
            "fail_ratio": total.failures / total.requests if total.requests else 0.0,
            "current_response_time_percentiles": {
                "response_time_percentile_0.5": aggregated["median_response_time"],
                "response_time_percentile_0.95": aggregated["response_time_percentile_0.95"]},
            "state": "running" if users else "stopped", "user_count": users}


def locust_web_page(engine: Any, found: tuple[Any, Any, Any], req: PageRequest) -> Page | None:
    """The web UI's `/stats/requests` for the Locust process listening at `found`."""
    if req.path != "/stats/requests":
        return None
    runtime, _instance, _listen = found
    for name in sorted(engine.workloads):
        workload = engine.workloads[name]
        pod = getattr(workload, "pod", None)
        tally = getattr(workload, "tally", None)
        if tally is None or ((pod or {}).get("metadata") or {}).get("name") != runtime.name:
            continue
        # Locust counts every user class: the browser users run as a workload of their own (browser.py)
        browsers = engine.workloads.get(name + BROWSER_SUFFIX)
        users = len(workload.users) + (len(browsers.users) if browsers is not None else 0)
        body = json.dumps(stats_requests(tally, users, engine.twin.clock.now))
        return Page(200, body, {"Content-Type": "application/json", "Server": "Werkzeug/3.1.3 Python/3.12.10"})
    return None


__all__ = ["LocustTally", "locust_web_page", "stats_requests"]
