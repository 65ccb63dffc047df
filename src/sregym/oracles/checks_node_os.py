"""Mitigation checks for node operating-system problems, read from node-exporter the way an SRE
watches a node: is any node's conntrack table near its limit, are its file handles near
`fs.file-max`? Any fix that gives the node its headroom back passes (restoring the setting,
raising it, draining the node), and a fix that only removed the pod that changed it does not,
because the kernel keeps the value.
"""

from __future__ import annotations

import math

from sregym.oracles.checks import CheckContext, check


def worst_node(ctx: CheckContext, query: str) -> tuple[float | None, str]:
    """The highest per-node value of `query` and the node it belongs to."""
    worst, where = None, ""
    for sample in ctx.cluster.promql(query):
        metric, value = sample.get("metric") or {}, sample.get("value")
        try:
            number = float(value[1]) if isinstance(value, list | tuple) else math.nan
        except (TypeError, ValueError, IndexError):
            continue
        if math.isnan(number):
            continue
        if worst is None or number > worst:
            worst, where = number, str(metric.get("instance") or metric.get("node") or "")
    return worst, where


@check("node_conntrack_headroom")
def node_conntrack_headroom(ctx: CheckContext, *, max_ratio: float = 0.8) -> tuple[bool, str]:
    """Every node's conntrack table is below `max_ratio` of its limit and dropped no new flows
    in the last minute."""
    ratio, node = worst_node(ctx, "node_nf_conntrack_entries / node_nf_conntrack_entries_limit")
    if ratio is None:
        return False, "no node reports its conntrack table"
    if ratio >= max_ratio:
        return False, f"conntrack table of {node} is {ratio:.0%} full"
    drops, node = worst_node(ctx, "increase(node_nf_conntrack_stat_drop[1m])")
    if drops is not None and drops > 0:
        return False, f"{node} dropped {drops:.0f} new flows in the last minute"
    return True, f"every conntrack table is below {max_ratio:.0%} of its limit (worst {ratio:.1%})"


@check("node_filefd_headroom")
def node_filefd_headroom(ctx: CheckContext, *, max_ratio: float = 0.8) -> tuple[bool, str]:
    """Every node has allocated less than `max_ratio` of its `fs.file-max` file handles."""
    ratio, node = worst_node(ctx, "node_filefd_allocated / node_filefd_maximum")
    if ratio is None:
        return False, "no node reports its file handles"
    if ratio >= max_ratio:
        return False, f"{node} has allocated {ratio:.0%} of its file handles (fs.file-max)"
    return True, f"every node is below {max_ratio:.0%} of fs.file-max"


@check("node_threads_headroom")
def node_threads_headroom(ctx: CheckContext, *, max_ratio: float = 0.8) -> tuple[bool, str]:
    """Every node runs fewer than `max_ratio` of the tasks `kernel.threads-max` and
    `kernel.pid_max` allow (node-exporter's processes collector)."""
    ratio, node = worst_node(ctx, "node_processes_threads / node_processes_max_threads")
    if ratio is None:
        return False, "no node reports its threads"
    if ratio >= max_ratio:
        return False, f"{node} runs {ratio:.0%} of its kernel.threads-max"
    pids, node = worst_node(ctx, "node_processes_pids / node_processes_max_processes")
    if pids is not None and pids >= max_ratio:
        return False, f"{node} uses {pids:.0%} of its kernel.pid_max"
    return True, f"every node is below {max_ratio:.0%} of its thread and PID limits"
