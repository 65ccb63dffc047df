"""The Kafka broker's JVM heap under produce traffic: why huge records can take a broker down.

A produce request is read whole into heap buffers by the network processor and waits in the
request queue until a request handler has validated and appended it to the log, so the bytes a
broker has received but not yet appended sit on its heap. With the default `message.max.bytes`
(1 MiB) that backlog is noise; once the broker accepts records of tens of MiB, a producer pushing
them faster than the handlers append them grows the backlog by the difference every second,
collections stop reclaiming anything (the buffers are live) and an allocation fails with
`java.lang.OutOfMemoryError: Java heap space`. The network thread that hit it dies, so the broker
stops answering every client -- producers time out, consumers stop fetching -- while its JVM (and
the pod) keeps running. Only a new process (a restart) has a working broker again, and it fails
the same way while the flood goes on.

The model: live heap = what the broker holds at rest (a share of `-Xmx`) + the backlog of received,
not yet appended request bytes, drained at the handlers' append throughput. Above `-Xmx` the
heap is exhausted for the life of the process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MESSAGE_MAX_BYTES = 1048588  # the broker's `message.max.bytes` default
DEFAULT_MAX_REQUEST_SIZE = 1048576  # the Java producer's `max.request.size` default
RESTING_SHARE = 0.35  # page-cache-free broker at rest: metadata, indexes, the OTel agent
MIB = 1 << 20
APPEND_BYTES_PER_S = 64.0 * MIB  # the request handlers' validate-and-append throughput on one volume

_SIZE = re.compile(r"-Xm([sx])(\d+)([kKmMgG]?)")


def heap_mb(opts: str) -> tuple[float, float]:
    """(committed at start, maximum) heap in MiB from `-Xms/-Xmx` (Kafka's default -Xmx1G -Xms1G)."""
    found: dict[str, float] = {}
    for kind, number, unit in _SIZE.findall(opts or "-Xmx1G -Xms1G"):
        scale = {"": 1 / (1 << 20), "k": 1 / 1024, "m": 1.0, "g": 1024.0}[unit.lower()]
        found[kind] = int(number) * scale
    top = found.get("x", 1024.0)
    return found.get("s", min(top, 256.0)), top


@dataclass
class BrokerHeap:
    """One broker process's heap: its cap, the request bytes waiting to be appended, whether it ran out."""

    max_bytes: float
    backlog_bytes: float = 0.0
    last_at: float | None = None
    exhausted_at: float | None = None

    @property
    def exhausted(self) -> bool:
        return self.exhausted_at is not None

    def live_bytes(self) -> float:
        return self.max_bytes * RESTING_SHARE + self.backlog_bytes

    def receive(self, now: float, nbytes: float) -> bool:
        """Take `nbytes` of produce requests onto the heap; False when the allocation fails."""
        if self.exhausted:
            return False
        if self.last_at is not None:
            self.backlog_bytes = max(0.0, self.backlog_bytes - APPEND_BYTES_PER_S * max(0.0, now - self.last_at))
        self.last_at = now
        self.backlog_bytes += nbytes
        if self.live_bytes() > self.max_bytes:
            self.exhausted_at = now
            return False
        return True


__all__ = ["APPEND_BYTES_PER_S", "DEFAULT_MAX_REQUEST_SIZE", "DEFAULT_MESSAGE_MAX_BYTES", "MIB", "BrokerHeap", "heap_mb"]
