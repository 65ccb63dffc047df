"""What a Kafka producer logs per record it published: one program's lines for each new offset.

checkout (demo 2.2.0) logs each placed order through its OTLP logger ("[PlaceOrder]", "payment went
through", "order placed" with the order id, "sending to postProcessor", "Successful to write
message. offset: ..."), and the order is the record accounting and fraud-detection later log by
the same order id. So the lines follow the topic's log-end offsets, not a sampled request: every
whole offset the program's broker gained this tick is one published record, handed to the
producers of that program round-robin. A program registers its renderer with
`register_publish_log`; the lines go through the program's log channel (`log_channel.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from sregym.twin.dataplane import log_channel
from sregym.twin.dataplane.consumer_records import MAX_LINES_PER_TICK, Record
from sregym.twin.dataplane.consumers import broker_of

if TYPE_CHECKING:
    from sregym.twin.dataplane.engine import DataPlaneEngine

# (level, body, attributes) of each line a producer logs for one record.
PublishLog = Callable[[Record], list[tuple[str, str, dict[str, Any]]]]
_RENDERERS: dict[str, tuple[str, str, PublishLog]] = {}  # program -> (dependency, topic, render)
# engine -> (broker's owner, topic, partition) -> the offset logged up to
_SEEN: WeakKeyDictionary[Any, dict[tuple[Any, str, int], int]] = WeakKeyDictionary()


def register_publish_log(program: str, dependency: str, topic: str, render: PublishLog) -> None:
    """What `program` logs for each record it publishes to `topic` through `dependency`."""
    _RENDERERS[program] = (dependency, topic, render)


def log_publishes(engine: DataPlaneEngine) -> None:
    """Write the lines of the records published since the last tick."""
    if not _RENDERERS:
        return
    now = engine.twin.clock.now
    groups: dict[int, tuple[Any, str, PublishLog, list[Any]]] = {}
    for key in sorted(engine.procs):
        proc = engine.procs[key]
        entry = _RENDERERS.get(proc.inst.spec.name)
        if entry is None:
            continue
        dependency, topic, render = entry
        broker, _error = broker_of(engine, proc, dependency)
        if broker is None:
            continue
        groups.setdefault(id(broker.data), (broker, topic, render, []))[3].append(proc)
    for broker, topic, render, procs in groups.values():
        found = broker.data.topics.get(topic)
        if found is None:
            continue
        seen = _SEEN.setdefault(engine, {})
        owner = tuple(getattr(broker.data, "owner", ()) or ())
        fresh: list[tuple[int, int]] = []
        for index, end in enumerate(found.partitions):
            last = seen.get((owner, topic, index))
            whole = int(end + 1e-9)
            if last is not None:
                fresh.extend((offset, index) for offset in range(last, whole))
            seen[(owner, topic, index)] = whole
        fresh.sort()
        for n, (offset, index) in enumerate(fresh[-MAX_LINES_PER_TICK:]):
            proc = procs[n % len(procs)]
            record = Record(topic, index, offset, now, offset + 1, "")
            for level, body, attributes in render(record):
                log_channel.write(engine.twin, proc.inst, now, body, level=level, attributes=attributes)


__all__ = ["PublishLog", "log_publishes", "register_publish_log"]
