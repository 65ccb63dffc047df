"""Jaeger's JSON traces become the twin's spans with the fields the snapshot's traces.tsv and
topology calls are made of (parent, service, kind, error and its message)."""

from __future__ import annotations

from sregym.snapshot.collect import service_calls
from sregym.snapshot.remote_view import spans_of_trace

TRACE = {
    "traceID": "t1",
    "processes": {"p1": {"serviceName": "frontend", "tags": [{"key": "hostname", "value": "frontend-1"}]},
                  "p2": {"serviceName": "search", "tags": []}},
    "spans": [
        {"traceID": "t1", "spanID": "a", "operationName": "HTTP GET /hotels", "references": [], "startTime": 1000,
         "duration": 50, "processID": "p1", "tags": [{"key": "span.kind", "value": "server"}]},
        {"traceID": "t1", "spanID": "b", "operationName": "search.Nearby", "processID": "p2", "startTime": 1010,
         "duration": 20, "references": [{"refType": "CHILD_OF", "traceID": "t1", "spanID": "a"}],
         "tags": [{"key": "span.kind", "value": "client"}, {"key": "error", "value": True},
                  {"key": "otel.status_description", "value": "connection refused"}]},
    ],
}


def test_jaeger_spans_keep_parent_service_kind_and_error() -> None:
    root, child = spans_of_trace(TRACE)
    assert (root.service, root.kind, root.parent_span_id, root.error) == ("frontend", "server", "", False)
    assert root.process_tags == {"hostname": "frontend-1"}
    assert (child.service, child.kind, child.parent_span_id) == ("search", "client", "a")
    assert child.error and child.message == "connection refused"
    assert (child.start_us, child.duration_us) == (1010, 20)
    assert service_calls([root, child], [root, child]) == [{"source": "frontend", "target": "search", "calls": 1}]
