"""Mitigation checks for flags whose symptom is resource use, not errors: is a container's CPU
back to normal, has its memory stopped climbing?

Why these and not "the flag is off": flagd's image has no shell and what it serves depends on how
the flag was turned off (ConfigMap edit + restart, a DISABLED state, a new variant value), so the
checks read what an operator's dashboard shows (cAdvisor series through PromQL). Any fix that
stops the spinning threads or the leak passes; memory already leaked may stay (a growing series
is the symptom, a high flat one is not). A container without samples fails.
"""

from __future__ import annotations

import math
from typing import Any

from sregym.oracles.checks import CheckContext, check


def _sum(result: list[dict[str, Any]]) -> float:
    """The sum of an instant vector's finite samples (0 without any)."""
    values = (float((sample.get("value") or [0, "0"])[1]) for sample in result)
    return sum(v for v in values if math.isfinite(v))


def _selector(ctx: CheckContext, container: str) -> str:
    return f'namespace="{ctx.namespace}",container="{container}"'


@check("container_cpu_within")
def container_cpu_within(ctx: CheckContext, *, container: str, max_cores: float,
                         window: str = "1m") -> tuple[bool, str]:
    """The containers named `container` together use at most `max_cores` CPU over `window`."""
    selector = _selector(ctx, container)
    if not ctx.cluster.promql(f"container_cpu_usage_seconds_total{{{selector}}}"):
        return False, f"no CPU samples for container {container}"
    used = _sum(ctx.cluster.promql(f"sum(rate(container_cpu_usage_seconds_total{{{selector}}}[{window}]))"))
    if used > max_cores:
        return False, f"{container} uses {used:.2f} cores (> {max_cores:g}) over the last {window}"
    return True, f"{container} uses {used:.3f} cores"


@check("memory_not_growing")
def memory_not_growing(ctx: CheckContext, *, container: str, max_bytes_per_s: float = 2048.0,
                       window: str = "1m") -> tuple[bool, str]:
    """The working set of the containers named `container` grows by at most `max_bytes_per_s`
    (linear fit over `window`)."""
    selector = _selector(ctx, container)
    if not ctx.cluster.promql(f"container_memory_working_set_bytes{{{selector}}}"):
        return False, f"no memory samples for container {container}"
    slope = _sum(ctx.cluster.promql(f"sum(deriv(container_memory_working_set_bytes{{{selector}}}[{window}]))"))
    if slope > max_bytes_per_s:
        return False, f"{container}'s memory grows {slope / 1024:.1f} KiB/s over the last {window}"
    return True, f"{container}'s memory grows {slope / 1024:.2f} KiB/s"
