"""Language-runtime metrics pushed over OTLP: what an instrumented process reports about its own
runtime (JVM heap and GC, .NET thread pool, Node event loop, CPython GC, Go goroutines).

Such metrics are not scraped from the pod: the SDK in the process pushes them to the
OpenTelemetry Collector, which forwards them to Prometheus' OTLP receiver. What lands in the TSDB
therefore has no `up` series and no per-pod scrape target; it carries the labels Prometheus'
OTLP translation gives it (`job` = `<service.namespace>/<service.name>`, `instance` =
`service.instance.id`, promoted resource attributes such as `k8s_pod_name`), and names with unit
and `_total` suffixes (`jvm.memory.used` in `By` becomes `jvm_memory_used_bytes`).

Which runtime a program has, and what its instrumentation reports, is the app's knowledge: the
app registers a `RuntimeFn` under its program's name (`register_runtime_metrics`), as it
registers its pages. The twin hands it a `RuntimeSample` per live process every scrape — the
model's CPU, memory, served rates and flag settings — plus a state dict private to that process,
so counters (GC collections, CPU seconds) accumulate deterministically on the simulated clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.telemetry.exposition import Batch, Family, Target
from sregym.twin.telemetry.span_metrics import RefCache

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

# (name, labels, value, type) as the rows of the other exporters.
RuntimeRow = tuple[str, dict[str, str], float, str]


@dataclass
class RuntimeSample:
    """One live process as its runtime instrumentation sees it at a scrape."""

    namespace: str
    pod: str
    container: str
    pod_uid: str
    node: str
    service: str  # the workload's service name (the span metrics' `service_name`)
    started_at: float  # simulated seconds
    now: float
    dt: float  # seconds since this process' previous sample (0 on the first)
    cpu_cores: float  # cores the container uses now
    cpu_limit: float | None  # cores, None without a limit
    memory_bytes: float  # working set now
    memory_limit: float | None
    served: dict[str, float]  # operation -> requests/s served this tick
    settings: dict[str, str]  # the process' feature-flag settings
    utilisation: float  # busy fraction of the process' CPU share
    inflight: float  # requests being served now
    env: dict[str, str]  # the container's literal env values (GOMEMLIMIT, JAVA_TOOL_OPTIONS ...)
    state: dict[str, Any] = field(default_factory=dict)  # kept across samples of this process


RuntimeFn = Callable[[RuntimeSample], list[RuntimeRow]]


@dataclass(frozen=True)
class Registration:
    fn: RuntimeFn
    families: dict[str, Family]
    service_namespace: str  # the `service.namespace` resource attribute the app's pods set
    service_version: str


_RUNTIMES: dict[str, Registration] = {}


def register_runtime_metrics(program: str, fn: RuntimeFn, families: tuple[Family, ...] = (), *,
                             service_namespace: str = "", service_version: str = "") -> RuntimeFn:
    """Let processes of `program` (a ProgramSpec name) report runtime metrics through `fn`;
    `families` gives the HELP/TYPE Prometheus stores for them."""
    _RUNTIMES[program] = Registration(fn, {f.name: f for f in families}, service_namespace, service_version)
    return fn


def runtime_for(program: str) -> RuntimeFn | None:
    found = _RUNTIMES.get(program)
    return found.fn if found else None


def otlp_target(sample: RuntimeSample, namespace: str, version: str) -> Target:
    """The identity Prometheus' OTLP receiver gives a pushing process (the chart's
    `promote_resource_attributes` plus `keep_identifying_resource_attributes`)."""
    job = f"{namespace}/{sample.service}" if namespace else sample.service
    labels = {"job": job, "instance": sample.pod_uid, "service_name": sample.service,
              "service_namespace": namespace, "service_instance_id": sample.pod_uid,
              "service_version": version, "k8s_namespace_name": sample.namespace,
              "k8s_pod_name": sample.pod, "k8s_node_name": sample.node,
              "k8s_container_name": sample.container}
    deployment = _deployment_of(sample.pod)
    if deployment:
        labels["k8s_deployment_name"] = deployment
    return Target(job, sample.pod_uid, {k: v for k, v in labels.items() if v}, honor_labels=True,
                  pushed=True)


def _deployment_of(pod: str) -> str:
    """`<deployment>-<hash>-<suffix>` → `<deployment>` (what k8sattributes derives)."""
    parts = pod.rsplit("-", 2)
    return parts[0] if len(parts) == 3 else ""


class RuntimeMetrics:
    """The exporter side: one pushed batch per live process of a registered program."""

    families: tuple[Family, ...] = ()

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self._state: dict[tuple[str, str, str, str], tuple[float, dict[str, Any], RefCache]] = {}
        self._registered: set[str] = set()

    def collect(self, now: float) -> list[Batch]:
        engine: Any = self.twin.services.dataplane
        procs = getattr(engine, "procs", None) if engine is not None else None
        if not procs or not _RUNTIMES:
            return []
        out: list[Batch] = []
        seen: dict[tuple[str, str, str, str], tuple[float, dict[str, Any], RefCache]] = {}
        for key in sorted(procs):
            proc = procs[key]
            found = _RUNTIMES.get(proc.inst.spec.name)
            if found is None:
                continue
            sample = self._sample(engine, proc, now, seen)
            if sample is None:
                continue
            rows = found.fn(sample)
            if not rows:
                continue
            batch = Batch(otlp_target(sample, found.service_namespace, found.service_version))
            cache = seen[(*key, sample.pod_uid)][2]
            for name, labels, value, kind in rows:
                self._register(name, kind, found.families)
                batch.add_ref(cache.ref(batch, name, labels), float(value))
            out.append(batch)
        self._state = seen
        return out

    def _sample(self, engine: Any, proc: Any, now: float,
                seen: dict[tuple[str, str, str, str], tuple[float, dict[str, Any], RefCache]]) -> RuntimeSample | None:
        ns, pod, container = proc.inst.key
        obj = proc.pod_obj or {}
        uid = (obj.get("metadata") or {}).get("uid", "")
        if not uid:
            return None
        key = (ns, pod, container, uid)
        last, state, cache = self._state.get(key, (now, {}, RefCache()))
        seen[key] = (now, state, cache)
        runtime = getattr(engine, "runtime", None)
        cpu, memory = runtime.container_usage(ns, pod, container) if runtime is not None else (0.0, 0)
        spec = next((c for c in (obj.get("spec") or {}).get("containers") or [] if c.get("name") == container), {})
        from sregym.twin.machinery.quantity import memory_bytes

        raw_mem = ((spec.get("resources") or {}).get("limits") or {}).get("memory")
        mem_limit = float(memory_bytes(raw_mem)) if raw_mem else None
        serve = proc.serve_result
        # The interval's average: one tick's rate is a poor sample of traffic that arrives in bursts.
        totals, before = dict(proc.served_total), state.get("_served_total", {})
        state["_served_total"] = totals
        span = max(0.0, now - last)
        served = ({op: (n - before.get(op, 0.0)) / span for op, n in totals.items()} if span > 0
                  else dict(proc.served))
        return RuntimeSample(namespace=ns, pod=pod, container=container, pod_uid=uid, node=proc.node,
                             service=proc.inst.spec.trace_name, started_at=proc.inst.started_at, now=now,
                             dt=max(0.0, now - last), cpu_cores=float(cpu), cpu_limit=proc.limit,
                             memory_bytes=float(memory), memory_limit=mem_limit, served=served,
                             settings=dict(proc.inst.settings),
                             utilisation=float(serve.utilisation) if serve is not None else 0.0,
                             inflight=float(proc.inflight),
                             env={e["name"]: str(e["value"]) for e in spec.get("env") or []
                                  if isinstance(e, dict) and "name" in e and "value" in e}, state=state)

    def _register(self, name: str, kind: str, families: dict[str, Family]) -> None:
        if name in self._registered:
            return
        self._registered.add(name)
        tsdb: Any = self.twin.services.tsdb
        if tsdb is None:
            return
        family = name
        if kind == "histogram":
            for suffix in ("_bucket", "_sum", "_count"):
                if name.endswith(suffix):
                    family = name[: -len(suffix)]
        if family not in tsdb.metadata:
            known = families.get(family)
            tsdb.set_metadata(family, kind if kind in ("counter", "gauge", "histogram") else "unknown",
                              known.help if known else "")


__all__ = [
    "Registration",
    "RuntimeFn",
    "RuntimeMetrics",
    "RuntimeRow",
    "RuntimeSample",
    "otlp_target",
    "register_runtime_metrics",
    "runtime_for",
]
