"""Kafka consumer loops: the programs that poll a topic, run each record, and commit.

Every tick each running program with `ProgramSpec.consumers` reaches its broker the way its client
would (DNS → Service → endpoints → policy → chaos), joins or heartbeats its group, fetches what
it can process this tick and commits it. What it can process is the spec's `max_rate`, capped by
the CPU it was granted last tick for the record's operation; the records become demand on that
operation, so their downstream calls (a database write) load the rest of the app; a handler slower
than `SEQUENTIAL_MS` (a write waiting on a lock) caps the loop at one record per handler latency. A consumer
that is slow, CPU-starved, crashing or unable to reach the broker commits less than producers
append: the group's lag grows, and once it recovers it drains the backlog at its full rate.

A consumer whose handler fails on an unreadable record and retries it (`Consumer.unreadable`
"retry") stops at that record: its lag on that partition grows while its pod stays Running, and
it logs the same deserialization failure on every attempt.

Members that stop heartbeating leave their group after the session timeout (the broker's side,
`KafkaBroker.expire`), so a dead consumer shows as "no active members" with its lag still growing.
A program that closes its client when it is stopped (`Consumer.leaves_on_stop`) sends LeaveGroup
on a clean shutdown instead (`leave_groups`), if it can still reach the broker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane import log_channel
from sregym.twin.dataplane.consumer_records import log_records, positions
from sregym.twin.dataplane.spec import Consumer, Setting

if TYPE_CHECKING:
    from sregym.twin.dataplane.engine import DataPlaneEngine
    from sregym.twin.dataplane.programs import DependencyConfig
    from sregym.twin.dataplane.state import Proc

LOG_EVERY_S = 10.0
# Below this handler latency the spec's `max_rate` (the loop's measured pace) already accounts for
# the handler's own time; above it, the wait is what limits a one-record-at-a-time loop.
SEQUENTIAL_MS = 50.0


def poll_consumers(engine: DataPlaneEngine, demand: dict[Any, dict[str, float]], dt: float) -> None:
    """One tick of every consumer loop, then the brokers' session expiry."""
    from sregym.twin.datastores.kafka import brokers

    for key in sorted(engine.procs):
        proc = engine.procs[key]
        for consumer in proc.inst.spec.consumers:
            consumed = _poll(engine, proc, consumer, dt)
            if consumed > 0 and consumer.operation:
                demand[key][consumer.operation] += consumed / dt
    for broker in brokers(engine.twin):
        broker.expire()


def consumer_metrics(engine: DataPlaneEngine) -> list[tuple[str, dict[str, str], float, str]]:
    """The consumers' client metrics as the OTel Java agent's Kafka metric reporter exports them
    (`kafka_consumer_records_lag{client_id, topic, partition}`, `..._lag_max`,
    `kafka_consumer_records_consumed_total`): what a consumer process itself reports, so a dead
    consumer reports nothing and the broker-side view is `kafka-consumer-groups.sh`."""
    out: list[tuple[str, dict[str, str], float, str]] = []
    for key in sorted(engine.procs):
        proc = engine.procs[key]
        for consumer in proc.inst.spec.consumers:
            broker, _ = _broker(engine, proc, consumer)
            if broker is None:
                continue
            inst = proc.inst
            member = broker.data.groups.get(consumer.group)
            found = member.members.get(_member_key(inst)) if member is not None else None
            if found is None:
                continue
            labels = {"namespace": key[0], "pod": key[1], "container": key[2], "service": inst.spec.trace_name,
                      "client_id": consumer.client_id}
            worst = 0.0
            for topic, partition, committed, end in broker.lag(consumer.group):
                lag = max(0.0, end - committed) if committed is not None else 0.0
                worst = max(worst, lag)
                out.append(("kafka_consumer_records_lag", {**labels, "topic": topic, "partition": str(partition)},
                            float(int(lag)), "gauge"))
            out.append(("kafka_consumer_records_lag_max", labels, float(int(worst)), "gauge"))
            out.append(("kafka_consumer_records_consumed_total", labels, float(int(found.consumed)), "counter"))
    return out


def leave_groups(engine: DataPlaneEngine, proc: Proc) -> None:
    """A program shutting down cleanly: each consumer that closes its client leaves its group."""
    for consumer in proc.inst.spec.consumers:
        if not consumer.leaves_on_stop:
            continue
        broker, _ = _broker(engine, proc, consumer)
        if broker is not None:
            broker.leave(consumer.group, _member_key(proc.inst))


def _member_key(inst: Any) -> str:
    return f"{inst.namespace}/{inst.pod}/{inst.container}@{inst.started_at:.3f}"


def _broker(engine: DataPlaneEngine, proc: Proc, consumer: Consumer) -> tuple[Any, str]:
    """The broker this consumer's bootstrap address reaches, or (None, the client's error)."""
    return broker_of(engine, proc, consumer.dependency)


