"""A container's memory over a window: its highest working set, not its trend.

A cause that strikes once a minute (a memory stressor a Schedule starts) shows as a plateau for
most of each minute; the peak over a window longer than the gap between runs catches it, where an
instant sample or a growth slope (`memory_not_growing`) may not.
"""

from __future__ import annotations

import math

from sregym.oracles.checks import CheckContext, check


@check("container_memory_within")
def container_memory_within(ctx: CheckContext, *, container: str, max_bytes: float,
                            window: str = "90s") -> tuple[bool, str]:
    """No container named `container` (one per pod) peaks above `max_bytes` of working set over
    `window` (cAdvisor's container_memory_working_set_bytes). No samples fails: no evidence."""
    selector = f'namespace="{ctx.namespace}",container="{container}"'
    result = ctx.cluster.promql(f"max(max_over_time(container_memory_working_set_bytes{{{selector}}}[{window}]))")
    values = [float((sample.get("value") or [0, "nan"])[1]) for sample in result]
    peak = max((v for v in values if math.isfinite(v)), default=None)
    if peak is None:
        return False, f"no memory samples for container {container}"
    mib = peak / (1 << 20)
    if peak > max_bytes:
        return False, f"{container} peaked at {mib:.0f} MiB of working set over the last {window}"
    return True, f"{container} peaked at {mib:.0f} MiB over the last {window}"
