"""Log records a program sends through the OpenTelemetry SDK to the collector, as the log backend
keeps them.

Many services log only through an OTLP exporter (Go's slog → otelslog bridge, Envoy's
OpenTelemetry access logger, PHP's Monolog handler ...): their records never reach the
container's stdout, so `kubectl logs` does not show them; the collector's `k8sattributes`
processor adds the pod's identity to the resource and the logs pipeline exports them. Loki's
native OTLP ingestion then promotes a fixed list of resource attributes to index labels
(dots become underscores) and keeps the body as the line, with everything else about the record
as structured metadata (`trace_id`, `span_id`, `severity_text`, the record's attributes, the
unindexed resource attributes): that is what `streams()` serves through the Loki API beside the
promtail-labelled container streams (`logindex.py`), queryable as `| trace_id="..."`.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

MAX_RECORDS = 5000  # per resource, like the container logs' cap

# Loki 3's `default_resource_attributes_as_index_labels`.
INDEX_ATTRIBUTES = (
    "cloud.availability_zone", "cloud.region", "container.name", "deployment.environment", "k8s.cluster.name",
    "k8s.container.name", "k8s.cronjob.name", "k8s.daemonset.name", "k8s.deployment.name", "k8s.job.name",
    "k8s.namespace.name", "k8s.pod.name", "k8s.replicaset.name", "k8s.statefulset.name", "service.instance.id",
    "service.name", "service.namespace",
)
# The pod annotation prefix the collector's k8sattributes `otel_annotations` turns into resource attributes.
ANNOTATION_PREFIX = "resource.opentelemetry.io/"
SEVERITY_NUMBERS = {"trace": 1, "debug": 5, "info": 9, "warn": 13, "warning": 13, "error": 17, "fatal": 21,
                    "panic": 21}


@dataclass(frozen=True)
class LogRecord:
    """One OTLP LogRecord: when, the body, severity, the record's own attributes and its scope."""

    at: float
    body: str
    severity_text: str = "INFO"
    attributes: tuple[tuple[str, Any], ...] = ()
    scope: str = ""
    trace_id: str = ""  # the span the record was emitted in (32 hex), "" outside one
    span_id: str = ""
    flags: int = 0  # W3C trace flags (1: sampled)

    @property
    def severity_number(self) -> int:
        return SEVERITY_NUMBERS.get(self.severity_text.lower(), 0)


@dataclass
class _Resource:
    attributes: dict[str, str]
    records: deque[LogRecord] = field(default_factory=lambda: deque(maxlen=MAX_RECORDS))


class OtlpLogStore:
    """Records per resource (one per pod and service), in arrival order."""

    def __init__(self) -> None:
        self._resources: dict[tuple[tuple[str, str], ...], _Resource] = {}

    def emit(self, resource: dict[str, str], record: LogRecord) -> None:
        key = tuple(sorted(resource.items()))
        entry = self._resources.get(key)
        if entry is None:
            entry = self._resources[key] = _Resource(dict(resource))
        entry.records.append(record)

    def resources(self) -> list[tuple[dict[str, str], list[LogRecord]]]:
        return [(dict(r.attributes), list(r.records)) for _k, r in sorted(self._resources.items())]

    def streams(self) -> list[tuple[dict[str, str], list[tuple[LogRecord, dict[str, str]]]]]:
        """(Loki index labels, [(record, its structured metadata)]) per stream, as Loki 3's OTLP
        ingestion stores them."""
        out: dict[tuple[tuple[str, str], ...], tuple[dict[str, str], list[tuple[LogRecord, dict[str, str]]]]] = {}
        for attributes, records in self.resources():
            labels = {_loki_name(k): v for k, v in attributes.items() if k in INDEX_ATTRIBUTES and v}
            labels.setdefault("service_name", "unknown_service")
            resource_metadata = {_loki_name(k): str(v) for k, v in attributes.items()
                                 if k not in INDEX_ATTRIBUTES and v}
            key = tuple(sorted(labels.items()))
            merged = out.setdefault(key, (labels, []))[1]
            merged.extend((r, structured_metadata(r, resource_metadata)) for r in records)
        for _labels, records in out.values():
            records.sort(key=lambda pair: pair[0].at)
        return [out[k] for k in sorted(out)]


def _loki_name(attribute: str) -> str:
    """Loki's name for an OTLP attribute: anything outside [A-Za-z0-9_] becomes `_`."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in attribute)


def structured_metadata(record: LogRecord, resource_metadata: dict[str, str]) -> dict[str, str]:
    """What Loki 3 keeps beside the line of one OTLP record: the resource attributes it does not
    index, the scope name, the record's attributes, and its trace context and severity (each only
    when set, as the distributor's OTLP translation writes them)."""
    out = dict(resource_metadata)
    if record.scope:
        out["scope_name"] = record.scope
    for key, value in record.attributes:
        if value is not None and value != "":
            out[_loki_name(key)] = value if isinstance(value, str) else json_value(value)
    if record.trace_id:
        out["trace_id"] = record.trace_id
    if record.span_id:
        out["span_id"] = record.span_id
    if record.flags:
        out["flags"] = str(record.flags)
    if record.severity_text:
        out["severity_text"] = record.severity_text
    if record.severity_number:
        out["severity_number"] = str(record.severity_number)
    return out


def json_value(value: Any) -> str:
    """A non-string attribute value as Loki writes it (JSON text for numbers, booleans, lists)."""
    return json.dumps(value, separators=(",", ":"))


def otlp_logs(twin: Twin) -> OtlpLogStore:
    store = getattr(twin.services, "otlp_logs", None)
    if store is None:
        store = OtlpLogStore()
        twin.services.otlp_logs = store
    return store


def pod_resource(twin: Twin, namespace: str, pod: str, service_name: str) -> dict[str, str]:
    """The resource a record from `pod` carries after the chart's k8sattributes processor: the SDK's
    service.name, the pod's identity, its owning workload and the `resource.opentelemetry.io/*`
    annotations."""
    resource = {"service.name": service_name, "k8s.namespace.name": namespace, "k8s.pod.name": pod}
    obj = twin.store.peek("Pod", namespace, pod)
    if obj is None:
        return resource
    meta = obj.get("metadata") or {}
    resource["k8s.pod.uid"] = str(meta.get("uid", ""))
    node = (obj.get("spec") or {}).get("nodeName")
    if node:
        resource["k8s.node.name"] = str(node)
    for owner in meta.get("ownerReferences") or []:
        kind, name = owner.get("kind"), str(owner.get("name", ""))
        if kind == "ReplicaSet":
            resource["k8s.replicaset.name"] = name
            template_hash = (meta.get("labels") or {}).get("pod-template-hash")
            if template_hash and name.endswith("-" + template_hash):
                resource["k8s.deployment.name"] = name[: -len(template_hash) - 1]
        elif kind in ("StatefulSet", "DaemonSet", "Job"):
            resource[f"k8s.{kind.lower()}.name"] = name
    for key, value in (meta.get("annotations") or {}).items():
        if key.startswith(ANNOTATION_PREFIX):
            resource[key[len(ANNOTATION_PREFIX):]] = str(value)
    return resource


__all__ = ["INDEX_ATTRIBUTES", "LogRecord", "OtlpLogStore", "otlp_logs", "pod_resource", "structured_metadata"]
