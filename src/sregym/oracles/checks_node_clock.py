"""Mitigation check for a node whose clock moved: node-exporter's `node_timex_offset_seconds`
(the kernel's estimate of the offset from the reference clock) as an SRE reads it. Any fix that
brings every node's clock back within the bound passes (re-enabling time sync, `hwclock
--hctosys`, `date -s` to the right time); removing only the pod that moved it does not, because
the clock stays where it was put.
"""

from __future__ import annotations

from sregym.oracles.checks import CheckContext, check
from sregym.oracles.checks_node_os import worst_node


@check("node_clocks_in_sync")
def node_clocks_in_sync(ctx: CheckContext, *, max_offset_s: float = 60.0) -> tuple[bool, str]:
    """Every node's clock is within `max_offset_s` of the reference time."""
    offset, node = worst_node(ctx, "abs(node_timex_offset_seconds)")
    if offset is None:
        return False, "no node reports its clock offset"
    if offset > max_offset_s:
        return False, f"the clock of {node} is {offset:.0f} s off"
    return True, f"every node clock is within {max_offset_s:.0f} s (worst {offset:.1f} s)"
