"""The fluid data plane: request rates flowing through the running programs every tick.

Per tick (order 85, after the kubelet and the endpoints controller have settled the tick's pods):

1. *Demand*: the workloads' entry rates are routed (DNS → Service → endpoints → policy → chaos →
   listening process) to the programs serving them; programs are processed callers-first, each
   serves what its CPU share allows (backlog carried), and the requests it serves issue their
   downstream calls, multiplied by the attempts the caller's retry policy made last tick. Calls
   carry their caller's timeout: queued work whose caller gave up is discarded cheaply
   (`queueing.serve`), as a gRPC server does with a call whose deadline passed.
2. *Outcomes*: callees-first, each operation's success probability and latency distribution
   (`d + Exp(m)`) is computed from its own service and waiting time and its calls' outcomes —
   connection errors, the callee's result, timeouts (P(latency > timeout)), retries.
3. *Telemetry*: entry statistics, span-metric counters, app metrics, rate-limited error logs in
   each program's own format, and a few exemplar traces (`exemplars.py`).

Everything the engine reads a program's behaviour from is what the process read at start (its
env, flags and mounted config), so a fault is a Kubernetes write and the symptoms follow.
Exposed as `twin.services.dataplane` (see the methods under "public API").
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from sregym.twin.controller import Controller, controller
from sregym.twin.dataplane import jvm_rules, log_channel
from sregym.twin.dataplane.backends import StoreRequest, ask
from sregym.twin.dataplane.client_clock import client_now
from sregym.twin.dataplane.codepaths import Branch, branch, busy_cores, extra_cpu_ms
from sregym.twin.dataplane.connect import ConnectResult, Route, Router, router_of
from sregym.twin.dataplane.consumers import consumer_metrics, leave_groups, poll_consumers
from sregym.twin.dataplane.envoy import filter_cpu_ms, route_dependency
from sregym.twin.dataplane.errortexts import (
    client_error,
    deadline_error,
    propagated_error,
    retryable,
    store_timeout_error,
    unimplemented_error,
)
from sregym.twin.dataplane.exemplars import sample_exemplars
from sregym.twin.dataplane.flag_client import FlagRuntime
from sregym.twin.dataplane.gc import LIVE_SHARE_OF_BASE, gc_load, go_gc_of, go_metric_rows
from sregym.twin.dataplane.grpc_health import probe_status
from sregym.twin.dataplane.http import http_request
from sregym.twin.dataplane.logformat import format_log
from sregym.twin.dataplane.pools import PoolResult, PoolState, cancelled_read_error, checkout_timeout_error
from sregym.twin.dataplane.pools import step as step_pool
from sregym.twin.dataplane.producer_records import log_publishes
from sregym.twin.dataplane.programs import DependencyConfig, ProgramInstance, render
from sregym.twin.dataplane.queueing import (
    exceed,
    quantile,
    serve,
    truncated_mean,
)
from sregym.twin.dataplane.span_shares import BucketShares
from sregym.twin.dataplane.spec import RPC_KINDS, Call, Operation, http_route
from sregym.twin.dataplane.state import EdgeResult, EntryStats, EntryTick, OpResult, Proc, match_operation
from sregym.twin.dataplane.tcp_loss import probe_loss, tcp_of
from sregym.twin.dataplane.tls_validity import handshake
from sregym.twin.dataplane.workload import Workload, WorkloadSpec
from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import cpu_cores
from sregym.twin.node.logs import log_store
from sregym.twin.node.runtime import runtime_of

# What a client reads when chaos-tproxy drops the connection after taking its request (HTTPChaos abort).
ABORTED = ConnectResult(ok=False, error="reset", message="read: connection reset by peer", stage="chaos")

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SPAN_BUCKETS_MS = (2, 4, 6, 8, 10, 50, 100, 200, 400, 800, 1000, 1400, 2000, 5000, 10000, 15000)
ENTRY_HISTORY_S = 3600
MIB = 1 << 20
ALLOC_MIB_PER_REQUEST = 0.0625  # heap a Go handler allocates per request (protobuf, BSON, buffers)
GC_PAUSE_S = 0.0002  # stop-the-world time per GC cycle (two short pauses)


@controller
class DataPlaneEngine(Controller):
    name = "dataplane"
    order = 85
    user = "system:serviceaccount:sregym-system:dataplane"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        # This tick's extra CPU (ms/s) an Envoy's request filters spend, per process and operation.
        self.filter_ms: dict[tuple[str, str, str], dict[str, float]] = {}
        self.router: Router = router_of(twin)
        self.runtime = runtime_of(twin)
        self.logs = log_store(twin)
        self.tcp = tcp_of(twin)
        self.instances: dict[tuple[str, str, str], ProgramInstance] = {}
        self.procs: dict[tuple[str, str, str], Proc] = {}
        self.workloads: dict[str, Workload] = {}
        self.entry: dict[str, list[EntryTick]] = defaultdict(list)
        self.span_calls: dict[tuple[str, str, str, str], float] = defaultdict(float)
        self.span_hist: dict[tuple[str, str, str, str], list[float]] = {}
        self.span_sum: dict[tuple[str, str, str, str], float] = defaultdict(float)
        # span_metrics(): the sorted span keys (and how many there were), label sets per key
        self._span_order: tuple[int, list[tuple[str, str, str, str]]] = (-1, [])
        self._span_labels: dict[tuple[str, str, str, str], SpanLabelSets] = {}
        self.store_rates: dict[str, float] = defaultdict(float)  # datastore pod uid -> req/s this tick
        self._store_cpu: dict[str, tuple[float, float]] = {}
        self._by_addr: dict[tuple[str, int], Proc] = {}
        self._error_budget: dict[tuple[tuple[str, str, str], str], list[float]] = {}
        self._store_cache: dict[tuple[Any, ...], Any] = {}
        self.exemplars_per_tick = 2
        self.span_credit = 0.0
        self._bucket_shares = BucketShares(SPAN_BUCKETS_MS)
        self._order_cache: tuple[Any, list[tuple[str, str, str]]] | None = None
        self._edge_reads_self = False  # set by `_edge` when a call reaches its own process
        self.flags = FlagRuntime()  # flagd processes and what each program's SDK evaluates
        twin.services.dataplane = self
        if twin.services.traces is None:
            twin.services.traces = _trace_store()
        self._hooked = False  # the usage hook is added with the first program (it makes the kubelet
        # re-check memory-limited pods every tick, a cost clusters without programs should not pay)

    # ================================================================ public API
    def attach(self, inst: ProgramInstance) -> None:
        """A program process started serving (called by the program itself)."""
        self.instances[inst.key] = inst
        if not self._hooked:
            self._hooked = True
            self.runtime.add_usage_hook(self._usage)
        old = self.procs.get(inst.key)
        if old is None or old.inst is not inst:
            self.procs[inst.key] = Proc(inst)

    def detach(self, inst: ProgramInstance, clean: bool = False) -> None:
        """The program's process ended; on a `clean` shutdown (a SIGTERM it handles) its
        consumers that close their client leave their groups first."""
        if clean and inst.key in self.procs and self.procs[inst.key].inst is inst:
            leave_groups(self, self.procs[inst.key])
        if self.instances.get(inst.key) is inst:
            del self.instances[inst.key]
            self.procs.pop(inst.key, None)

    def connect(self, src_pod: dict[str, Any] | None, host: str, port: int, *, protocol: str = "TCP",
                connect_timeout_ms: float = 10_000.0) -> ConnectResult:
        return self.router.connect(src_pod, host, int(port), protocol=protocol,
                                   connect_timeout_ms=connect_timeout_ms)

    def route(self, src_pod: dict[str, Any] | None, host: str, port: int, **kw: Any) -> Route:
        return self.router.route(src_pod, host, int(port), **kw)

    def http_request(self, src_pod: dict[str, Any] | None, url: str, method: str = "GET",
                     headers: dict[str, str] | None = None, body: str | None = None,
                     timeout_ms: float = 10_000.0) -> Any:
        return http_request(self, src_pod, url, method=method, headers=headers, body=body, timeout_ms=timeout_ms)

    def add_workload(self, spec: WorkloadSpec) -> Workload:
        workload = Workload(spec, self.twin.clock.now)
        self.workloads[spec.name] = workload
        return workload

    def remove_workload(self, name: str) -> None:
        self.workloads.pop(name, None)

    def set_load(self, app: str, multiplier: float) -> None:
        self.workloads[app].multiplier = float(multiplier)

    def burst(self, app: str, multiplier: float, seconds: float) -> None:
        now = self.twin.clock.now
        self.workloads[app].bursts.append((now, now + seconds, float(multiplier)))

    def proc_at(self, ip: str, port: int) -> Proc | None:
        return self._by_addr.get((ip, int(port)))

    def probe_latency_ms(self, ip: str, port: int) -> float:
        """The probe hook (`twin.probes.server_latency_ms`): how long a health request to the
        program at ip:port waits now (its queueing delay behind user requests), in ms."""
        proc = self._by_addr.get((ip, int(port)))
        if proc is None or proc.serve_result is None:
            return 0.0
        return float(proc.serve_result.wait_ms)

    def grpc_health_status(self, ip: str, port: int) -> str | None:
        """The probe hook for gRPC health checks (dataplane/grpc_health.py)."""
        return probe_status(self, ip, port)

    def cfs_counters(self, namespace: str, pod: str, container: str) -> tuple[float, float, float]:
        """Cumulative (periods, throttled periods, throttled seconds) of the container's cgroup."""
        proc = self.procs.get((namespace, pod, container))
        if proc is not None and self._alive(proc.inst):
            q = proc.queue
            return q.periods, q.throttled_periods, q.throttled_seconds
        instance = self.runtime.instance(namespace, pod, container)
        pod_obj = self.twin.store.peek("Pod", namespace, pod)
        if instance is None or not instance.running or pod_obj is None:
            return 0.0, 0.0, 0.0
        spec = next((c for c in (pod_obj.get("spec") or {}).get("containers") or [] if c.get("name") == container), {})
        if not get_path(spec, "resources", "limits", "cpu"):
            return 0.0, 0.0, 0.0
        return (self.twin.clock.now - instance.started_at) * 10.0, 0.0, 0.0

    def entry_stats(self, window_s: float = 60.0, app: str | None = None) -> EntryStats:
        """Success ratio and latency at the entry points over the last `window_s` seconds."""
        since = self.twin.clock.now - window_s
        ticks = [t for name in sorted(self.entry) if app is None or name == app
                 for t in self.entry[name] if t.at > since]
        requests = sum(t.rate for t in ticks) * self.twin.clock.tick
        ok = sum(t.success for t in ticks) * self.twin.clock.tick
        components = [c for t in ticks for c in t.components]
        return EntryStats(requests=requests, success_ratio=ok / requests if requests > 0 else 1.0,
                          p95_ms=quantile(components, 0.95), p50_ms=quantile(components, 0.5),
                          rps=requests / window_s if window_s > 0 else 0.0)

    def entry_stats_between(self, start: float, end: float) -> EntryStats:
        """`entry_stats` over the simulated interval (start, end] instead of the trailing window
        (for a record of the SLO through an attempt, read after it; history is ENTRY_HISTORY_S)."""
        ticks = [t for name in sorted(self.entry) for t in self.entry[name] if start < t.at <= end]
        requests = sum(t.rate for t in ticks) * self.twin.clock.tick
        ok = sum(t.success for t in ticks) * self.twin.clock.tick
        components = [c for t in ticks for c in t.components]
        span = end - start
        return EntryStats(requests=requests, success_ratio=ok / requests if requests > 0 else 1.0,
                          p95_ms=quantile(components, 0.95), p50_ms=quantile(components, 0.5),
                          rps=requests / span if span > 0 else 0.0)

    def span_metrics(self) -> list[tuple[str, dict[str, str], float, str]]:
        """Cumulative span-metric samples: (name, labels, value, type). The label dicts are built
        once per span key and returned again every scrape (the collector caches series by them;
        do not mutate them), and keys are sorted again only when a new one appeared (keys are
        never removed)."""
        out: list[tuple[str, dict[str, str], float, str]] = []
        append = out.append
        calls, hists, sums = self.span_calls, self.span_hist, self.span_sum
        if self._span_order[0] != len(calls):
            self._span_order = (len(calls), sorted(calls))
        shapes = self._span_labels
        for key in self._span_order[1]:
            shape = shapes.get(key)
            if shape is None:
                shape = shapes[key] = _span_label_sets(key)
            labels, buckets, inf = shape
            count = calls[key]
            append(("traces_span_metrics_calls_total", labels, count, "counter"))
            hist = hists.get(key)
            if hist is not None:
                for bucket_labels, value in zip(buckets, hist, strict=False):
                    append(("traces_span_metrics_duration_milliseconds_bucket", bucket_labels, value, "counter"))
                append(("traces_span_metrics_duration_milliseconds_bucket", inf, count, "counter"))
                append(("traces_span_metrics_duration_milliseconds_sum", labels, sums[key], "counter"))
                append(("traces_span_metrics_duration_milliseconds_count", labels, count, "counter"))
        return out

    def span_metric_groups(self) -> list[tuple[tuple[str, str, str, str], SpanLabelSets, float,
                                                list[float] | None, float | None]]:
        """What `span_metrics` returns, grouped per span key in the same order: (key, its label
        sets, calls, histogram or None, sum or None). The span-metrics exporter reads this so it
        can keep one list of series refs per key instead of handling a row per sample."""
        calls, hists, sums = self.span_calls, self.span_hist, self.span_sum
        if self._span_order[0] != len(calls):
            self._span_order = (len(calls), sorted(calls))
        shapes = self._span_labels
        out = []
        for key in self._span_order[1]:
            shape = shapes.get(key)
            if shape is None:
                shape = shapes[key] = _span_label_sets(key)
            hist = hists.get(key)
            out.append((key, shape, calls[key], hist, sums[key] if hist is not None else None))
        return out

    def app_metrics(self) -> list[tuple[str, dict[str, str], float, str]]:
        """Per-process application metrics: (name, labels, value, type)."""
        out: list[tuple[str, dict[str, str], float, str]] = []
        for key in sorted(self.procs):
            proc = self.procs[key]
            if not self._alive(proc.inst):
                continue
            ns, pod, container = key
            labels = {"namespace": ns, "pod": pod, "container": container, "service": proc.inst.spec.trace_name}
            cost = self._mean_cost(proc)
            out.append(("app_queue_depth", labels, proc.queue.backlog_ms / cost if cost else 0.0, "gauge"))
            out.append(("app_inflight_requests", labels, proc.inflight, "gauge"))
            out.append(("app_requests_total", labels, proc.requests_total, "counter"))
            out.append(("app_request_errors_total", labels, proc.errors_total, "counter"))
            out.append(("app_client_retries_total", labels, proc.retries_total, "counter"))
            out.append(("app_requests_deadline_exceeded_total", labels, proc.cancelled_total, "counter"))
            out.append(("app_cpu_utilisation_ratio", labels,
                        proc.serve_result.utilisation if proc.serve_result else 0.0, "gauge"))
            if proc.inst.spec.go_runtime and proc.gc_config is not None:
                out.extend(go_metric_rows(labels, proc.gc_config, proc.gc, proc.gc_cycles_total,
                                          proc.gc_cpu_seconds_total, GC_PAUSE_S))
            for (op, call_id), (_ok, hit) in sorted(proc.cond.items()):
                out.append(("app_cache_hit_ratio", {**labels, "operation": op, "cache": call_id}, hit, "gauge"))
        out.extend(consumer_metrics(self))
        return out

    # ================================================================ the tick
    def reconcile(self) -> None:
        now = self.twin.clock.now
        dt = self.twin.clock.tick
        probe_loss(self.twin)
        self._refresh()
        if not self.procs and not self.workloads:
            return
        self.flags.update(self)
        self.store_rates = defaultdict(float)
        self._store_cache.clear()
        order = self._order()
        demand: dict[tuple[str, str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
        entry_flows = self._entry_demand(demand, now)
        poll_consumers(self, demand, dt)
        grants = self._allocate()
        for key in order:
            proc = self.procs[key]
            self._serve(proc, demand.get(key, {}), grants.get(key, 1.0), dt)
            self._emit_calls(proc, demand)
        for key in reversed(order):
            self._outcomes(self.procs[key], dt, now)
        self._entry_outcomes(entry_flows, now, dt)
        sample_exemplars(self, entry_flows, now)
        log_publishes(self)

    # ---------------------------------------------------------------- bookkeeping
    def _alive(self, inst: ProgramInstance) -> bool:
        instance = self.runtime.instance(inst.namespace, inst.pod, inst.container)
        return instance is not None and instance.running and instance.ctx is inst.ctx

    def _refresh(self) -> None:
        for key in [k for k, inst in self.instances.items() if not self._alive(inst)]:
            del self.instances[key]
            self.procs.pop(key, None)
        self._by_addr.clear()
        for key in sorted(self.procs):
            proc = self.procs[key]
            pod_rt = self.runtime.pod(key[0], key[1])
            if pod_rt is None:
                continue
            proc.pod_ip, proc.node = pod_rt.ip, pod_rt.node
            pod = self.twin.store.peek("Pod", key[0], key[1])
            proc.pod_obj = pod
            container = next((c for c in ((pod or {}).get("spec") or {}).get("containers") or []
                              if c.get("name") == key[2]), {})
            limit = get_path(container, "resources", "limits", "cpu")
            request = get_path(container, "resources", "requests", "cpu") or limit
            proc.limit = cpu_cores(limit) if limit else None
            proc.request = cpu_cores(request) if request else 0.002
            self._by_addr[(pod_rt.ip, proc.inst.port)] = proc
            if proc.inst.tls_port:
                self._by_addr[(pod_rt.ip, proc.inst.tls_port)] = proc

    def _pod(self, proc: Proc) -> dict[str, Any] | None:
        return proc.pod_obj

    def _order(self) -> list[tuple[str, str, str]]:
        """Callers before callees (DFS post-order over current routes; cycles broken by key).
        Recomputed only when routing inputs or the set of processes changed."""
        signature = (self.router.version, tuple((k, id(p.inst), p.pod_ip) for k, p in sorted(self.procs.items())))
        if self._order_cache is not None and self._order_cache[0] == signature:
            return self._order_cache[1]
        order = self._compute_order()
        self._order_cache = (signature, order)
        return order

    def _compute_order(self) -> list[tuple[str, str, str]]:
        edges: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {}
        for key in sorted(self.procs):
            proc = self.procs[key]
            pod = self._pod(proc)
            targets: set[tuple[str, str, str]] = set()
            for dep in proc.inst.deps.values():
                if dep.kind not in RPC_KINDS:
                    continue
                route = self.router.route(pod, dep.host, dep.port, connect_timeout_ms=dep.timeout_ms)
                for leg in route.legs:
                    if leg.result.ok:
                        callee = self._by_addr.get((leg.result.dst_ip, leg.result.target_port))
                        if callee is not None:
                            targets.add(callee.inst.key)
            edges[key] = sorted(targets)
        seen: set[tuple[str, str, str]] = set()
        post: list[tuple[str, str, str]] = []
        for root in sorted(edges):
            if root in seen:
                continue
            stack = [(root, iter(edges[root]))]
            seen.add(root)
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    post.append(node)
                elif nxt not in seen and nxt in edges:
                    seen.add(nxt)
                    stack.append((nxt, iter(edges[nxt])))
        post.reverse()
        return post

    def _allocate(self) -> dict[tuple[str, str, str], float]:
        """CPU per process from last tick's demand: CFS shares (cpu requests) when a node is
        contended (water-filling), otherwise whatever the others leave free; capped by limits."""
        by_node: dict[str, list[Proc]] = defaultdict(list)
        for key in sorted(self.procs):
            by_node[self.procs[key].node].append(self.procs[key])
        grants: dict[tuple[str, str, str], float] = {}
        for node, procs in sorted(by_node.items()):
            capacity = self._node_cores(node)
            demand = {p.inst.key: min(max(p.demand_cores, 0.01), p.limit or capacity, capacity) for p in procs}
            total = sum(demand.values())
            if total <= capacity:
                for p in procs:
                    free = capacity - (total - demand[p.inst.key])
                    grants[p.inst.key] = min(p.limit or free, free)
                continue
            remaining, open_set = capacity, {p.inst.key: max(p.request, 0.002) for p in procs}
            granted: dict[tuple[str, str, str], float] = {}
            while open_set and remaining > 1e-9:
                weight = sum(open_set.values())
                satisfied = [k for k, w in open_set.items() if demand[k] <= remaining * w / weight]
                if not satisfied:
                    for k, w in open_set.items():
                        granted[k] = remaining * w / weight
                    remaining = 0.0
                    break
                for k in satisfied:
                    granted[k] = demand[k]
                    remaining -= demand[k]
                    del open_set[k]
            for p in procs:
                grants[p.inst.key] = max(granted.get(p.inst.key, 0.0), 0.01)
        return grants

    def _node_cores(self, node: str) -> float:
        obj = self.twin.store.peek("Node", None, node)
        value = get_path(obj or {}, "status", "allocatable", "cpu")
        return cpu_cores(value) if value else 4.0

    def _mean_cost(self, proc: Proc) -> float:
        ops = proc.inst.spec.operations
        if not ops:
            return 1.0
        total = sum(proc.arrivals.get(op.key, 0.0) for op in ops)
        if total <= 0:
            return sum(op.cpu_ms * op.weight for op in ops) / sum(op.weight for op in ops) * proc.gc.cost_factor
        settings = proc.inst.settings
        # A branch's extra CPU (a flag's forced GC, a cache miss) is part of what a request costs:
        # leaving it out counted each request's extra work as more requests served.
        work = sum((op.cpu_ms + extra_cpu_ms(op.paths, settings)) * proc.arrivals.get(op.key, 0.0) for op in ops)
        filtered = self.filter_ms.get(proc.inst.key)
        if filtered:  # what an Envoy's request filters spent on these requests
            work += sum(filtered.values())
        return work / total * proc.gc.cost_factor

    # ---------------------------------------------------------------- demand
    def _entry_demand(self, demand: dict[Any, dict[str, float]], now: float) -> list[dict[str, Any]]:
        flows: list[dict[str, Any]] = []
        self.filter_ms = {}
        for name in sorted(self.workloads):
            workload = self.workloads[name]
            rate = workload.rate(now)
            runs, src = workload.source_pod(self.twin)
            host, port = workload.spec.host_port
            flow: dict[str, Any] = {"name": name, "rate": rate if runs else 0.0, "workload": workload, "legs": [],
                                    "src": src}
            if runs and rate > 0:
                route = self.router.route(src, host, port, connect_timeout_ms=workload.spec.timeout_ms)
                total_weight = sum(m.weight for m in workload.spec.mix)
                for leg in route.legs:
                    proc = self._by_addr.get((leg.result.dst_ip, leg.result.target_port)) if leg.result.ok else None
                    if proc is not None and workload.spec.scheme == "https":
                        leg, proc = handshake(leg, proc, workload.spec, client_now(self.twin, src, now))
                    flow["legs"].append((leg, proc))
                    if proc is None:
                        continue
                    for mix in workload.spec.mix:
                        op = match_operation(proc, mix.operation, mix.method)
                        share = rate * leg.fraction * (1.0 - leg.loss) * mix.weight / total_weight
                        demand[proc.inst.key][op.key if op else mix.operation] += share
                        extra = filter_cpu_ms(proc, mix.operation)
                        if extra > 0:
                            per_op = self.filter_ms.setdefault(proc.inst.key, {})
                            op_key = op.key if op else mix.operation
                            per_op[op_key] = per_op.get(op_key, 0.0) + share * extra
            flows.append(flow)
        return flows

    def _serve(self, proc: Proc, arrivals: dict[str, float], granted: float, dt: float) -> None:
        spec = proc.inst.spec
        proc.arrivals = dict(arrivals)
        settings = proc.inst.settings
        factor = self._gc_update(proc, dt)
        costs = {op.key: (op.cpu_ms + extra_cpu_ms(op.paths, settings)) * factor for op in spec.operations}
        work = sum(rate * costs.get(op, 1.0) for op, rate in arrivals.items()) * dt
        filtered = self.filter_ms.get(proc.inst.key)
        if filtered:
            work += sum(filtered.values()) * factor * dt
        chaos = self.twin.services.chaos
        proc.jvm_rules = chaos.jvm(*proc.inst.key) if hasattr(chaos, "jvm") and chaos.active("JVMChaos") else []
        busy = busy_cores(spec.paths, settings) + jvm_rules.busy_cores(proc.jvm_rules)
        cores = max(0.02, granted - busy) if busy else granted
        if chaos is not None and hasattr(chaos, "stress"):
            pod = self._pod(proc)
            if pod is not None:
                stress = chaos.stress(pod)
                stress_cores = float(stress[0]) if stress else 0.0
                if stress_cores > 0:
                    cores = max(0.02, cores - stress_cores * (cores / max(cores + stress_cores, 1e-6)))
        proc.cores = cores
        proc.demand_cores = (proc.queue.backlog_ms + work) / (1000.0 * dt)
        total_rate = sum(arrivals.values())
        cost = self._mean_cost(proc)
        result = serve(proc.queue, work, cores, dt, limit=proc.limit, mean_cost_ms=cost,
                       max_queue_s=spec.max_queue_seconds,
                       deadlines=proc.deadlines if proc.deadlines_at == self.twin.clock.now else None,
                       rate=total_rate)
        proc.serve_result = result
        proc.cpu_used = result.cores_used
        proc.cancelled_total += result.cancelled
        proc.served_rps = result.served_ms / max(cost, 1e-6) / dt if work > 0 else 0.0
        proc.requests_total += proc.served_rps * dt
        scale = proc.served_rps / total_rate if total_rate > 0 else 0.0
        proc.served = {op: rate * scale for op, rate in arrivals.items()}
        totals = proc.served_total
        for op, rate in proc.served.items():
            totals[op] = totals.get(op, 0.0) + rate * dt
        self.flags.leaks.add(proc.inst, proc.served, dt)
        prev_latency = sum(r.mean * arrivals.get(op, 0.0) for op, r in proc.results.items()) / total_rate \
            if total_rate > 0 else 0.0
        # Calls whose deadline passed are in flight too, until discarded.
        proc.inflight = (proc.queue.backlog_ms / cost + proc.queue.abandoned
                         + total_rate * prev_latency / 1000.0) if cost else 0.0

    def _gc_update(self, proc: Proc, dt: float) -> float:
        """A Go process' GC cost this tick from its live heap as of last tick (dataplane/gc.py);
        counts its GC cycles and CPU for /metrics. 1.0 for any other program."""
        if not proc.inst.spec.go_runtime:
            return 1.0
        if proc.gc_config is None:
            proc.gc_config = go_gc_of(getattr(proc.inst.ctx, "env", None) or {})
        live = proc.inst.spec.memory.base_mib * LIVE_SHARE_OF_BASE + self._extra_mib(proc)
        load = proc.gc = gc_load(proc.gc_config, live)
        headroom = load.goal_mib - load.live_mib
        if headroom > 0 and headroom != float("inf"):
            proc.gc_cycles_total += proc.served_rps * ALLOC_MIB_PER_REQUEST / headroom * dt
        proc.gc_cpu_seconds_total += proc.cpu_used * load.gc_fraction * dt
        return load.cost_factor

    def _extra_mib(self, proc: Proc) -> float:
        """The working set a process holds beyond its idle size (MiB): requests in flight, their
        rate, leaks — heap, for a Go program."""
        mem = proc.inst.spec.memory
        uptime_min = max(0.0, self.twin.clock.now - proc.inst.started_at) / 60.0
        extra = (mem.per_inflight_mib * proc.inflight + mem.per_rps_mib * proc.served_rps
                 + proc.inst.leak_mib_per_min * uptime_min
                 + proc.inst.leak_kib_per_request * proc.requests_total / 1024.0)
        return extra + self.flags.leaks.mib(proc.inst)

    def _emit_calls(self, proc: Proc, demand: dict[Any, dict[str, float]]) -> None:
        pod = self._pod(proc)
        now = self.twin.clock.now
        proc.pool_demand.clear()
        for op in proc.inst.spec.operations:
            served = proc.served.get(op.key, 0.0)
            if served <= 0:
                continue
            qs, oks = _call_lists(proc, op)
            clean = True  # no earlier required call failed last tick
            for index, call in enumerate(op.calls):
                if clean and call.when is None and call.feature is None:
                    q = made = call.probability
                else:
                    q, made = self._plan(proc, op, index, {}, qs, oks)
                qs[index] = q
                if clean and not call.optional and oks[index] < 1.0:
                    clean = False
                dep = proc.inst.deps.get(call.dependency)
                if dep is None:
                    continue
                dep = route_dependency(proc, op, dep)
                rate = served * made * call.count
                attempts = proc.attempts.get((call.dependency, call.operation), 1.0)
                rate *= proc.delivered.get((call.dependency, call.operation), attempts)
                proc.retries_total += served * made * call.count * max(0.0, attempts - 1.0) * self.twin.clock.tick
                if rate <= 0:
                    continue
                route = self.router.route(pod, dep.host, dep.port, connect_timeout_ms=dep.timeout_ms)
                for leg in route.legs:
                    if not leg.result.ok:
                        continue
                    self.tcp.flow(pod, leg.result.dst_pod, rate * leg.fraction, leg.effect, self.twin.clock.tick)
                    share = rate * leg.fraction * (1.0 - leg.loss)
                    callee = self._by_addr.get((leg.result.dst_ip, leg.result.target_port))
                    if callee is not None and dep.kind in RPC_KINDS:
                        # "POST /get-quote" or a concrete path arrives as the operation it matches.
                        matched = match_operation(callee, call.operation, None) if dep.kind == "http" else None
                        demand[callee.inst.key][matched.key if matched else call.operation] += share
                        # gRPC sends its deadline with the call; an HTTP client that times out
                        # closes the connection: either way the server's context is cancelled.
                        rates = callee.deadlines
                        if callee.deadlines_at != now:
                            rates.clear()
                            callee.deadlines_at = now
                        rates[dep.timeout_ms] = rates.get(dep.timeout_ms, 0.0) + share
                    elif leg.result.dst_pod is not None:
                        uid = leg.result.dst_pod["metadata"].get("uid", "")
                        self.store_rates[uid] += share
                        if dep.pool_size:
                            proc.pool_demand[dep.name] = proc.pool_demand.get(dep.name, 0.0) + share

    def _plan(self, proc: Proc, op: Operation, index: int, states: dict[str, tuple[float, float]],
              qs: list[float], oks: list[float]) -> tuple[float, float]:
        """(q, made) for call `index` of `op`: q = P(the call is made | the handler got to it),
        made = P(the call is made) per request.

        A sequential handler returns at its first failed required call (`if err != nil { return
        err }`), so later calls are made only for the requests whose earlier required calls
        succeeded — in particular a cache-aside fill follows only the reads that returned
        something. `states` are this tick's (ok, hit) of call ids (else last tick's), `qs` the q of
        the earlier calls, `oks` their success (this tick's as far as known, else last tick's);
        only the entries before `index` are read."""
        call = op.calls[index]
        if call.feature is not None and not call.feature_enabled(proc.inst.settings):
            return 0.0, 0.0
        sequential = not op.parallel
        ref_index = -1
        ref_ok = 1.0
        if call.when is None:
            guard = 1.0
        else:
            kind, _, ref = call.when.partition(":")
            ok, hit = states.get(ref) or proc.cond.get((op.key, ref)) or (1.0, self._default_hit(proc, op, ref))
            ref_index = next((j for j in range(index) if op.calls[j].id == ref), -1)
            if sequential and ref_index >= 0 and not op.calls[ref_index].optional:
                # The handler returned if the call this one depends on failed: of a miss only
                # the real misses remain, no error path runs.
                ref_ok = ok
                guard = {"miss": 1.0 - hit, "hit": hit, "error": 0.0}.get(kind, 1.0)
            else:
                ref_index = -1
                guard = _guard(kind, ok, hit)
        q = call.probability * guard
        if not sequential or q <= 0.0:
            return q, q * ref_ok
        reach = ref_ok
        for j in range(index):
            prev = op.calls[j]
            if prev.optional or j == ref_index or oks[j] >= 1.0:
                continue
            if prev.when is not None and prev.when == call.when:
                p_made = prev.probability if qs[j] > 0 else 0.0  # same branch: its guard holds too
            elif prev.when is not None and _exclusive(prev.when, call.when):
                continue
            else:
                p_made = qs[j]  # unconditional, or a guard independent of this one's
            reach *= 1.0 - p_made * (1.0 - oks[j])
        return q, q * reach

    def _default_hit(self, proc: Proc, op: Operation, ref: str) -> float:
        call = next((c for c in op.calls if c.id == ref), None)
        dep = proc.inst.spec.dependency(call.dependency) if call else None
        return dep.hit_ratio if dep else 0.0

    # ---------------------------------------------------------------- outcomes
    def _outcomes(self, proc: Proc, dt: float, now: float) -> None:
        spec = proc.inst.spec
        sr = proc.serve_result
        wait = sr.wait_ms if sr else 0.0
        drop = sr.drop_fraction if sr else 0.0
        throttle = sr.throttle_ratio if sr else 0.0
        limit = proc.limit or 1.0
        penalty = throttle * 100.0 * max(0.0, 1.0 - min(limit, 1.0)) * 0.5
        pod = self._pod(proc)
        # The edge of a (dependency, operation) several of this process' operations call: its
        # outcome this tick depends only on what that key names (the store answer and the pool
        # are per tick already), so it is computed once, unless the call reaches this process
        # itself, whose results change as its operations are settled.
        edges: dict[tuple[str, str, str | None, float, str], EdgeResult] = {}
        for op in spec.operations:
            service = op.cpu_ms * proc.gc.cost_factor + penalty
            result = OpResult(success=1.0 - drop, d=service * 0.6 + wait, m=service * 0.4 + 0.1)
            if drop > 0:
                result.error = {"grpc": "rpc error: code = ResourceExhausted desc = grpc: server overloaded",
                                "thrift": "TTransportException: THRIFT_EAGAIN (timed out)"}.get(
                    spec.protocol, "503 Service Unavailable")
                result.error_class = "unavailable"
            outcomes: dict[str, tuple[float, float]] = {}
            par_d, par_m2 = 0.0, 0.0
            seq_d, seq_m2 = 0.0, 0.0
            worst = 0.0
            arrivals = proc.arrivals.get(op.key, 0.0)
            qs, oks = _call_lists(proc, op)
            clean = True  # no earlier required call failed
            for index, call in enumerate(op.calls):
                dep = proc.inst.deps.get(call.dependency)
                if dep is not None:
                    dep = route_dependency(proc, op, dep)
                if clean and call.when is None and call.feature is None:
                    q = made = call.probability
                else:
                    q, made = self._plan(proc, op, index, outcomes, qs, oks)
                if dep is None:
                    edge = EdgeResult(0.0, 0.1, 0.0, 1.0, error=f"missing address for {call.dependency}",
                                      error_class="refused")
                else:
                    edge_key = (call.dependency, call.operation, call.collection, dep.timeout_ms, dep.client)
                    edge = edges.get(edge_key)  # type: ignore[assignment]
                    if edge is None:
                        self._edge_reads_self = False
                        edge = self._edge(proc, pod, dep, call, arrivals * made * call.count)
                        if not self._edge_reads_self:
                            edges[edge_key] = edge
                if call.id:
                    outcomes[call.id] = (edge.success, edge.hit_ratio)
                proc.attempts[(call.dependency, call.operation)] = edge.attempts
                proc.delivered[(call.dependency, call.operation)] = \
                    edge.attempts if edge.delivered is None else edge.delivered
                s_call = edge.success ** call.count if call.count > 0 else 1.0
                qs[index] = q
                oks[index] = s_call
                if s_call < 1.0 and not call.optional:
                    clean = False
                fail = q * (1.0 - s_call)
                if not call.optional:
                    result.success *= 1.0 - fail
                    if fail > worst and edge.error:
                        worst = fail
                        result.error, result.error_class = edge.error, edge.error_class
                if dep is not None and dep.kind in RPC_KINDS and arrivals > 0:
                    span = call.operation if dep.kind != "http" else "HTTP {} {}".format(*http_route(call.operation))
                    self._record_span(spec.trace_name, span, "SPAN_KIND_CLIENT",
                                      arrivals * made * call.count * edge.attempts * dt,
                                      OpResult(success=edge.success, d=edge.d, m=edge.m))
                if fail > 0 and edge.error and arrivals > 0:
                    self._log_error(proc, op, call, dep, edge.error, arrivals * made * (1.0 - s_call), now)
                d = made * call.count * edge.d
                m2 = (made * call.count * edge.m) ** 2
                if op.parallel:
                    par_d, par_m2 = max(par_d, d), max(par_m2, m2)
                else:
                    seq_d, seq_m2 = seq_d + d, seq_m2 + m2
            result.d += seq_d + par_d
            result.m = math.sqrt(result.m ** 2 + seq_m2 + par_m2)
            taken = branch(op.paths, proc.inst.settings, arrivals) if op.paths else None
            if proc.jvm_rules:
                taken = jvm_rules.merge(taken, jvm_rules.handler_branch(proc.jvm_rules, op.java_methods))
            if taken is not None:
                self._take_branch(proc, op, taken, result, arrivals, now)
            for call in op.calls:
                if call.id and call.id in outcomes:
                    proc.cond[(op.key, call.id)] = outcomes[call.id]
            proc.results[op.key] = result
            if arrivals > 0:
                proc.errors_total += arrivals * (1.0 - result.success) * dt
                self._record_span(spec.trace_name, _span_name(spec.protocol, op), "SPAN_KIND_SERVER",
                                  arrivals * dt, result)
        if sr is not None and sr.cancelled > 0:
            self._record_cancelled(proc, sr.cancelled, sr.wait_ms)

    def _take_branch(self, proc: Proc, op: Operation, taken: Branch, result: OpResult, arrivals: float,
                     now: float) -> None:
        """A code path a setting switched on: its failures, pauses and log lines."""
        result.d += taken.delay_ms
        if taken.fail > 0:
            if taken.fail >= 1.0 - result.success or not result.error:
                result.error, result.error_class = taken.error, taken.error_class
            result.success *= 1.0 - taken.fail
        log = proc.inst.spec.log
        for level, line, share in taken.logs:
            due = self.flags.branch_logs.due((proc.inst.key, line), arrivals * share * self.twin.clock.tick, now,
                                             log.error_burst, log.error_window_s)
            for _ in range(due):
                self._write(proc, now, level, line)

    def _record_cancelled(self, proc: Proc, cancelled: float, wait_ms: float) -> None:
        """Server spans of the calls discarded after their deadline: DeadlineExceeded errors that
        lasted until the caller's deadline (the handler returned at its first context check)."""
        spec = proc.inst.spec
        total = sum(proc.arrivals.get(op.key, 0.0) for op in spec.operations)
        deadline = max(proc.queue.deadlines or (), default=wait_ms)
        res = OpResult(success=0.0, d=min(wait_ms, deadline), m=0.1)
        for op in spec.operations:
            share = proc.arrivals.get(op.key, 0.0) / total if total > 0 else op.weight / \
                sum(o.weight for o in spec.operations)
            self._record_span(spec.trace_name, _span_name(spec.protocol, op), "SPAN_KIND_SERVER",
                              cancelled * share, res)

    def _edge(self, proc: Proc, pod: dict[str, Any] | None, dep: DependencyConfig, call: Call,
              rate: float) -> EdgeResult:
        """Outcome of calling `dep` once (with retries) from this process."""
        if dep.invalid:  # the client rejects the address itself: nothing is dialed, nothing retried
            return EdgeResult(success=0.0, d=0.05, m=0.0, attempts=1.0, error=dep.invalid,
                              error_class="invalid_address", delivered=0.0)
        timeout = dep.timeout_ms
        route = self.router.route(pod, dep.host, dep.port, connect_timeout_ms=timeout)
        p_ok = 0.0
        ok_lat = 0.0
        fail_parts: list[tuple[float, float, str, str]] = []  # (prob, latency, error, class)
        tail = 0.0
        hit = 0.0
        unsent = 0.0  # retryable connection failures: those attempts never reach a server
        for leg in route.legs:
            f = leg.fraction
            res = leg.result
            if not res.ok:
                fail_parts.append((f, min(res.latency_ms, timeout), client_error(dep, call, res), res.error or ""))
                if retryable(dep, res.error or ""):
                    unsent += f
                continue
            rtt = 2 * res.latency_ms  # with the mean retransmission backoff of a lossy path (tcp_loss)
            if leg.loss > 0:
                # Retransmissions that outlast the timeout: the call times out.
                late = deadline_error(dep, call) if dep.kind in RPC_KINDS else store_timeout_error(dep)
                fail_parts.append((f * leg.loss, timeout, late, "timeout"))
                f *= 1.0 - leg.loss
            if dep.kind in RPC_KINDS:
                callee = self._by_addr.get((res.dst_ip, res.target_port))
                if callee is proc:
                    self._edge_reads_self = True
                if callee is None:
                    p_ok += f
                    ok_lat += f * rtt
                    continue
                rewrite = self._http_chaos(callee, dep, call, res) if dep.kind == "http" else None
                if rewrite is not None and rewrite.abort:
                    fail_parts.append((f, rtt, client_error(dep, call, ABORTED), "reset"))
                    continue
                if rewrite is not None:
                    rtt += rewrite.delay_ms
                op_res = callee.results.get(call.operation)
                if op_res is None:
                    op = match_operation(callee, call.operation, None)
                    if op is None:
                        fail_parts.append((f, rtt, unimplemented_error(dep, call), "server_error"))
                        continue
                    op_res = callee.results.get(op.key) or OpResult()
                d, m = op_res.d + rtt, op_res.m
                p_late = exceed(d, m, timeout)
                good = f * op_res.success * (1.0 - p_late)
                p_ok += good
                ok_lat += good * truncated_mean(d, m, timeout)
                tail = max(tail, m)
                if p_late > 0:
                    fail_parts.append((f * p_late, timeout, deadline_error(dep, call), "timeout"))
                bad = f * (1.0 - op_res.success) * (1.0 - p_late)
                if bad > 0:
                    fail_parts.append((bad, min(op_res.mean, timeout), propagated_error(dep, call, op_res),
                                       op_res.error_class or "server_error"))
            else:
                outcome = self._store(proc, pod, dep, call, res, rate * f)
                hit += f * (outcome.hit_ratio or 0.0)
                lat = outcome.latency_ms + rtt
                if dep.pool_size:
                    pool, pooled = self._pool(proc, dep, lat, rtt, timeout)
                    if pooled.timed_out > 0:
                        fail_parts.append((f * pooled.timed_out, pooled.deadline_ms,
                                           checkout_timeout_error(dep.pool_size, pooled.in_use), "timeout"))
                        f *= 1.0 - pooled.timed_out
                    if pooled.late > 0:
                        fail_parts.append((f * pooled.late, pooled.deadline_ms,
                                           cancelled_read_error(dep.host, dep.port, pool.closed_total), "timeout"))
                        f *= 1.0 - pooled.late
                    lat += pooled.wait_ms
                bad = outcome.error_ratio if outcome.error_ratio is not None else (0.0 if outcome.ok else 1.0)
                bad = min(1.0, max(0.0, bad))
                if bad > 0:
                    fail_parts.append((f * bad, min(lat, timeout), outcome.error or "server error",
                                       outcome.error_class or "server_error"))
                if bad < 1.0:
                    p_late = exceed(lat * 0.7, lat * 0.3, timeout)
                    p_ok += f * (1.0 - bad) * (1.0 - p_late)
                    ok_lat += f * (1.0 - bad) * (1.0 - p_late) * min(lat, timeout)
                    if p_late > 0:
                        fail_parts.append((f * (1.0 - bad) * p_late, timeout, store_timeout_error(dep), "timeout"))
        p_fail = sum(p for p, *_ in fail_parts)
        p_retry = sum(p for p, _, _, cls in fail_parts if retryable(dep, cls))
        # Failures that never reached a server: their retries add no load to it (while a callee is
        # down the retries are refused; once it is back, the first attempt finds it).
        retries = dep.retries
        if p_retry >= 1.0 - 1e-9:
            attempts = retries + 1.0
        else:
            attempts = (1.0 - p_retry ** (retries + 1)) / (1.0 - p_retry)
        delivered = attempts
        if p_retry > 0 and unsent > 0:
            delivered = 1.0 + (attempts - 1.0) * max(0.0, 1.0 - unsent / p_retry)
        success = min(1.0, p_ok * attempts)
        fail_lat = sum(p * lat for p, lat, *_ in fail_parts) / p_fail if p_fail > 0 else 0.0
        good_lat = ok_lat / p_ok if p_ok > 0 else 0.0
        mean_lat = (attempts - 1.0) * (fail_lat + dep.backoff_ms) + \
            (success * good_lat + (1.0 - success) * fail_lat)
        error, cls = "", ""
        if fail_parts:
            worst = max(fail_parts, key=lambda part: part[0])
            error, cls = worst[2], worst[3]
        m = tail if success > 0 else 0.0
        return EdgeResult(success=success, d=max(0.0, mean_lat - m * success), m=m * success, attempts=attempts,
                          error=error, error_class=cls, hit_ratio=hit, delivered=delivered)

    def _http_chaos(self, callee: Proc, dep: DependencyConfig, call: Call, res: ConnectResult) -> Any:
        """The HTTPChaos rule chaos-tproxy applies to this call in the callee's pod (an abort drops
        the connection once the request is read; a delay holds it), or None."""
        chaos = self.twin.services.chaos
        if chaos is None or not hasattr(chaos, "http") or not chaos.active("HTTPChaos"):
            return None
        method, path = http_route(call.operation)
        return chaos.http(callee.pod_obj, res.target_port or dep.port, method, path)

    def _pool(self, proc: Proc, dep: DependencyConfig, hold_ms: float, rtt_ms: float,
              timeout_ms: float) -> tuple[PoolState, PoolResult]:
        """The process' connection pool to `dep` this tick (dataplane/pools.py), stepped once per
        tick with every call sent to it. A call's deadline is its own timeout or, sooner, the
        deadline its caller propagated with the request it serves."""
        pool = proc.pools.get(dep.name)
        if pool is None or pool.size != dep.pool_size:
            pool = proc.pools[dep.name] = PoolState(size=dep.pool_size)
        now = self.twin.clock.now
        if pool.at != now or pool.last is None:
            deadline = timeout_ms
            if proc.deadlines_at == now and proc.deadlines:
                deadline = min(deadline, min(proc.deadlines))
            pool.last = step_pool(pool, proc.pool_demand.get(dep.name, 0.0), hold_ms, deadline, self.twin.clock.tick,
                                  rtt_ms=rtt_ms, max_connecting=dep.max_connecting)
            pool.at = now
        return pool, pool.last

    def _store(self, proc: Proc, pod: dict[str, Any] | None, dep: DependencyConfig, call: Call, res: ConnectResult,
               rate: float) -> Any:
        key = (proc.inst.key, dep.name, call.operation, call.collection, res.dst_ip)
        cached = self._store_cache.get(key)
        if cached is not None:
            return cached
        req = StoreRequest(kind=dep.kind, operation=call.operation, database=dep.database,
                           collection=call.collection or "", username=dep.username, password=dep.password,
                           auth_source=dep.auth_source, rate=rate, client=pod, client_app=proc.inst.spec.name)
        outcome = ask(self.twin, res.dst_pod or {}, req, self._dep_hit(proc, dep.name))
        self._store_cache[key] = outcome
        if res.dst_pod is not None and not outcome.modelled:
            # Without a store model, charge the store's CPU here (a model charges it itself).
            uid = res.dst_pod["metadata"].get("uid", "")
            self._store_cpu[uid] = (rate * outcome.latency_ms / 1000.0 * 0.5, self.twin.clock.now)
        return outcome

    def _dep_hit(self, proc: Proc, dep_name: str) -> float:
        dep = proc.inst.spec.dependency(dep_name)
        return dep.hit_ratio if dep else 0.0

    # ---------------------------------------------------------------- entry + telemetry
    def _entry_outcomes(self, flows: list[dict[str, Any]], now: float, dt: float) -> None:
        for flow in flows:
            workload: Workload = flow["workload"]
            rate = flow["rate"]
            timeout = workload.spec.timeout_ms
            ok_rate = 0.0
            components: list[tuple[float, float, float]] = []
            total_weight = sum(m.weight for m in workload.spec.mix)
            for leg, proc in flow["legs"]:
                share = rate * leg.fraction
                if leg.result.ok:
                    self.tcp.flow(None, leg.result.dst_pod, share, leg.effect, dt)
                if proc is None:
                    if leg.result.ok:  # a non-program server answered
                        ok_rate += share
                        components.append((share, leg.result.latency_ms * 2, 0.1))
                    else:
                        components.append((share, min(leg.result.latency_ms, timeout), 0.0))
                    continue
                for mix in workload.spec.mix:
                    part = share * mix.weight / total_weight
                    op = match_operation(proc, mix.operation, mix.method)
                    res = proc.results.get(op.key) if op else None
                    if res is None:
                        components.append((part, 1.0, 0.0))
                        continue
                    d = res.d + 2 * leg.result.latency_ms
                    late = exceed(d, res.m, timeout)
                    good = part * (1.0 - leg.loss) * res.success * (1.0 - late)
                    ok_rate += good
                    components.append((part, d, res.m))
            if not flow["legs"] and rate > 0:
                components.append((rate, workload.spec.timeout_ms, 0.0))
            ticks = self.entry[flow["name"]]
            ticks.append(EntryTick(now, rate, ok_rate, components))
            if len(ticks) > ENTRY_HISTORY_S / dt:
                del ticks[: len(ticks) - int(ENTRY_HISTORY_S / dt)]

    def _record_span(self, service: str, span: str, kind: str, count: float, res: OpResult) -> None:
        if count <= 0:
            return
        ok_count = count * res.success
        err_count = count - ok_count
        d, m = res.d, res.m
        shared: Any = None  # the (start, shares) of (d, m): the same for both statuses
        for status, n in (("STATUS_CODE_UNSET", ok_count), ("STATUS_CODE_ERROR", err_count)):
            if n <= 1e-9:
                continue
            key = (service, span, kind, status)
            self.span_calls[key] += n
            self.span_sum[key] += n * (d + m)
            hist = self.span_hist.get(key)
            if hist is None:
                hist = self.span_hist[key] = [0.0] * len(SPAN_BUCKETS_MS)
            # `n * cdf(d, m, le)` per bucket; the cdf values are memoised on (d, m) (span_shares.py),
            # and they cover the buckets from `start` to the last, so one comprehension adds them
            # (the same `h + n * share` per bucket as an indexed `+=`, without its per-item work).
            if shared is None:
                shared = self._bucket_shares.of(d, m)
            start, shares = shared
            hist[start:] = [h + n * share for h, share in zip(hist[start:], shares, strict=True)]

    def _log_error(self, proc: Proc, op: Operation, call: Call, dep: DependencyConfig | None, error: str,
                   rate: float, now: float) -> None:
        """Error lines at the expected rate, at most `error_burst` identical ones per window."""
        spec = proc.inst.spec
        if spec.log.error_burst <= 0:  # logs no per-request errors (Envoy: its access log tells)
            return
        key = (proc.inst.key, error)
        window = self._error_budget.get(key)
        if window is None or now - window[0] >= spec.log.error_window_s:
            suppressed = window[2] if window else 0.0
            # start, emitted, suppressed, carry: the carried fraction of a line survives the window,
            # so a rare error (one per 30 s) is still logged at its rate
            window = [now, 0.0, 0.0, window[3] if window else 0.0]
            self._error_budget[key] = window
            if suppressed >= 1:
                self._write(proc, now, "warn", f"{int(suppressed)} similar errors suppressed in the last "
                                               f"{int(spec.log.error_window_s)}s")
        window[3] += rate * self.twin.clock.tick
        lines = int(window[3])
        window[3] -= lines
        for _ in range(lines):
            if window[1] < spec.log.error_burst:
                window[1] += 1
                template = (spec.dependency(call.dependency).error_log
                            if spec.dependency(call.dependency) else "{error}")
                message = render(template, {"error": error, "operation": call.operation,
                                            "dependency": call.dependency, "caller_operation": op.name})
                self._write(proc, now, "error", message)
            else:
                window[2] += 1

    def _write(self, proc: Proc, now: float, level: str, message: str) -> None:
        spec = proc.inst.spec
        text = format_log(spec.log.style, now, level, spec.log.handler_caller, message)
        log_channel.write(self.twin, proc.inst, now, text, message=message, level=level)

    # ---------------------------------------------------------------- usage
    def _usage(self, namespace: str, pod: str, container: str, instance: Any) -> tuple[float, float]:
        proc = self.procs.get((namespace, pod, container))
        if proc is not None and proc.inst.ctx is instance.ctx:
            extra = self._extra_mib(proc)
            busy = busy_cores(proc.inst.spec.paths, proc.inst.settings) + jvm_rules.busy_cores(proc.jvm_rules)
            cpu = min(proc.limit, proc.cpu_used + busy) if busy and proc.limit else proc.cpu_used + busy
            return cpu, extra * MIB
        if self._store_cpu:
            runtime_pod = self.runtime.pod(namespace, pod)
            if runtime_pod is not None:
                cpu, at = self._store_cpu.get(runtime_pod.uid, (0.0, 0.0))
                if cpu and self.twin.clock.now - at <= 2 * self.twin.clock.tick:
                    return cpu, 0.0
        return 0.0, 0.0


# (labels, per-bucket labels in SPAN_BUCKETS_MS order, the +Inf bucket's labels) of one span key
SpanLabelSets = tuple[dict[str, str], tuple[dict[str, str], ...], dict[str, str]]


def _span_label_sets(key: tuple[str, str, str, str]) -> SpanLabelSets:
    service, span, kind, status = key
    labels = {"service_name": service, "span_name": span, "span_kind": kind, "status_code": status}
    return labels, tuple({**labels, "le": str(le)} for le in SPAN_BUCKETS_MS), {**labels, "le": "+Inf"}


def _call_lists(proc: Proc, op: Operation) -> tuple[list[float], list[float]]:
    """The op's per-call (q, success) lists, created once (success 1.0 until known)."""
    lists = proc.calls.get(op.key)
    if lists is None or len(lists[0]) != len(op.calls):
        lists = proc.calls[op.key] = ([0.0] * len(op.calls), [1.0] * len(op.calls))
    return lists


def _guard(kind: str, ok: float, hit: float) -> float:
    """P(a `when` guard holds) from the referenced call's success and hit ratios (a cache error
    counts as a miss, as cache-aside clients treat it)."""
    if kind == "miss":
        return (1.0 - ok) + ok * (1.0 - hit)
    if kind == "hit":
        return ok * hit
    if kind == "error":
        return 1.0 - ok
    return ok


_EXCLUSIVE = frozenset({frozenset({"miss", "hit"}), frozenset({"error", "ok"}), frozenset({"error", "hit"})})


def _exclusive(a: str, b: str | None) -> bool:
    """Whether two `when` guards on the same call can never both hold."""
    if b is None:
        return False
    kind_a, _, ref_a = a.partition(":")
    kind_b, _, ref_b = b.partition(":")
    return ref_a == ref_b and frozenset({kind_a, kind_b}) in _EXCLUSIVE


# ------------------------------------------------------------------------------- error texts
def _span_name(protocol: str, op: Operation) -> str:
    return f"HTTP {op.method} {op.name}" if protocol == "http" else op.name


def _trace_store() -> Any:
    from sregym.twin.telemetry.traces import TraceStore

    return TraceStore()


__all__ = ["DataPlaneEngine", "EdgeResult", "EntryStats", "OpResult", "Proc"]