def broker_of(engine: DataPlaneEngine, proc: Proc, dependency: str) -> tuple[Any, str]:
    """The broker the `kind="kafka"` dependency's bootstrap address reaches, or (None, the error)."""
    from sregym.twin.datastores.kafka import KafkaBroker

    dep = proc.inst.deps.get(dependency)
    if dep is None:
        return None, ""
    route = engine.router.route(proc.pod_obj, dep.host, dep.port, connect_timeout_ms=dep.timeout_ms)
    error = ""
    for leg in route.legs:
        if not leg.result.ok:
            error = error or leg.result.message or leg.result.error or "connection refused"
            continue
        store = _store(engine, leg.result.dst_pod)
        if isinstance(store, KafkaBroker):
            return store, ""
        error = error or "Connection reset by peer"
    return None, error or "no endpoints"


def _poll(engine: DataPlaneEngine, proc: Proc, consumer: Consumer, dt: float) -> float:
    inst = proc.inst
    dep = inst.deps.get(consumer.dependency)
    if dep is None:
        return 0.0
    broker, error = _broker(engine, proc, consumer)
    if broker is None:
        _log(engine, proc, consumer, dep, error)
        return 0.0
    topic = _read(consumer.topic, inst) or "orders"
    rate = _rate(consumer, proc)
    before = positions(broker, consumer.group, topic)
    consumed = broker.poll(consumer.group, _member_key(inst), consumer.client_id, f"/{proc.pod_ip}", topic,
                           rate * dt, consumer.reset, blocks_on_unreadable=consumer.unreadable == "retry")
    member = broker.data.groups[consumer.group].members.get(_member_key(inst))
    if member is not None and member.stuck:
        _log_unreadable(engine, proc, consumer, member.stuck[0])
    if consumed > 0:
        log_records(engine, proc, consumer, broker, topic, before, member.consumed if member else consumed)
    return consumed


def _rate(consumer: Consumer, proc: Proc) -> float:
    """Records/s the loop can process: its own pace, and the CPU its record handler gets."""
    spec = proc.inst.spec
    if isinstance(consumer.max_rate, Setting):
        try:
            rate = float(_read(consumer.max_rate, proc.inst) or 0.0)
        except ValueError:
            rate = 0.0
    else:
        rate = float(consumer.max_rate)
    if consumer.slowed(proc.inst.settings):
        rate = min(rate, consumer.slow_rate)
    op = spec.operation(consumer.operation) if consumer.operation else None
    if op is not None and op.cpu_ms > 0:
        rate = min(rate, max(proc.cores, 0.0) * 1000.0 / op.cpu_ms)
    last = proc.results.get(consumer.operation) if consumer.operation else None
    if last is not None and last.mean > SEQUENTIAL_MS:
        # The loop handles one record at a time: a handler that waits (a database write stuck
        # behind a lock until the client's command timeout) bounds the records per second.
        rate = min(rate, 1000.0 / last.mean)
    return max(0.0, rate)


def _read(setting: Setting, inst: Any) -> str | None:
    ctx = inst.ctx
    return setting.read([], dict(getattr(ctx, "env", {}) or {}), dict(getattr(ctx, "files", {}) or {}),
                        inst.spec.config_file)


def _store(engine: DataPlaneEngine, pod: dict[str, Any] | None) -> Any:
    from sregym.twin.dataplane.backends import datastore_of

    return datastore_of(engine.twin, pod) if pod is not None else None


def _due(engine: DataPlaneEngine, proc: Proc, what: str) -> bool:
    """Whether a repeated complaint may be logged again (at most once per LOG_EVERY_S)."""
    now = engine.twin.clock.now
    key = (proc.inst.key, what)
    last = engine._error_budget.get(key)
    if last and now - last[0] < LOG_EVERY_S:
        return False
    engine._error_budget[key] = [now]
    return True


def _log_unreadable(engine: DataPlaneEngine, proc: Proc, consumer: Consumer, where: tuple[str, int, int]) -> None:
    """The handler's failure on the record it keeps retrying: the same offset every time."""
    if not consumer.unreadable_log or not _due(engine, proc, f"kafka-unreadable:{consumer.group}"):
        return
    from datetime import UTC, datetime

    now = engine.twin.clock.now
    topic, partition, offset = where
    text = consumer.unreadable_log.format(topic=topic, partition=partition, offset=offset, group=consumer.group,
                                          client_id=consumer.client_id,
                                          time=datetime.fromtimestamp(now, tz=UTC).strftime("%Y-%m-%d %H:%M:%S"))
    log_channel.write(engine.twin, proc.inst, now, text, level="error")


def _log(engine: DataPlaneEngine, proc: Proc, consumer: Consumer, dep: DependencyConfig, error: str) -> None:
    """The client's complaint that it cannot reach the broker, at most once per LOG_EVERY_S."""
    now = engine.twin.clock.now
    if not _due(engine, proc, f"kafka-consumer:{consumer.group}"):
        return
    instance = engine.runtime.instance(*proc.inst.key)
    logs = engine.twin.services.logs
    if instance is None or logs is None:
        return
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(now, tz=UTC)
    text = consumer.error_log.format(error=error, host=dep.host, port=dep.port, group=consumer.group,
                                     client_id=consumer.client_id, time=moment.strftime("%Y-%m-%d %H:%M:%S"),
                                     epoch=f"{now:.3f}")
    log_channel.write(engine.twin, proc.inst, now, text, level="error")


__all__ = ["broker_of", "consumer_metrics", "leave_groups", "poll_consumers"]
