"""Span metrics: the OpenTelemetry Collector's `spanmetrics` connector, scraped by Prometheus.

The data plane counts every request it serves per (service, span name, span kind, status code)
and keeps a latency histogram (`twin.services.dataplane.span_metrics()`, cumulative rows of
(name, labels, value, type)). The collector exposes them on its Prometheus exporter, which the
monitoring stack scrapes as one target, so RED queries work unchanged:

    sum by (service_name) (rate(traces_span_metrics_calls_total{status_code="STATUS_CODE_ERROR"}[5m]))
    histogram_quantile(0.95, sum by (le, service_name)
        (rate(traces_span_metrics_duration_milliseconds_bucket{span_kind="SPAN_KIND_SERVER"}[5m])))

Until the data plane exists (or while it reports nothing) the target is up with no span series.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sregym.twin.telemetry.exposition import MONITORING_NAMESPACE, Batch, Family, SeriesRef, Target

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

JOB = "opentelemetry-collector"
SERVICE = "opentelemetry-collector"
POD_NAME = "opentelemetry-collector-7c9d8f6b5d-q4wzt"
POD_IP = "10.244.2.253"
PORT = 8889

Row = tuple[str, dict[str, str], float] | tuple[str, dict[str, str], float, str]


def collector_target(pod_name: str = POD_NAME, pod_ip: str = POD_IP) -> Target:
    instance = f"{pod_ip}:{PORT}"
    return Target(JOB, instance, {"job": JOB, "instance": instance, "namespace": MONITORING_NAMESPACE,
                                  "pod": pod_name, "service": SERVICE, "endpoint": "prometheus",
                                  "container": "otc-container"}, honor_labels=False)


def live_collector_target(twin: Twin) -> Target | None:
    """The target of the running collector pod (None while it is not running); the fixed one in
    a twin without the monitoring stack."""
    from sregym.twin.telemetry import stack

    if not stack.installed(twin):
        return collector_target()
    pod = stack.stack_target_pod(twin, "opentelemetry-collector")
    return collector_target(*stack.pod_identity(pod)) if pod is not None else None


def rows_of(provider: Any, method: str) -> list[Row]:
    """The rows an optional data-plane method returns ([] when it is absent or fails)."""
    fn = getattr(provider, method, None) if provider is not None else None
    if fn is None:
        return []
    try:
        rows = fn()
    except Exception:  # a half-initialised data plane must not break the scrape
        return []
    return list(rows) if isinstance(rows, Iterable) else []


class RefCache:
    """Series refs per (metric name, labels) of one target, so repeated rows are cheap."""

    def __init__(self) -> None:
        self._keys: dict[tuple[str, tuple[tuple[str, str], ...]], SeriesRef] = {}
        self._for: tuple[str, str, str] | None = None

    def ref(self, batch: Batch, name: str, labels: dict[str, str]) -> SeriesRef:
        if self._for != batch.target.id:
            self._keys.clear()
            self._for = batch.target.id
        ident = (name, tuple(labels.items()))
        ref = self._keys.get(ident)
        if ref is None:
            ref = batch.ref(name, labels)
            self._keys[ident] = ref
        return ref


class SpanMetrics:
    """The collector's Prometheus exporter target."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self.families = FAMILIES
        self.target = collector_target()
        self._keys = RefCache()
        # Per span key: the refs of its calls, buckets, +Inf, sum and count series, in row order.
        self._groups: dict[Any, list[SeriesRef]] = {}

    def collect(self, now: float) -> list[Batch]:
        target = live_collector_target(self.twin)
        if target is None:
            return []
        if target.labels != self.target.labels:  # a new pod: cached refs carry the old labels
            self.target, self._keys, self._groups = target, RefCache(), {}
        batch = Batch(self.target)
        dataplane = self.twin.services.dataplane
        if hasattr(dataplane, "span_metric_groups"):
            self._collect_groups(batch, rows_of(dataplane, "span_metric_groups"))
            return [batch]
        for row in rows_of(dataplane, "span_metrics"):
            name, labels, value = row[0], row[1], row[2]
            batch.add_ref(self._keys.ref(batch, name, labels), float(value))
        return [batch]

    def _collect_groups(self, batch: Batch, groups: list[Any]) -> None:
        """The same samples as the `span_metrics` rows, in the same order, from one cached list
        of refs per span key: no row tuples, label hashing or lookups per sample each scrape."""
        append, cached = batch.samples.append, self._groups
        for key, (labels, bucket_labels, inf_labels), count, hist, total in groups:
            refs = cached.get(key)
            if refs is None or (hist is not None) != (len(refs) > 1):
                refs = [self._keys.ref(batch, CALLS, labels)]
                if hist is not None:
                    refs += [self._keys.ref(batch, BUCKET, b) for b in bucket_labels]
                    refs += [self._keys.ref(batch, BUCKET, inf_labels), self._keys.ref(batch, SUM, labels),
                             self._keys.ref(batch, COUNT, labels)]
                cached[key] = refs
            append((refs[0], float(count)))
            if hist is not None:
                buckets = len(bucket_labels)
                for ref, value in zip(refs[1:buckets + 1], hist, strict=False):
                    append((ref, float(value)))
                append((refs[buckets + 1], float(count)))
                append((refs[buckets + 2], float(total)))
                append((refs[buckets + 3], float(count)))


CALLS = "traces_span_metrics_calls_total"
BUCKET = "traces_span_metrics_duration_milliseconds_bucket"
SUM = "traces_span_metrics_duration_milliseconds_sum"
COUNT = "traces_span_metrics_duration_milliseconds_count"

FAMILIES: tuple[Family, ...] = (
    Family("traces_span_metrics_calls_total", "counter", ""),
    Family("traces_span_metrics_duration_milliseconds", "histogram", ""),
)
