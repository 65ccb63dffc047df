"""`kafka-producer-perf-test.sh`: the Kafka image's load generator, against the twin's broker.

It produces `--num-records` records of `--record-size` bytes to `--topic`, paced to
`--throughput` records/s (-1: as fast as the client can push them; here bounded by a 1 Gbit/s
link and by its `buffer.memory` of records in flight), and every five seconds prints the
window's line ("N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency.").
The Java producer refuses a record above its own `max.request.size` before sending it
(`RecordTooLargeException`); the broker refuses one above its `message.max.bytes`; a broker that
stops answering leaves each batch to expire after `delivery.timeout.ms`. Run as a container's
command it is a long-lived process that keeps producing: a flood a team can forget in a pod.
"""

from __future__ import annotations

from sregym.twin.datastores.kafka import RECORD_TOO_LARGE, KafkaBroker
from sregym.twin.datastores.kafka_heap import DEFAULT_MAX_REQUEST_SIZE, MIB
from sregym.twin.node.shell import Invocation, command
from sregym.twin.node.shell.effects import Sleep, Usage
from sregym.twin.userland.kafka_tools import connect_bootstrap

LINK_BYTES_PER_S = 125_000_000.0  # 1 Gbit/s
REPORT_EVERY_S = 5
DELIVERY_TIMEOUT_MS = 120000
JVM_MEMORY_MB = 180.0


def _props(args: list[str]) -> dict[str, str]:
    """The `key=value` words after `--producer-props` (up to the next option)."""
    props: dict[str, str] = {}
    if "--producer-props" not in args:
        return props
    for word in args[args.index("--producer-props") + 1:]:
        if word.startswith("--"):
            break
        key, _, value = word.partition("=")
        props[key] = value
    return props


def _value(args: list[str], name: str, default: str) -> str:
    if name in args and args.index(name) + 1 < len(args):
        return args[args.index(name) + 1]
    return default


@command("kafka-producer-perf-test.sh")
def kafka_producer_perf_test(call: Invocation):  # type: ignore[no-untyped-def]
    args = list(call.args)
    topic = _value(args, "--topic", "")
    props = _props(args)
    server = props.get("bootstrap.servers", "")
    if not topic or not server or "--record-size" not in args:
        call.error("Missing required argument: --topic, --record-size and --producer-props bootstrap.servers")
        return 1
    size = float(_value(args, "--record-size", "100"))
    total = float(_value(args, "--num-records", "0"))
    throughput = float(_value(args, "--throughput", "-1"))
    max_request = float(props.get("max.request.size", DEFAULT_MAX_REQUEST_SIZE))
    buffer_bytes = float(props.get("buffer.memory", 32 * MIB))
    yield Usage(memory_bytes=int((JVM_MEMORY_MB * MIB) + min(buffer_bytes, 64 * MIB)), cpu_cores=0.3)
    if size > max_request:
        call.error(f"org.apache.kafka.common.errors.RecordTooLargeException: The message is {int(size) + 87} bytes "
                   f"when serialized which is larger than {int(max_request)}, which is the value of the "
                   "max.request.size configuration.")
        return 1
    per_second = LINK_BYTES_PER_S / max(size, 1.0)
    if throughput > 0:
        per_second = min(per_second, throughput)
    sent = 0.0
    window = 0.0
    pending: list[tuple[int, float]] = []  # (second sent, records) the broker never acknowledged
    elapsed = 0
    while total <= 0 or sent < total:
        batch = per_second if total <= 0 else min(per_second, total - sent)
        broker, _kind, _addr = connect_bootstrap(call, server)
        error = broker.receive(topic, batch, size) if isinstance(broker, KafkaBroker) else "unreachable"
        if error is None:
            sent += batch
            window += batch
        else:
            pending.append((elapsed, batch))
        if error == RECORD_TOO_LARGE:
            call.error("org.apache.kafka.common.errors.RecordTooLargeException: " + RECORD_TOO_LARGE)
            return 1
        yield Sleep(1.0)
        elapsed += 1
        if elapsed % REPORT_EVERY_S == 0:
            if window > 0:
                rate = window / REPORT_EVERY_S
                latency = 1000.0 * size / LINK_BYTES_PER_S
                call.write(f"{int(window)} records sent, {rate:.1f} records/sec ({rate * size / MIB:.2f} MB/sec), "
                           f"{latency:.1f} ms avg latency, {latency * 2.5:.1f} ms max latency.\n")
            expired = sum(n for at, n in pending if elapsed - at >= DELIVERY_TIMEOUT_MS / 1000)
            pending = [(at, n) for at, n in pending if elapsed - at < DELIVERY_TIMEOUT_MS / 1000]
            if expired > 0:
                call.error(f"org.apache.kafka.common.errors.TimeoutException: Expiring {int(expired)} record(s) for "
                           f"{topic}-0:{DELIVERY_TIMEOUT_MS} ms has passed since batch creation")
            window = 0.0
    return 0


__all__ = ["kafka_producer_perf_test"]
