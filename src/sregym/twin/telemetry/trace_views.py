"""How spans read to a Jaeger client: their tags (with the kind, status and error tags the OTLP →
Jaeger translation derives) and the service dependency links; shared by the Jaeger API and the
snapshot export."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sregym.twin.telemetry.traces import Span


def span_logs(span: Span) -> list[dict[str, Any]]:
    """A span's events as Jaeger logs: the event name under `event`, then its attributes (the
    OTLP-to-Jaeger translation's layout)."""
    return [{"timestamp": at, "fields": [tag("event", name), *(tag(k, v) for k, v in attrs.items())]}
            for at, name, attrs in span.events]


def tag(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "type": "bool", "value": value}
    if isinstance(value, int):
        return {"key": key, "type": "int64", "value": value}
    if isinstance(value, float):
        return {"key": key, "type": "float64", "value": value}
    if isinstance(value, bytes):
        return {"key": key, "type": "binary", "value": value.hex()}
    return {"key": key, "type": "string", "value": str(value)}


def span_tags(span: Span) -> dict[str, Any]:
    """The tags Jaeger shows for a span: its own, plus kind, status and error ones derived from
    the span's fields the way the OTLP → Jaeger translation writes them."""
    tags: dict[str, Any] = dict(span.tags)
    tags.setdefault("span.kind", span.kind)
    if span.status_code is not None and not any(k in tags for k in ("http.status_code", "rpc.grpc.status_code",
                                                                       "http.response.status_code")):
        key = "http.status_code" if span.status_code >= 100 else "rpc.grpc.status_code"
        tags[key] = int(span.status_code)
    if span.error:
        tags.setdefault("error", True)
        tags.setdefault("otel.status_code", "ERROR")
        if span.message:
            tags.setdefault("otel.status_description", span.message)
    return tags


def call_counts(by_id: dict[tuple[str, str], Span], window: Iterable[Span]) -> dict[tuple[str, str], int]:
    """(parent service, child service) → how many spans of `window` have a parent span of another
    service: Jaeger's dependency links (also the snapshot topology's `calls`)."""
    counts: dict[tuple[str, str], int] = {}
    for s in window:
        parent = by_id.get((s.trace_id, s.parent_span_id)) if s.parent_span_id else None
        if parent is None or parent.service == s.service:
            continue
        key = (parent.service, s.service)
        counts[key] = counts.get(key, 0) + 1
    return counts
