"""The span a Kafka producer's instrumentation records for one publish.

The demo's checkout (and the OTel Go/Java Kafka instrumentations it follows) starts a PRODUCER
span named `<topic> publish` with the messaging attributes, records whether the broker
acknowledged it (`messaging.kafka.producer.success`) and, on failure, sets the span's status to
the client's error text. Datastore calls are otherwise untraced; a publish is part of the trace
(its consumers continue it), so the exemplar sampler records it through `producer_span`.
"""

from __future__ import annotations

from typing import Any


def producer_span(topic: str, ok: bool, elapsed_us: int, offset: int | None) -> tuple[str, str, dict[str, Any]]:
    """(span name, span kind, tags) of one publish to `topic`."""
    tags: dict[str, Any] = {"span.kind": "producer", "peer.service": "kafka", "network.transport": "tcp",
                            "messaging.system": "kafka", "messaging.destination.name": topic,
                            "messaging.operation": "publish", "messaging.kafka.destination.partition": 0,
                            "messaging.kafka.producer.success": ok,
                            "messaging.kafka.producer.duration_ms": elapsed_us // 1000}
    if ok and offset is not None:
        tags["messaging.kafka.message.offset"] = offset
    if not ok:
        tags["error"] = True
    return f"{topic} publish", "producer", tags


__all__ = ["producer_span"]
