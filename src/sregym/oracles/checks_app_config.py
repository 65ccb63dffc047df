"""Mitigation checks for application, configuration and database faults.

They ask what users of a service experience, through the same telemetry an operator would use:
"geo's requests succeed over the last minute" (span metrics through PromQL), not "the role is
granted" or "the key is back". Any fix that makes the service serve again passes — granting the
role back, pointing the service at another valid user, restarting onto the rotated password —
and a service that gets no traffic at all (deleted, scaled away, bypassed) never does.
"""

from __future__ import annotations

import math
from typing import Any

from sregym.oracles.checks import CheckContext, check


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _scalar(result: list[dict[str, Any]]) -> float:
    """The sum of an instant vector's finite samples; 0 when it has none (no series, or only
    NaN/Inf), so a missing or broken measurement never counts as requests handled."""
    total = 0.0
    for sample in result:
        value = sample.get("value") or [0, "0"]
        try:
            number = float(value[1])
        except (TypeError, ValueError, IndexError):
            continue
        if math.isfinite(number):
            total += number
    return total


@check("service_error_free")
def service_error_free(ctx: CheckContext, *, service: str, span_name: str | None = None,
                       span_kind: str = "SPAN_KIND_SERVER", window_s: float = 60.0,
                       max_error_ratio: float = 0.001, min_calls: float = 1.0) -> tuple[bool, str]:
    """`service` handled requests over the last `window_s` seconds and (almost) none failed.

    `span_name` narrows to one operation ("/hotels" matches the HTTP span of that route);
    `span_kind="SPAN_KIND_CLIENT"` judges the service's own outgoing calls instead."""
    window = f"{int(window_s)}s"
    matchers = [f'service_name="{_quote(service)}"', f'span_kind="{_quote(span_kind)}"']
    if span_name:
        matchers.append(f'span_name=~".*{_quote(span_name)}"')
    selector = ",".join(matchers)
    calls = _scalar(ctx.cluster.promql(f"sum(increase(traces_span_metrics_calls_total{{{selector}}}[{window}]))"))
    errors = _scalar(ctx.cluster.promql(
        f'sum(increase(traces_span_metrics_calls_total{{{selector},status_code="STATUS_CODE_ERROR"}}[{window}]))'))
    what = f"{service}{' ' + span_name if span_name else ''}"
    if calls < min_calls:
        return False, f"{what} handled no requests in the last {window}"
    ratio = errors / calls if calls > 0 else 1.0
    if ratio > max_error_ratio:
        return False, f"{what}: {ratio:.1%} of {calls:.0f} requests failed in the last {window}"
    return True, f"{what}: {calls:.0f} requests in the last {window}, error ratio {ratio:.2%}"


@check("workloads_ready")
def workloads_ready(ctx: CheckContext, *, names: list[str], kind: str = "Deployment",
                    namespace: str | None = None) -> tuple[bool, str]:
    """Every named workload is at ≥ its baseline replicas, fully rolled out and ready."""
    from sregym.oracles.checks import workload_status

    ns = namespace or ctx.namespace
    bad = []
    for name in names:
        obj = ctx.cluster.get(kind, ns, name)
        if obj is None:
            bad.append(f"{kind}/{name} does not exist")
            continue
        ok, detail = workload_status(obj, ctx.baseline.get(f"{kind}/{ns}/{name}"))
        if not ok:
            bad.append(detail)
    if bad:
        return False, "; ".join(bad)
    return True, f"{len(names)} {kind}s rolled out and ready"
