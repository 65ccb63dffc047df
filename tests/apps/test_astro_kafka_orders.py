"""Astronomy Shop's Kafka side on one twin: checkout publishes every order to `orders`, the
`accounting` and `fraud-detection` groups consume it (accounting's rows in PostgreSQL, both
services' per-record logs), a dead consumer's lag grows and drains when it returns, a broker
scaled away fails checkout's publishes, and `kafkaQueueProblems` floods the topic while
fraud-detection slows to a record a second."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401 - registers the kafka tools and psql
from sregym.apps.astronomy_shop.kafka_programs import FLAG, OVERLOAD
from sregym.twin import Twin
from sregym.twin.dataplane.consumer_records import Record
from sregym.twin.dataplane.spec import Consumer
from sregym.twin.telemetry.promql import Engine
from sregym.twin.userland.context import exec_context, run_exec
from support.astro_twin import flip_flag, warm_astro_twin

NS = "astronomy-shop"
GROUPS = "/opt/kafka/bin/kafka-consumer-groups.sh"


@pytest.fixture(scope="module")
def shop() -> Twin:
    return warm_astro_twin(seed=7, advance_s=150)


def _pod(twin: Twin, prefix: str) -> dict[str, Any]:
    return next(p for p in twin.list("pods", NS)
                if p["metadata"]["name"].startswith(prefix + "-") and not p["metadata"].get("deletionTimestamp"))


def _logs(twin: Twin, name: str) -> str:
    return twin.logs(NS, _pod(twin, name)["metadata"]["name"], name)


def _exported(twin: Twin, name: str) -> str:
    """The bodies a service sent over OTLP (checkout logs only there: slog → otelslog)."""
    from sregym.twin.telemetry.otlp_logs import otlp_logs

    return "".join(r.body + "\n" for res, records in otlp_logs(twin).resources()
                   if res.get("service.name") == name for r in records)


def _describe(twin: Twin, group: str) -> tuple[str, list[str]]:
    """kafka-consumer-groups.sh --describe in the kafka pod: its output and the group's row."""
    result = run_exec(exec_context(twin, _pod(twin, "kafka"), "kafka"),
                      [GROUPS, "--bootstrap-server", "kafka:9092", "--describe", "--group", group])
    assert result.exit_code == 0, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith(group + " "))
    return result.stdout, row.split()


def _rows(twin: Twin, table: str) -> int:
    result = run_exec(exec_context(twin, _pod(twin, "postgresql"), "postgresql"),
                      ["psql", "-U", "otelu", "-d", "otel", "-tAc", f"SELECT count(*) FROM {table}"])
    assert result.exit_code == 0, result.stderr
    return int(result.stdout.strip())


def _scale(twin: Twin, name: str, replicas: int) -> None:
    twin.patch("Deployment", NS, name, {"spec": {"replicas": replicas}})


def _metric(twin: Twin, query: str) -> dict[str, float]:
    assert twin.services.tsdb is not None
    result = Engine(twin.services.tsdb).instant(query, int(twin.clock.now * 1000)).to_api()["result"]
    return {r["metric"].get("client_id", ""): float(r["value"][1]) for r in result}


def _check_orders_flow(twin: Twin) -> None:
    for group in ("accounting", "fraud-detection"):
        _, row = _describe(twin, group)
        assert row[1:3] == ["orders", "0"] and int(row[4]) >= 5 and int(row[5]) <= 1, row
    _, row = _describe(twin, "accounting")
    assert row[8] == "rdkafka" and _describe(twin, "fraud-detection")[1][8] == "consumer-fraud-detection-1"
    consumed = int(row[3])
    assert _rows(twin, 'accounting."order"') == consumed == _rows(twin, "accounting.shipping")
    assert _rows(twin, "accounting.orderitem") >= consumed
    accounting, fraud = _logs(twin, "accounting"), _logs(twin, "fraud-detection")
    assert "info: Accounting.Consumer[0]\n      Connecting to Kafka: kafka:9092\n" in accounting
    details = [line for line in accounting.splitlines() if line.startswith("      Order details: { \"orderId\": \"")]
    assert len(details) == consumed and details[-1].endswith(" ] }.")
    order_id = details[-1].split('"')[3]
    assert (f" - fraud-detection - Consumed record with orderId: {order_id}, and updated total count to: "
            in fraud)  # the same record, the same order in both consumers
    assert "Failed to write message" not in _exported(twin, "checkout")
    assert _logs(twin, "checkout") == ""  # nothing on stdout
    assert "order placed" in _exported(twin, "checkout")
    publish = [s for s in twin.services.traces.spans() if s.operation == "orders publish"]
    assert publish and not any(s.error for s in publish) and publish[-1].tags["messaging.destination.name"] == "orders"
    lag = _metric(twin, "kafka_consumer_records_lag_max")
    assert set(lag) == {"rdkafka", "consumer-fraud-detection-1"} and max(lag.values()) <= 1


