"""What a container sees of its node through the kernel: CPUs, memory, load, uptime.

A container's `/proc/meminfo`, `/proc/loadavg`, `/proc/stat`, `/proc/uptime`, `top` and `free`
show the *node*, not the container's limits (no LXCFS on kind nodes). The numbers are the ones
node-exporter reports for the same node (`telemetry/node_exporter.py` keeps the node's CPU mode
seconds, load averages and boot time), so what an engineer reads in a shell agrees with the
dashboards. Before the first scrape, or in a twin without telemetry, they follow the same
formulas from the runtime's usage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import cpu_cores, memory_bytes

if TYPE_CHECKING:
    from sregym.twin.node.shell import ShellContext

GIB = 1 << 30
UPTIME_AT_START = 3 * 3600 + 17 * 60  # node-exporter's: nodes booted a while before the twin
MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@dataclass
class NodeView:
    cpus: int
    mem_total: int
    mem_free: int
    mem_available: int
    buffers: int
    cached: int
    boot_time: float
    load: tuple[float, float, float]
    busy_cores: float
    cpu_seconds: list[dict[str, float]] = field(default_factory=list)  # per CPU: mode -> seconds

    @property
    def mem_used(self) -> int:
        return max(0, self.mem_total - self.mem_free - self.buffers - self.cached)


def node_view(ctx: ShellContext, now: float) -> NodeView:
    """The node of the exec'd pod as its kernel reports it."""
    twin = ctx.twin
    node = twin.store.peek("Node", None, ctx.node) if twin is not None and ctx.node else None
    cpus = max(1, math.ceil(cpu_cores(str(get_path(node or {}, "status", "capacity", "cpu", default="4")))))
    total = memory_bytes(str(get_path(node or {}, "status", "capacity", "memory", default="16Gi"))) or 16 * GIB
    runtime = twin.services.runtime if twin is not None else None
    busy, pods_memory = runtime.node_usage(ctx.node) if runtime is not None and ctx.node else (0.0, 0)
    try:
        from sregym.twin.telemetry.cadvisor import SYSTEM_CPU_CORES, SYSTEM_MEMORY_BYTES, node_role
        from sregym.twin.telemetry.node_exporter import BASE_CACHED, BUFFERS, KERNEL_MEMORY

        role = node_role(node) if node is not None else "worker"
        system_memory = float(SYSTEM_MEMORY_BYTES[role])
        system_cpu = float(SYSTEM_CPU_CORES[role])
    except (ImportError, KeyError):  # telemetry absent: the same shape with fixed overheads
        BASE_CACHED, BUFFERS, KERNEL_MEMORY = 1200 << 20, 96 << 20, 380 << 20
        system_memory, system_cpu = 600 << 20, 0.15
    used = pods_memory + system_memory + KERNEL_MEMORY
    cached = min(BASE_CACHED + 0.1 * pods_memory, max(0.0, total - used - BUFFERS))
    free = max(0.0, total - used - cached - BUFFERS)
    available = min(total, free + cached * 0.85 + BUFFERS)
    boot = (twin.clock.start if twin is not None else now) - UPTIME_AT_START
    busy = min(float(cpus), busy + system_cpu)
    load = (0.35 + busy, 0.3 + busy * 0.8, 0.28 + busy * 0.5)
    seconds: list[dict[str, float]] = []
    scraper = twin.services.scraper if twin is not None else None
    counters = getattr(getattr(scraper, "node_exporter", None), "nodes", {}).get(ctx.node)
    if counters is not None:
        boot = counters.boot_time
        load = (counters.load.get(1, 0.0), counters.load.get(5, 0.0), counters.load.get(15, 0.0))
        seconds = [dict(cpu) for cpu in counters.cpu]
    if len(seconds) != cpus:
        uptime = max(0.0, now - boot)
        share = busy / cpus
        seconds = [{"user": uptime * (0.02 + share * 0.72 * 0.1), "nice": uptime * 0.0004,
                    "system": uptime * (0.008 + share * 0.022), "idle": uptime * max(0.0, 0.968 - share * 0.1),
                    "iowait": uptime * 0.002, "irq": 0.0, "softirq": uptime * 0.0016, "steal": 0.0}
                   for _ in range(cpus)]
    return NodeView(cpus, int(total), int(free), int(available), int(BUFFERS), int(cached), boot, load, busy,
                    seconds)


def node_kernel(ctx: ShellContext) -> str:
    """The node's kernel release (`status.nodeInfo.kernelVersion`)."""
    from sregym.twin.userland.identity import DEFAULT_KERNEL

    twin = ctx.twin
    node = twin.store.peek("Node", None, ctx.node) if twin is not None and ctx.node else None
    return str(get_path(node or {}, "status", "nodeInfo", "kernelVersion", default="") or DEFAULT_KERNEL)


__all__ = ["MODES", "NodeView", "node_kernel", "node_view"]
