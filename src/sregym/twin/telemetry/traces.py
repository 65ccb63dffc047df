"""Trace storage: Jaeger-style spans produced by the data plane's exemplar requests.

Spans are kept in arrival order with a bounded retention so a long run cannot grow without limit;
the Jaeger query API and snapshot export read from here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Span:
    trace_id: str  # 32 hex chars
    span_id: str  # 16 hex chars
    parent_span_id: str  # "" for a root span
    service: str
    operation: str
    kind: str  # "server" | "client" | "internal" | "producer" | "consumer"
    start_us: int  # microseconds since the Unix epoch (simulated)
    duration_us: int
    error: bool = False
    status_code: int | None = None  # HTTP status or gRPC code where relevant
    message: str = ""
    tags: dict[str, Any] = field(default_factory=dict)
    process_tags: dict[str, Any] = field(default_factory=dict)  # hostname, ip, pod ...
    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)  # (µs, name, attributes)

    @property
    def end_us(self) -> int:
        return self.start_us + self.duration_us


class TraceStore:
    def __init__(self, max_spans: int = 500_000) -> None:
        self._spans: deque[Span] = deque(maxlen=max_spans)
        self._by_trace: dict[str, list[Span]] = {}

    def add(self, span: Span) -> None:
        if len(self._spans) == self._spans.maxlen:
            old = self._spans[0]
            bucket = self._by_trace.get(old.trace_id)
            if bucket is not None:
                bucket.remove(old)
                if not bucket:
                    del self._by_trace[old.trace_id]
        self._spans.append(span)
        self._by_trace.setdefault(span.trace_id, []).append(span)

    def __len__(self) -> int:
        return len(self._spans)

    def spans(self) -> Iterator[Span]:
        return iter(self._spans)

    def trace(self, trace_id: str) -> list[Span]:
        return list(self._by_trace.get(trace_id.lower(), []))

    def trace_ids(self) -> list[str]:
        return list(self._by_trace)
