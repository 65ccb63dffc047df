"""Mitigation checks for the disk and metastable problems.

`service_calls_succeed` asks the traces: does the service answer its callers without errors now
(span metrics over a short window, as a RED dashboard would show)? Any fix that makes a
database's reads work again passes — a fresh volume, a restored backup, a healthy node.

`replayed_burst_recovers` is the durability check of a metastable failure: it replays the
trigger (the load generator scaled up for a few seconds, exactly as the incident began) and
requires the entry point to be back within its SLO shortly after. A system that only recovered
because the load happened to drop, or whose retry policy still amplifies overload, collapses
again and fails.
"""

from __future__ import annotations

import math

from sregym.faults.disk_and_metastable import burst
from sregym.oracles.checks import CheckContext, check

POLL_S = 10.0


def _value(result: list[dict[str, object]]) -> float | None:
    if not result:
        return None
    value = result[0].get("value")
    try:
        number = float(value[1]) if isinstance(value, list | tuple) else float("nan")
    except (TypeError, ValueError, IndexError):
        return None
    return None if math.isnan(number) else number


@check("service_calls_succeed")
def service_calls_succeed(ctx: CheckContext, *, service: str, max_error_ratio: float = 0.01,
                          window: str = "1m", min_rate: float = 0.05) -> tuple[bool, str]:
    """The service's server spans over `window`: it receives calls (≥ `min_rate`/s) and at most
    `max_error_ratio` of them end in an error."""
    sel = f'service_name="{service}",span_kind="SPAN_KIND_SERVER"'
    total = _value(ctx.cluster.promql(f"sum(rate(traces_span_metrics_calls_total{{{sel}}}[{window}]))"))
    if total is None:
        sel = f'service_name="{service}"'
        total = _value(ctx.cluster.promql(f"sum(rate(traces_span_metrics_calls_total{{{sel}}}[{window}]))"))
    if total is None or total < min_rate:
        return False, f"{service} received no calls in the last {window}"
    errors = _value(ctx.cluster.promql(
        f'sum(rate(traces_span_metrics_calls_total{{{sel},status_code="STATUS_CODE_ERROR"}}[{window}]))')) or 0.0
    ratio = errors / total
    if ratio > max_error_ratio:
        return False, f"{ratio:.0%} of {service}'s calls failed in the last {window} ({total:.1f}/s)"
    return True, f"{service} answers {total:.1f} calls/s with {ratio:.1%} errors"


def entry_ok(ctx: CheckContext, window_s: float) -> tuple[bool, str]:
    """The entry point meets the SLO over the last `window_s` (the durability replays' judge)."""
    stats = ctx.cluster.entry_stats(window_s)
    if stats is None or stats.requests <= 0:
        return False, "no traffic reaches the entry point"
    if stats.success_ratio < ctx.slo_success_ratio:
        return False, f"entry success ratio {stats.success_ratio:.3f} < {ctx.slo_success_ratio}"
    if stats.p95_ms > ctx.slo_p95_ms:
        return False, f"entry p95 latency {stats.p95_ms:.0f} ms > {ctx.slo_p95_ms:.0f} ms"
    return True, f"entry success {stats.success_ratio:.3f}, p95 {stats.p95_ms:.0f} ms"


def recovery_after_trigger(ctx: CheckContext, recover_within_s: float,
                           judge_window_s: float) -> tuple[bool, float, str]:
    """Poll after a replayed trigger ended until the entry point meets its SLO over the last
    `judge_window_s` (never judged before that much time has passed), for up to
    `recover_within_s`: (recovered, seconds waited, the last reading)."""
    waited, detail = 0.0, ""
    while waited < recover_within_s:
        ctx.cluster.advance(POLL_S)
        waited += POLL_S
        if waited < judge_window_s:
            continue
        ok, detail = entry_ok(ctx, judge_window_s)
        if ok:
            return True, waited, detail
    return False, waited, detail


@check("replayed_burst_recovers")
def replayed_burst_recovers(ctx: CheckContext, *, namespace: str = "sregym-system", name: str = "sregym-loadgen",
                            multiplier: int = 5, seconds: float = 10.0, recover_within_s: float = 90.0,
                            judge_window_s: float = 30.0) -> tuple[bool, str]:
    """Durability: replay the incident's trigger (scale the load generator ×`multiplier` for
    `seconds`), then the entry point must meet its SLO over the last `judge_window_s` within
    `recover_within_s` of the burst's end."""
    burst(ctx.cluster, namespace, name, multiplier, seconds)
    ok, waited, detail = recovery_after_trigger(ctx, recover_within_s, judge_window_s)
    if ok:
        return True, f"recovered {waited:.0f}s after a replayed ×{multiplier} burst of {seconds:.0f}s: {detail}"
    return False, f"still degraded {recover_within_s:.0f}s after a replayed ×{multiplier} burst: {detail}"
