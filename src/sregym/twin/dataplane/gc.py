"""The Go garbage collector's CPU cost, as a multiplier on what each request costs.

Go starts a GC cycle when the heap has grown from the live heap to the *heap goal*:
`live × (1 + GOGC/100)`, or the soft memory limit `GOMEMLIMIT` if that is lower. Each cycle marks
the live heap, so the GC's CPU per second is `cycles/s × live = alloc rate × live / headroom`
(headroom = goal − live). The allocation rate follows the request rate, so GC CPU *per request*
is proportional to `live / headroom`: 1 at the default GOGC=100, 100 at GOGC=1, and unbounded as
the live heap approaches GOMEMLIMIT. The runtime's GC CPU limiter (Go ≥ 1.19) caps the collector
at half of the process' CPU; past that the heap overshoots its goal instead.

A program's `cpu_ms` already contains the GC work of a default process (`BASE_GC_SHARE` of it);
only the departure from GOGC=100 changes the cost, so a process with default settings costs
exactly what it did without this model. Requests in flight keep their buffers live, so a backlog
raises the live heap: with a heap near GOMEMLIMIT, queueing makes GC dearer, which slows service
and grows the queue — a loop that outlasts whatever started it. Go reads only GOMEMLIMIT, not the
cgroup's memory limit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

BASE_GC_SHARE = 0.05  # of a request's CPU at GOGC=100 with the heap far below any memory limit
GC_CPU_LIMIT = 0.5  # runtime/mgclimit.go: the GC may use at most half of the process' CPU
LIVE_SHARE_OF_BASE = 0.5  # of a program's idle working set that is live Go heap (the rest: binary, stacks)
_UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_MEMLIMIT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)?\s*$")


@dataclass(frozen=True)
class GoGC:
    """The collector's settings as the runtime read them from the environment at start."""

    gogc: float | None = 100.0  # percent; None: GOGC=off
    memlimit_mib: float | None = None  # GOMEMLIMIT; None: no limit

    @property
    def default(self) -> bool:
        return self.gogc == 100.0 and self.memlimit_mib is None


def go_gc_of(env: Mapping[str, str]) -> GoGC:
    """Parse GOGC and GOMEMLIMIT as the Go runtime does (an unparsable value keeps the default)."""
    gogc: float | None = 100.0
    raw = (env.get("GOGC") or "").strip()
    if raw.lower() == "off":
        gogc = None
    elif raw:
        try:
            gogc = max(0.0, float(int(raw)))
        except ValueError:
            gogc = 100.0
    limit: float | None = None
    match = _MEMLIMIT.match(env.get("GOMEMLIMIT") or "")
    if match:
        limit = float(match.group(1)) * _UNITS[match.group(2) or ""] / float(1 << 20)
    return GoGC(gogc=gogc, memlimit_mib=limit)


@dataclass(frozen=True)
class GcLoad:
    """The collector's state for one tick of a process."""

    live_mib: float
    goal_mib: float  # the heap goal (next GC), math.inf without any trigger
    cost_factor: float  # request CPU relative to a default process (1.0 at GOGC=100)
    gc_fraction: float  # of the process' CPU spent in GC (mark workers and assists)


DEFAULT_LOAD = GcLoad(live_mib=0.0, goal_mib=0.0, cost_factor=1.0, gc_fraction=BASE_GC_SHARE)


def gc_load(config: GoGC, live_mib: float) -> GcLoad:
    """GC cost of a process whose live heap is `live_mib` under `config`."""
    live = max(live_mib, 1e-3)
    if config.default:
        return GcLoad(live_mib=live, goal_mib=2.0 * live, cost_factor=1.0, gc_fraction=BASE_GC_SHARE)
    goal = live * (1.0 + config.gogc / 100.0) if config.gogc is not None else math.inf
    if config.memlimit_mib is not None:
        goal = min(goal, config.memlimit_mib)
    if math.isinf(goal):
        relative = 0.0  # GOGC=off without a limit: the collector never runs
    else:
        relative = live / max(goal - live, 1e-3)  # GC CPU per request against GOGC=100's
    mutator = 1.0 - BASE_GC_SHARE
    gc = min(BASE_GC_SHARE * relative, mutator * GC_CPU_LIMIT / (1.0 - GC_CPU_LIMIT))
    factor = mutator + gc
    return GcLoad(live_mib=live, goal_mib=max(goal, live) if not math.isinf(goal) else goal,
                  cost_factor=factor, gc_fraction=gc / factor)


def go_metric_rows(labels: dict[str, str], config: GoGC, load: GcLoad, cycles: float, gc_cpu_seconds: float,
                   pause_s: float) -> list[tuple[str, dict[str, str], float, str]]:
    """What client_golang's Go collector exposes for this process' collector: the pause summary,
    heap in use and the next GC target, the GC's CPU share and the two settings."""
    mib = float(1 << 20)
    pause = pause_s if cycles > 0 else 0.0
    rows: list[tuple[str, dict[str, str], float, str]] = [
        ("go_gc_duration_seconds", {**labels, "quantile": q}, pause, "summary") for q in ("0", "0.25", "0.5", "0.75", "1")]
    rows += [("go_gc_duration_seconds_sum", labels, cycles * pause_s, "summary"),
             ("go_gc_duration_seconds_count", labels, math.floor(cycles), "summary"),
             ("go_memstats_heap_alloc_bytes", labels, load.live_mib * mib, "gauge"),
             ("go_memstats_next_gc_bytes", labels, (load.goal_mib if not math.isinf(load.goal_mib) else 0.0) * mib,
              "gauge"),
             ("go_memstats_gc_cpu_fraction", labels, load.gc_fraction, "gauge"),
             ("go_gc_cpu_seconds_total", labels, gc_cpu_seconds, "counter"),
             ("go_gc_gogc_percent", labels, config.gogc if config.gogc is not None else -1.0, "gauge"),
             ("go_gc_gomemlimit_bytes", labels,
              config.memlimit_mib * mib if config.memlimit_mib is not None else float(2**63 - 1), "gauge")]
    return rows


__all__ = ["BASE_GC_SHARE", "DEFAULT_LOAD", "GC_CPU_LIMIT", "LIVE_SHARE_OF_BASE", "GcLoad", "GoGC", "gc_load",
           "go_gc_of", "go_metric_rows"]