def _check_dead_consumer(twin: Twin) -> None:
    _, before = _describe(twin, "fraud-detection")
    _scale(twin, "fraud-detection", 0)
    twin.advance(120)
    out, row = _describe(twin, "fraud-detection")
    assert out.startswith("\nConsumer group 'fraud-detection' has no active members.\n")
    assert int(row[3]) == int(before[3]) and int(row[5]) >= 5  # its lag grows with every order
    _, accounting = _describe(twin, "accounting")
    assert int(accounting[5]) <= 1 and int(accounting[4]) == int(row[4])  # the other group keeps up
    assert set(_metric(twin, "kafka_consumer_records_lag_max")) == {"rdkafka"}  # a dead process reports nothing
    _scale(twin, "fraud-detection", 1)
    twin.advance(60)
    _, row = _describe(twin, "fraud-detection")
    assert int(row[5]) <= 1  # back, it drained the backlog from its committed offset


def _check_broker_down(twin: Twin) -> None:
    _scale(twin, "kafka", 0)
    twin.advance(90)
    checkout = _exported(twin, "checkout")
    assert "Failed to write message: kafka: client has run out of available brokers to talk to: dial tcp " \
        in checkout
    recent = [s for s in twin.services.traces.spans() if s.start_us >= (twin.clock.now - 60) * 1e6]
    publish = [s for s in recent if s.service == "checkout" and s.operation == "orders publish"]
    assert publish and all(s.kind == "producer" and s.error for s in publish)
    assert publish[-1].tags["messaging.kafka.producer.success"] is False
    assert publish[-1].message.startswith("kafka: client has run out of available brokers to talk to: ")
    assert not any(s.error for s in recent if s.operation == "oteldemo.CheckoutService/PlaceOrder")  # orders succeed
    assert "|FAIL|rdkafka#consumer-1| [thrd:kafka:9092/bootstrap]: kafka:9092/bootstrap: Connect to " \
        in _logs(twin, "accounting")
    _scale(twin, "kafka", 1)
    twin.advance(90)
    for group in ("accounting", "fraud-detection"):  # a new broker without a volume: a new, empty log
        _, row = _describe(twin, group)
        assert int(row[4]) >= 1 and int(row[5]) <= 1, row


def _check_queue_problems(twin: Twin) -> None:
    """The flag turned on as an SRE or a fault would: `defaultVariant` edited in the ConfigMap, then
    flagd restarted (the chart's init container copies the ConfigMap, so flagd reads it at start)."""
    flip_flag(twin, FLAG, "on")
    twin.advance(30)
    _, before = _describe(twin, "fraud-detection")
    twin.advance(60)
    _, row = _describe(twin, "fraud-detection")
    produced = int(row[4]) - int(before[4])
    assert produced >= 3 * (OVERLOAD + 1)  # each order and a hundred copies
    assert int(row[3]) - int(before[3]) <= 61 and int(row[5]) >= produced - 61  # a record a second
    _, accounting = _describe(twin, "accounting")
    assert int(accounting[5]) <= 1
    assert " - fraud-detection - FeatureFlag 'kafkaQueueProblems' is enabled, sleeping 1 second trace_id=" \
        in _logs(twin, "fraud-detection")


def test_orders_flow_through_kafka(shop: Twin) -> None:
    """One story on one twin (xdist may tear a module fixture down between tests)."""
    _check_orders_flow(shop)
    _check_dead_consumer(shop)
    _check_broker_down(shop)
    _check_queue_problems(shop)


def test_queue_problems_gate_follows_the_flag_value() -> None:
    from sregym.apps.astronomy_shop.kafka_programs import checkout_kafka

    _, (publish, overload) = checkout_kafka()
    assert publish.feature is None and overload.count == OVERLOAD
    assert overload.feature_enabled({FLAG: "100"}) and not overload.feature_enabled({FLAG: "0"})
    assert Consumer(dependency="kafka", group="g", slow_when=f"{FLAG}!=0").slowed({FLAG: "100"})


def test_records_render_the_same_order_for_every_consumer() -> None:
    from sregym.apps.astronomy_shop.order_records import accounting_lines, fraud_detection_lines, order_id

    record = Record("orders", 0, 41, 1_700_000_000.0, 3, "accounting")
    same = Record("orders", 0, 41, 1_700_000_100.0, 9, "fraud-detection")
    uid = order_id(record)
    assert uid == order_id(same) and uid[14] == "1" and uid != order_id(Record("orders", 0, 42, 0.0, 1, "x"))
    assert accounting_lines(record)[1].startswith(f'      Order details: {{ "orderId": "{uid}", "shippingTrackingId": ')
    assert fraud_detection_lines(same)[0].startswith(
        f"2023-11-14 22:15:00 - fraud-detection - Consumed record with orderId: {uid}, and updated total count to: 9 "
        "trace_id=")
