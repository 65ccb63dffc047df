"""Mitigation checks for the disk-signal problems: is a service fast again?

`service_latency_within` asks the traces, as a RED dashboard's latency panel would: the p95 of the
service's server spans over a short window (span-metrics histogram) must be under a bound. Any
fix that takes the slow IO out of the service's path passes — a healthy volume, a restored
backup, a database on another node — and it says nothing about errors (other checks do).
"""

from __future__ import annotations

import math

from sregym.oracles.checks import CheckContext, check


@check("service_latency_within")
def service_latency_within(ctx: CheckContext, *, service: str, max_p95_ms: float = 100.0,
                           window: str = "1m") -> tuple[bool, str]:
    """The p95 duration of `service`'s server spans over `window` is at most `max_p95_ms`."""
    query = ("histogram_quantile(0.95, sum by (le) (rate(traces_span_metrics_duration_milliseconds_bucket"
             f'{{service_name="{service}",span_kind="SPAN_KIND_SERVER"}}[{window}])))')
    result = ctx.cluster.promql(query)
    try:
        value = float(result[0]["value"][1]) if result else math.nan
    except (KeyError, IndexError, TypeError, ValueError):
        value = math.nan
    if math.isnan(value):
        return False, f"{service} served no calls in the last {window}"
    if value > max_p95_ms:
        return False, f"{service}'s p95 latency is {value:.0f} ms (> {max_p95_ms:.0f} ms) over the last {window}"
    return True, f"{service}'s p95 latency is {value:.0f} ms"
