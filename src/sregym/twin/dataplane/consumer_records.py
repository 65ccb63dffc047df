"""The records a consumer loop processed this tick, and the lines its code logs for each.

A consumer's program logs per record what its handler prints (the demo's accounting prints the
order it read, fraud-detection the order id and its running count). Which records were processed
follows from the group's committed positions before and after the poll, so every consumer of a
topic names the same record by the same (topic, partition, offset), and an app renders what that
record holds from it (`register_record_log`), deterministically. At most `MAX_LINES_PER_TICK`
records are logged per consumer and tick: a backlog drained at full speed would otherwise write
thousands of lines per simulated second into the log store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane import log_channel

if TYPE_CHECKING:
    from sregym.twin.dataplane.engine import DataPlaneEngine
    from sregym.twin.dataplane.spec import Consumer
    from sregym.twin.dataplane.state import Proc

MAX_LINES_PER_TICK = 20


@dataclass(frozen=True)
class Record:
    """One processed record: where it sits in the log, when it was handled, the handler's
    running count of records (`total`, 1 for the first record this process handled), and whether
    the loop ran its slow code path for it (`Consumer.slow_when`)."""

    topic: str
    partition: int
    offset: int
    at: float
    total: int
    group: str
    slowed: bool = False


RecordLog = Callable[[Record], list[str]]
# (level, body, attributes) of the OTLP records a consumer's SDK logger sends per record, optionally
# followed by the (trace id, span id) of the consumer span the record was logged in.
RecordOtlp = Callable[[Record], list[tuple[Any, ...]]]
_RENDERERS: dict[tuple[str, str], RecordLog] = {}
_OTLP: dict[tuple[str, str], RecordOtlp] = {}


def register_record_log(program: str, group: str, render: RecordLog, otlp: RecordOtlp | None = None) -> None:
    """What `program`'s consumer of `group` logs per record: `render` the lines as printed, `otlp`
    the records its OpenTelemetry logger sends when they differ from the printed lines (a console
    format spreading one message over lines); both follow the program's log channel."""
    _RENDERERS[(program, group)] = render
    if otlp is not None:
        _OTLP[(program, group)] = otlp


def positions(broker: Any, group: str, topic: str) -> dict[int, float]:
    """The group's committed offset per partition of `topic` (absent: none committed yet)."""
    found = broker.data.groups.get(group)
    if found is None:
        return {}
    return {index: pos for (name, index), pos in found.committed.items() if name == topic}


def log_records(engine: DataPlaneEngine, proc: Proc, consumer: Consumer, broker: Any, topic: str,
                before: dict[int, float], total: float) -> None:
    """Write the per-record lines of the records this poll committed past `before`; `total` is
    what this member has consumed since it joined (the handler's running count)."""
    render = _RENDERERS.get((proc.inst.spec.name, consumer.group))
    if render is None:
        return
    after = positions(broker, consumer.group, topic)
    offsets = [(index, offset) for index in sorted(after)
               for offset in range(int(before.get(index, after[index]) + 1e-9), int(after[index] + 1e-9))]
    if not offsets:
        return
    total = max(int(total + 1e-9), len(offsets))
    instance = engine.runtime.instance(*proc.inst.key)
    logs = engine.twin.services.logs
    if instance is None or logs is None:
        return
    now = engine.twin.clock.now
    shown = offsets[-MAX_LINES_PER_TICK:]
    slowed = consumer.slowed(proc.inst.settings)
    first_total = total - len(shown) + 1
    for n, (index, offset) in enumerate(shown):
        record = Record(topic, index, offset, now, first_total + n, consumer.group, slowed)
        otlp = _OTLP.get((proc.inst.spec.name, consumer.group))
        channel = proc.inst.spec.log.sinks
        printed = "stdout" if otlp is not None and log_channel.to_stdout(channel) else None
        for line in render(record) if otlp is None or printed else ():
            log_channel.write(engine.twin, proc.inst, now, line, sinks=printed)
        if otlp is not None and log_channel.to_otlp(channel):
            for level, body, attributes, *context in otlp(record):  # optionally (trace id, span id)
                log_channel.write(engine.twin, proc.inst, now, body, level=level, attributes=attributes, sinks="otlp",
                                  trace=context[0] if context else None)


__all__ = ["MAX_LINES_PER_TICK", "Record", "RecordLog", "RecordOtlp", "log_records", "positions", "register_record_log"]
