"""Export the twin's spans as OTLP JSON (`ExportTraceServiceRequest`, the OTLP/HTTP JSON encoding).

One `resourceSpans` entry per resource (service name + process tags), one `scopeSpans` per
resource; ids are lowercase hex (as the OTLP JSON mapping requires, not base64), 64-bit integers
and timestamps are decimal strings, span kind and status code are the enum numbers. The same
traces the Jaeger API shows can so be fed to any OTLP-aware tool or kept with a snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from sregym.twin.telemetry.traces import Span

# The instrumentation scope a Go gRPC service traced with OpenTelemetry reports.
SCOPE = {"name": "go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc",
         "version": "0.49.0"}
SPAN_KINDS = {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2


def any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": attributes(value)}}
    return {"stringValue": str(value)}


def attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": any_value(v)} for k, v in sorted(values.items())]


def span_attributes(span: Span) -> dict[str, Any]:
    attrs = {k: v for k, v in span.tags.items() if k not in ("span.kind", "error", "otel.status_code",
                                                             "otel.status_description")}
    if span.status_code is not None and not any(k in attrs for k in ("http.status_code", "rpc.grpc.status_code",
                                                                      "http.response.status_code")):
        key = "http.response.status_code" if span.status_code >= 100 else "rpc.grpc.status_code"
        attrs[key] = int(span.status_code)
    return attrs


def encode_span(span: Span) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "traceId": span.trace_id.lower().rjust(32, "0"),
        "spanId": span.span_id.lower().rjust(16, "0"),
        "parentSpanId": span.parent_span_id.lower(),
        "name": span.operation,
        "kind": SPAN_KINDS.get(span.kind, 0),
        "startTimeUnixNano": str(span.start_us * 1000),
        "endTimeUnixNano": str(span.end_us * 1000),
        "attributes": attributes(span_attributes(span)),
        "status": {"code": STATUS_ERROR, "message": span.message} if span.error else {"code": STATUS_UNSET},
    }
    return doc


def export(spans: Iterable[Span], *, keep: Callable[[Span], bool] | None = None) -> dict[str, Any]:
    """Spans → an OTLP JSON document (resources in order of first appearance)."""
    resources: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for span in spans:
        if keep is not None and not keep(span):
            continue
        resource = {"service.name": span.service, **span.process_tags}
        key = json.dumps(resource, sort_keys=True, default=str)
        entry = resources.get(key)
        if entry is None:
            entry = ({"attributes": attributes(resource)}, [])
            resources[key] = entry
        entry[1].append(encode_span(span))
    return {"resourceSpans": [{"resource": res, "scopeSpans": [{"scope": dict(SCOPE), "spans": docs}]}
                              for res, docs in resources.values()]}


def export_json(spans: Iterable[Span], *, keep: Callable[[Span], bool] | None = None) -> str:
    return json.dumps(export(spans, keep=keep), separators=(",", ":"))


__all__ = ["SPAN_KINDS", "any_value", "encode_span", "export", "export_json"]
