"""The runtime metrics each demo service's instrumentation pushes, as Prometheus stores them.

Demo 2.2.0 instruments its runtimes with: the OpenTelemetry Java agent 2.x (ad, fraud-detection:
`jvm.*`; containers under 2 CPUs and 1792 MiB make HotSpot pick the Serial collector, whose pools
and collectors are `Eden Space`/`Tenured Gen` and `Copy`/`MarkSweepCompact`); .NET 10's built-in
`System.Runtime` meter (cart, accounting: `dotnet.*`); `instrumentation-runtime-node` (payment:
`nodejs.eventloop.*`, `v8js.*`); `opentelemetry-instrumentation-system-metrics` (recommendation,
product-reviews: `process.runtime.cpython.*`, whose `gc_count` carries the unit `By` and so lands
as `..._gc_count_bytes_total`); `contrib/instrumentation/runtime` v0.64 (checkout,
product-catalog: `go.*`). Names below are after Prometheus' OTLP translation (dots to
underscores, unit suffix, `_total` on counters).

Values follow the model, so a fault shows where an SRE would look: CPU from the container's use
(adHighCpu), heap from its working set (recommendationCacheFailure's leak), full collections from
adManualGc's `System.gc()` per request, thread-pool queues and event-loop delay from the
process' busy fraction.
"""

from __future__ import annotations

import math
from typing import Any

from sregym.twin.telemetry.exposition import Family
from sregym.twin.telemetry.runtime_metrics import RuntimeRow, RuntimeSample, register_runtime_metrics

SERVICE_NAMESPACE = "opentelemetry-demo"
SERVICE_VERSION = "2.2.0"
MIB = 1 << 20
FULL_GC_PAUSE_S = 0.45  # a System.gc() of ad's heap, as the flag path's added latency
GC_BUCKETS_S = (0.01, 0.1, 1.0, 10.0)  # the advice of jvm.gc.duration and v8js.gc.duration

RUNTIMES = {"ad": "jvm", "fraud-detection": "jvm", "cart": "dotnet", "accounting": "dotnet", "payment": "node",
            "recommendation": "python", "product-reviews": "python", "checkout": "go", "product-catalog": "go"}


def _labels(**kv: str) -> dict[str, str]:
    return dict(kv)


def _count(state: dict[str, Any], key: str, add: float) -> float:
    state[key] = state.get(key, 0.0) + max(0.0, add)
    return float(state[key])


def _cores_available(sample: RuntimeSample) -> int:
    return max(1, math.ceil(sample.cpu_limit)) if sample.cpu_limit else 2


def _gc_histogram(out: list[RuntimeRow], name: str, labels: dict[str, str], state: dict[str, Any],
                  key: str, count: float, pause_s: float) -> None:
    """Accumulate `count` collections of `pause_s` each into a cumulative histogram."""
    buckets = state.setdefault(key, [0.0] * len(GC_BUCKETS_S))
    for i, le in enumerate(GC_BUCKETS_S):
        if pause_s <= le:
            buckets[i] += count
    total = math.floor(_count(state, key + ":n", count))  # whole collections only
    total_s = _count(state, key + ":s", count * pause_s)
    if total <= 0:
        return
    for le, value in zip(GC_BUCKETS_S, buckets, strict=True):
        out.append((f"{name}_bucket", {**labels, "le": f"{le:g}"}, float(math.floor(value)), "histogram"))
    out.append((f"{name}_bucket", {**labels, "le": "+Inf"}, total, "histogram"))
    out.append((f"{name}_sum", labels, total_s, "histogram"))
    out.append((f"{name}_count", labels, total, "histogram"))


def _rps(sample: RuntimeSample) -> float:
    return sum(sample.served.values())


def _manual_gcs(sample: RuntimeSample, pause_s: float) -> float:
    """adManualGc: the GetAds handler calls System.gc() on every request while the flag is on;
    a full collection stops the world, so no more of them fit in an interval than its length
    allows (requests arriving during one wait for it)."""
    if sample.settings.get("adManualGc") != "true":
        return 0.0
    wanted = sum(rate for op, rate in sample.served.items() if op.endswith("GetAds")) * sample.dt
    return min(wanted, sample.dt * 0.9 / pause_s)


