"""Application metrics: what each application process exposes on its own /metrics endpoint.

The data plane reports per-process figures (`twin.services.dataplane.app_metrics()`: rows of
(name, labels, value, type) with `namespace`, `pod`, `container`, `service` labels — queue
depth, in-flight requests, request/error/retry counters, cache hit ratios ...). Prometheus would
scrape each pod as its own target through a ServiceMonitor on the app's Service, so each pod is a
target here: `job` = the service, `instance` = `<pod IP>:<first container port>`, and its series
go stale when the pod goes away. Metric metadata (TYPE) is registered on first sight.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.telemetry.exposition import Batch, Family, Target
from sregym.twin.telemetry.span_metrics import RefCache, rows_of

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
# The `# HELP` text each application process exposes with its families (one table, this exporter's).
HELP = {
    "app_queue_depth": "Number of requests waiting for a worker.",
    "app_inflight_requests": "Number of requests currently being served.",
    "app_requests_total": "Total number of requests handled, by method.",
    "app_request_errors_total": "Total number of requests that ended in an error, by method.",
    "app_client_retries_total": "Total number of retried calls to downstream services.",
    "app_requests_deadline_exceeded_total": "Total number of requests dropped because the caller's deadline "
                                            "had passed.",
    "app_cpu_utilisation_ratio": "CPU time used over the CPU available to the process.",
    "app_cache_hit_ratio": "Fraction of cache lookups answered from the cache.",
    "go_gc_duration_seconds": "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.",
    "go_memstats_heap_alloc_bytes": "Number of heap bytes allocated and currently in use.",
    "go_memstats_next_gc_bytes": "Number of heap bytes when next garbage collection will take place.",
    "go_memstats_gc_cpu_fraction": "The fraction of this program's available CPU time used by the GC since the "
                                   "program started.",
    "go_gc_cpu_seconds_total": "Estimated total CPU time spent performing GC tasks.",
    "go_gc_gogc_percent": "Heap size target percentage configured by the user, otherwise 100.",
    "go_gc_gomemlimit_bytes": "Go runtime memory limit configured by the user, otherwise math.MaxInt64.",
    "kafka_consumer_records_lag": "The latest lag of the partition",
    "kafka_consumer_records_lag_max": "The maximum lag in terms of number of records for any partition in this window",
    "kafka_consumer_records_consumed_total": "The total number of records consumed",
}


class AppMetrics:
    """One scrape target per application pod reporting metrics."""

    families: tuple[Family, ...] = ()

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self._pod_kind = twin.store.kind("Pod")
        self._targets: dict[tuple[str, str], tuple[str, Target, RefCache]] = {}
        self._known_types: dict[str, str] = {}

    def collect(self, now: float) -> list[Batch]:
        rows = rows_of(self.twin.services.dataplane, "app_metrics")
        batches: dict[tuple[str, str], Batch] = {}
        for row in rows:
            name, labels, value = row[0], row[1], row[2]
            self._register(name, row[3] if len(row) > 3 else "untyped")
            ns, pod = labels.get("namespace", ""), labels.get("pod", "")
            batch = batches.get((ns, pod))
            if batch is None:
                found = self._target(ns, pod, labels)
                if found is None:
                    continue
                batch = Batch(found[1])
                batches[(ns, pod)] = batch
            cache = self._targets[(ns, pod)][2]
            batch.add_ref(cache.ref(batch, name, labels), float(value))
        # Forget targets of pods that stopped reporting (their series go stale via the scraper).
        self._targets = {k: v for k, v in self._targets.items() if k in batches}
        return [batches[k] for k in sorted(batches)]

    def _target(self, ns: str, pod: str, labels: dict[str, str]) -> tuple[str, Target, RefCache] | None:
        obj = self.twin.store.peek(self._pod_kind, ns, pod)
        uid = ((obj or {}).get("metadata") or {}).get("uid", "")
        known = self._targets.get((ns, pod))
        if known is not None and known[0] == uid:
            return known
        if obj is None:
            return None
        ip = (obj.get("status") or {}).get("podIP", "")
        port = next((p.get("containerPort") for c in (obj.get("spec") or {}).get("containers") or []
                     for p in c.get("ports") or [] if p.get("containerPort")), 8080)
        service = labels.get("service") or labels.get("container") or pod
        instance = f"{ip}:{port}"
        target = Target(service, instance, {"job": service, "instance": instance, "namespace": ns, "pod": pod,
                                            "service": service, "endpoint": "metrics"})
        entry = (uid, target, RefCache())
        self._targets[(ns, pod)] = entry
        return entry

    def _register(self, name: str, kind: str) -> None:
        if name in self._known_types:
            return
        self._known_types[name] = kind
        tsdb: Any = self.twin.services.tsdb
        if tsdb is None:
            return
        family, metric_type = name, kind if kind in ("counter", "gauge", "histogram", "summary") else "unknown"
        if kind in ("histogram", "summary"):
            for suffix in HISTOGRAM_SUFFIXES:
                if name.endswith(suffix):
                    family = name[: -len(suffix)]
        if family not in tsdb.metadata:
            tsdb.set_metadata(family, metric_type, HELP.get(family, ""))