# ---------------------------------------------------------------------------------------- JVM
def jvm(sample: RuntimeSample) -> list[RuntimeRow]:
    st, dt, out = sample.state, sample.dt, []
    limit = sample.memory_limit or 512 * MIB
    heap_max = limit * 0.25  # the default MaxRAMPercentage
    eden_max, survivor_max, tenured_max = heap_max * 0.266, heap_max * 0.033, heap_max * 0.667
    alloc = _rps(sample) * 96 * 1024 * dt + 2 * MIB * dt / 15  # bytes allocated this interval
    minor = (_count(st, "eden_fill", alloc) // (eden_max * 0.9))
    st["eden_fill"] = st["eden_fill"] - minor * eden_max * 0.9
    major = _manual_gcs(sample, FULL_GC_PAUSE_S)
    tenured = min(tenured_max * 0.95, max(4 * MIB, sample.memory_bytes * 0.3))
    eden = st["eden_fill"]
    heap = {"Eden Space": (eden, eden_max), "Survivor Space": (survivor_max * 0.4, survivor_max),
            "Tenured Gen": (tenured, tenured_max)}
    non_heap = {"Metaspace": 38 * MIB, "Compressed Class Space": 4.6 * MIB, "CodeHeap 'non-nmethods'": 1.4 * MIB,
                "CodeHeap 'profiled nmethods'": 9.2 * MIB, "CodeHeap 'non-profiled nmethods'": 2.7 * MIB}
    for pool, (used, cap) in heap.items():
        lab = _labels(jvm_memory_pool_name=pool, jvm_memory_type="heap")
        out.append(("jvm_memory_used_bytes", lab, float(int(used)), "gauge"))
        out.append(("jvm_memory_committed_bytes", lab, float(int(cap)), "gauge"))
        out.append(("jvm_memory_limit_bytes", lab, float(int(cap)), "gauge"))
        out.append(("jvm_memory_used_after_last_gc_bytes", lab,
                    0.0 if pool == "Eden Space" else float(int(used)), "gauge"))
    for pool, used in non_heap.items():
        lab = _labels(jvm_memory_pool_name=pool, jvm_memory_type="non_heap")
        out.append(("jvm_memory_used_bytes", lab, float(int(used)), "gauge"))
        out.append(("jvm_memory_committed_bytes", lab, float(int(used * 1.08)), "gauge"))
    _gc_histogram(out, "jvm_gc_duration_seconds", _labels(jvm_gc_action="end of minor GC", jvm_gc_name="Copy"),
                  st, "gc_minor", minor, 0.004)
    # A full collection of the whole heap, paced like the flag path's pause.
    _gc_histogram(out, "jvm_gc_duration_seconds",
                  _labels(jvm_gc_action="end of major GC", jvm_gc_name="MarkSweepCompact"),
                  st, "gc_major", major, FULL_GC_PAUSE_S)
    cores = _cores_available(sample)
    busy = min(1.0, sample.cpu_cores / cores)
    threads = 18 + min(200, math.ceil(sample.inflight))
    for daemon, state, n in (("true", "runnable", 6), ("true", "waiting", 7), ("true", "timed_waiting", 5),
                             ("false", "runnable", 1 + threads - 18), ("false", "waiting", 1)):
        out.append(("jvm_thread_count", _labels(jvm_thread_daemon=daemon, jvm_thread_state=state), float(n), "gauge"))
    out.append(("jvm_cpu_recent_utilization_ratio", {}, round(busy, 6), "gauge"))
    out.append(("jvm_cpu_time_seconds_total", {}, _count(st, "cpu_s", sample.cpu_cores * dt), "counter"))
    out.append(("jvm_cpu_count", {}, float(cores), "gauge"))
    out.append(("jvm_class_count", {}, 10412.0, "gauge"))
    out.append(("jvm_class_loaded_total", {}, 10578.0, "counter"))
    out.append(("jvm_class_unloaded_total", {}, 166.0, "counter"))
    return out


# --------------------------------------------------------------------------------------- .NET
def dotnet(sample: RuntimeSample) -> list[RuntimeRow]:
    st, dt, out = sample.state, sample.dt, []
    rps = _rps(sample)
    st.setdefault("alloc", 26.0 * MIB)  # what host start-up and DI wiring allocate before serving
    allocated = _count(st, "alloc", rps * 48 * 1024 * dt + 64 * 1024 * dt)
    gen0 = allocated // (6 * MIB)
    gen1, gen2 = gen0 // 8, gen0 // 64
    for gen, n in (("gen0", gen0), ("gen1", gen1), ("gen2", gen2)):
        out.append(("dotnet_gc_collections_total", _labels(gc_heap_generation=gen), float(n), "counter"))
    out.append(("dotnet_gc_heap_total_allocated_bytes_total", {}, float(int(allocated)), "counter"))
    heap = max(6 * MIB, sample.memory_bytes * 0.35)
    for gen, share in (("gen0", 0.04), ("gen1", 0.06), ("gen2", 0.7), ("loh", 0.18), ("poh", 0.02)):
        out.append(("dotnet_gc_last_collection_heap_size_bytes", _labels(gc_heap_generation=gen),
                    float(int(heap * share)), "gauge"))
    out.append(("dotnet_gc_last_collection_memory_committed_size_bytes", {}, float(int(heap * 1.2)), "gauge"))
    out.append(("dotnet_gc_pause_time_seconds_total", {}, gen0 * 0.0012 + gen1 * 0.004 + gen2 * 0.02, "counter"))
    out.append(("dotnet_process_memory_working_set_bytes", {}, float(int(sample.memory_bytes)), "gauge"))
    user = _count(st, "cpu_user", sample.cpu_cores * dt * 0.8)
    system = _count(st, "cpu_system", sample.cpu_cores * dt * 0.2)
    out.append(("dotnet_process_cpu_time_seconds_total", _labels(cpu_mode="user"), user, "counter"))
    out.append(("dotnet_process_cpu_time_seconds_total", _labels(cpu_mode="system"), system, "counter"))
    cores = _cores_available(sample)
    out.append(("dotnet_process_cpu_count", {}, float(cores), "gauge"))
    # Work items wait in the pool's queue once every worker is busy.
    queued = max(0.0, sample.inflight - cores) if sample.utilisation >= 0.95 else 0.0
    out.append(("dotnet_thread_pool_thread_count", {}, float(cores + min(64, math.ceil(sample.inflight))), "gauge"))
    out.append(("dotnet_thread_pool_queue_length", {}, float(int(queued)), "gauge"))
    out.append(("dotnet_thread_pool_work_item_count_total", {}, float(int(_count(st, "items", rps * 3 * dt))),
                "counter"))
    out.append(("dotnet_monitor_lock_contentions_total", {}, float(int(_count(st, "locks", rps * 0.01 * dt))),
                "counter"))
    return out


# --------------------------------------------------------------------------------------- Node
V8_SPACES = ("read_only_space", "new_space", "old_space", "code_space", "shared_space", "trusted_space",
             "new_large_object_space", "large_object_space", "code_large_object_space",
             "shared_large_object_space", "trusted_large_object_space")


def node(sample: RuntimeSample) -> list[RuntimeRow]:
    st, dt, out = sample.state, sample.dt, []
    util = min(0.999, max(0.0, sample.utilisation))
    # perf_hooks.monitorEventLoopDelay samples every 10 ms: an idle loop reports ~10 ms; a busy
    # one waits behind the callbacks queued ahead (M/M/1-style growth with the busy fraction).
    wait = 0.002 * util / (1.0 - util)
    base = 0.010
    for stat, value in (("min", base * 0.98), ("p50", base + wait * 0.7), ("mean", base + wait),
                        ("p90", base + wait * 2.3), ("p99", base + wait * 4.6), ("max", base + wait * 9.0 + 0.002),
                        ("stddev", 0.0004 + wait * 1.1)):
        out.append((f"nodejs_eventloop_delay_{stat}_seconds", {}, round(value, 6), "gauge"))
    out.append(("nodejs_eventloop_utilization_ratio", {}, round(util, 6), "gauge"))
    out.append(("nodejs_eventloop_time_seconds_total", _labels(nodejs_eventloop_state="active"),
                _count(st, "active", util * dt), "counter"))
    out.append(("nodejs_eventloop_time_seconds_total", _labels(nodejs_eventloop_state="idle"),
                _count(st, "idle", (1.0 - util) * dt), "counter"))
    heap = max(8 * MIB, sample.memory_bytes * 0.3)
    shares = {"new_space": 0.12, "old_space": 0.72, "code_space": 0.05, "large_object_space": 0.08,
              "trusted_space": 0.02, "read_only_space": 0.01}
    for space in V8_SPACES:
        used = float(int(heap * shares.get(space, 0.0)))
        lab = _labels(v8js_heap_space_name=space)
        out.append(("v8js_memory_heap_used_bytes", lab, used, "gauge"))
        out.append(("v8js_memory_heap_limit_bytes", lab, float(int(used * 1.25)) if used else 0.0, "gauge"))
        out.append(("v8js_memory_heap_space_available_size_bytes", lab, float(int(used * 0.25)), "gauge"))
        out.append(("v8js_memory_heap_space_physical_size_bytes", lab, float(int(used * 1.25)), "gauge"))
    rps = _rps(sample)
    scavenges = (_count(st, "young", rps * 40 * 1024 * dt + 1024 * dt)) // (4 * MIB)
    new_minor, st["minor_seen"] = scavenges - st.get("minor_seen", 0.0), scavenges
    _gc_histogram(out, "v8js_gc_duration_seconds", _labels(v8js_gc_type="minor"), st, "gc_minor", new_minor, 0.0015)
    new_major = new_minor / 20.0 if new_minor else 0.0
    _gc_histogram(out, "v8js_gc_duration_seconds", _labels(v8js_gc_type="major"), st, "gc_major", new_major, 0.012)
    return out


# ------------------------------------------------------------------------------------- Python
def python(sample: RuntimeSample) -> list[RuntimeRow]:
    st, dt, out = sample.state, sample.dt, []
    rss = float(int(sample.memory_bytes))
    out.append(("process_runtime_cpython_memory_bytes", _labels(type="rss"), rss, "gauge"))
    out.append(("process_runtime_cpython_memory_bytes", _labels(type="vms"), float(int(rss * 4.1 + 310 * MIB)),
                "gauge"))
    out.append(("process_runtime_cpython_cpu_time_seconds_total", _labels(type="user"),
                _count(st, "user", sample.cpu_cores * dt * 0.85), "counter"))
    out.append(("process_runtime_cpython_cpu_time_seconds_total", _labels(type="system"),
                _count(st, "system", sample.cpu_cores * dt * 0.15), "counter"))
    out.append(("process_runtime_cpython_cpu_utilization_ratio", {},
                round(sample.cpu_cores / _cores_available(sample), 6), "gauge"))
    out.append(("process_runtime_cpython_thread_count", {}, float(11 + min(10, math.ceil(sample.inflight))), "gauge"))
    rps = _rps(sample)
    # gen0 runs every 700 net allocations; the handler allocates a few hundred objects a call.
    st.setdefault("objects", 61_000.0)  # module imports and gRPC server start-up
    gen0 = _count(st, "objects", rps * 450 * dt + 20 * dt) // 700
    counts = (gen0, gen0 // 10, gen0 // 100)
    for gen, n in enumerate(counts):
        out.append(("process_runtime_cpython_gc_count_bytes_total", _labels(count=str(gen)), float(n), "counter"))
        out.append(("cpython_gc_collections_total", _labels(cpython_gc_generation=str(gen)), float(n), "counter"))
    out.append(("process_runtime_cpython_context_switches_total", _labels(type="voluntary"),
                float(int(_count(st, "vcs", rps * 6 * dt + 10 * dt))), "counter"))
    out.append(("process_runtime_cpython_context_switches_total", _labels(type="involuntary"),
                float(int(_count(st, "ics", sample.cpu_cores * 40 * dt))), "counter"))
    return out


# ----------------------------------------------------------------------------------------- Go
def _go_limit(sample: RuntimeSample) -> float:
    raw = sample.env.get("GOMEMLIMIT", "")
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "B": 1}
    for suffix, factor in units.items():
        if raw.endswith(suffix) and raw[: -len(suffix)].isdigit():
            return float(int(raw[: -len(suffix)]) * factor)
    return float(2**63 - 1)  # math.MaxInt64: no limit set


def go(sample: RuntimeSample) -> list[RuntimeRow]:
    st, dt, out = sample.state, sample.dt, []
    rps = _rps(sample)
    used = max(3 * MIB, sample.memory_bytes * 0.55)
    stack = float(int(min(used * 0.1, 2 * MIB + sample.inflight * 8192)))
    out.append(("go_memory_used_bytes", _labels(go_memory_type="stack"), stack, "gauge"))
    out.append(("go_memory_used_bytes", _labels(go_memory_type="other"), float(int(used - stack)), "gauge"))
    out.append(("go_memory_limit_bytes", {}, _go_limit(sample), "gauge"))
    st.setdefault("alloc", 9.0 * MIB)  # start-up: config, gRPC server, exporters
    allocated = _count(st, "alloc", rps * 24 * 1024 * dt + 16 * 1024 * dt)
    out.append(("go_memory_allocated_bytes_total", {}, float(int(allocated)), "counter"))
    out.append(("go_memory_allocations_total", {}, float(int(allocated / 96)), "counter"))
    out.append(("go_memory_gc_goal_bytes", {}, float(int(min(_go_limit(sample), used * 2))), "gauge"))
    out.append(("go_goroutine_count", {}, float(14 + math.ceil(sample.inflight)), "gauge"))
    out.append(("go_processor_limit", {}, float(_cores_available(sample)), "gauge"))
    out.append(("go_config_gogc_percent", {}, 100.0, "gauge"))
    return out


LANGUAGE_FNS = {"jvm": jvm, "dotnet": dotnet, "node": node, "python": python, "go": go}
FAMILIES = (
    Family("jvm_memory_used_bytes", "gauge", "Measure of memory used."),
    Family("jvm_memory_committed_bytes", "gauge", "Measure of memory committed."),
    Family("jvm_memory_limit_bytes", "gauge", "Measure of max obtainable memory."),
    Family("jvm_gc_duration_seconds", "histogram", "Duration of JVM garbage collection actions."),
    Family("jvm_thread_count", "gauge", "Number of executing platform threads."),
    Family("jvm_cpu_recent_utilization_ratio", "gauge", "Recent CPU utilization for the process as reported by "
                                                        "the JVM."),
    Family("dotnet_gc_collections_total", "counter", "The number of garbage collections that have occurred since "
                                                     "the process has started."),
    Family("dotnet_thread_pool_queue_length", "gauge", "The number of work items that are currently queued to be "
                                                       "processed by the thread pool."),
    Family("dotnet_thread_pool_thread_count", "gauge", "The number of thread pool threads that currently exist."),
    Family("nodejs_eventloop_delay_p99_seconds", "gauge", "Event loop 99 percentile delay."),
    Family("nodejs_eventloop_utilization_ratio", "gauge", "Event loop utilization."),
    Family("v8js_memory_heap_used_bytes", "gauge", "Heap Memory size allocated."),
    Family("v8js_gc_duration_seconds", "histogram", "Garbage collection duration."),
    Family("process_runtime_cpython_memory_bytes", "gauge", "Runtime cpython memory"),
    Family("process_runtime_cpython_cpu_time_seconds_total", "counter", "Runtime cpython CPU time"),
    Family("process_runtime_cpython_gc_count_bytes_total", "counter", "Runtime cpython GC count"),
    Family("go_memory_used_bytes", "gauge", "Memory used by the Go runtime."),
    Family("go_goroutine_count", "gauge", "Count of live goroutines."),
)


def register(prefix: str) -> None:
    """Register each instrumented service's runtime under its program name (`prefix + service`)."""
    for service, language in RUNTIMES.items():
        register_runtime_metrics(prefix + service, LANGUAGE_FNS[language], FAMILIES,
                                 service_namespace=SERVICE_NAMESPACE, service_version=SERVICE_VERSION)


__all__ = ["RUNTIMES", "SERVICE_NAMESPACE", "register"]
