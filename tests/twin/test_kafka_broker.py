"""Kafka on the twin: a KRaft broker, a producer program and a consumer program, the group's lag
as producers and consumers come and go, and the image's tools (`/opt/kafka/bin/*.sh`)."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401 - registers the kafka tools
from sregym.twin.dataplane.programs import program_image
from sregym.twin.dataplane.spec import (
    Call,
    Consumer,
    Dependency,
    Operation,
    ProgramSpec,
    Setting,
    register_program,
)
from sregym.twin.dataplane.workload import RequestMix, WorkloadSpec
from sregym.twin.datastores import datastore_for
from sregym.twin.datastores.kafka import KafkaBroker
from sregym.twin.node.images import catalogue_of
from sregym.twin.telemetry.promql import Engine
from sregym.twin.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec

BROKER = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: kafka, namespace: default}
spec:
  replicas: %d
  selector: {matchLabels: {app: kafka}}
  template:
    metadata: {labels: {app: kafka}}
    spec:
      containers:
      - name: kafka
        image: apache/kafka:3.7.0
        ports: [{containerPort: 9092}, {containerPort: 9093}]
        env:
        - {name: KAFKA_ADVERTISED_LISTENERS, value: "PLAINTEXT://kafka:9092"}
        - {name: KAFKA_LISTENERS, value: "PLAINTEXT://:9092,CONTROLLER://:9093"}
        - {name: KAFKA_CONTROLLER_LISTENER_NAMES, value: CONTROLLER}
        - {name: KAFKA_CONTROLLER_QUORUM_VOTERS, value: "1@kafka:9093"}
        - {name: KAFKA_HEAP_OPTS, value: "-Xmx400M -Xms400M"}
"""
APPS = """
apiVersion: v1
kind: Service
metadata: {name: kafka, namespace: default}
spec: {selector: {app: kafka}, ports: [{name: plaintext, port: 9092}, {name: controller, port: 9093}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers:
      - {name: shop, image: "ghcr.io/example/kt-shop:1.0", command: [kt-checkout],
         env: [{name: KAFKA_ADDR, value: "kafka:9092"}]}
---
apiVersion: v1
kind: Service
metadata: {name: shop, namespace: default}
spec: {selector: {app: shop}, ports: [{port: 8080}]}
---
apiVersion: v1
kind: Pod
metadata: {name: kafka-client, namespace: default}
spec:
  containers: [{name: c, image: "apache/kafka:3.7.0", command: [sleep, "3600"]}]
"""
CONSUMER = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: ledger, namespace: default}
spec:
  replicas: %d
  selector: {matchLabels: {app: ledger}}
  template:
    metadata: {labels: {app: ledger}}
    spec:
      containers:
      - {name: ledger, image: "ghcr.io/example/kt-shop:1.0", command: [kt-ledger],
         env: [{name: KAFKA_ADDR, value: "kafka:9092"}]}
"""
TOOLS = "/opt/kafka/bin/"


@pytest.fixture(scope="module")
def twin() -> Twin:
    kafka = Dependency(name="kafka", kind="kafka", address=Setting(env="KAFKA_ADDR"),
                       error_log="Failed to write message: {error}")
    register_program(ProgramSpec(
        name="kt-checkout", protocol="http", port=Setting(default="8080"), dependencies=(kafka,),
        operations=(Operation(name="/order", method="POST",
                              calls=(Call(dependency="kafka", operation="produce", collection="orders"),)),)))
    register_program(ProgramSpec(
        name="kt-ledger", protocol="http", port=Setting(default="8081"), dependencies=(kafka,),
        operations=(Operation(name="record", cpu_ms=2.0),),
        consumers=(Consumer(dependency="kafka", group="ledger", client_id="rdkafka", operation="record",
                            max_rate=30.0),)))
    twin = Twin(seed=11)
    catalogue_of(twin).register(program_image("ghcr.io/example/kt-shop", ("1.0",), ["kt-checkout", "kt-ledger"]))
    twin.apply(BROKER % 1 + "---" + APPS + "---" + CONSUMER % 1)
    twin.advance(15)
    twin.services.dataplane.add_workload(WorkloadSpec(name="orders", target="http://shop.default:8080", rps=20.0,
                                                      mix=(RequestMix(operation="/order", method="POST"),)))
    twin.advance(60)
    return twin


def _pod(twin: Twin, prefix: str) -> dict[str, Any]:
    return next(p for p in twin.list("pods", "default")
                if p["metadata"]["name"].startswith(prefix + "-") and not p["metadata"].get("deletionTimestamp"))


def _tool(twin: Twin, *argv: str) -> tuple[str, str, int]:
    result = run_exec(exec_context(twin, _pod(twin, "kafka"), "kafka"), [TOOLS + argv[0], *argv[1:]])
    return result.stdout, result.stderr, result.exit_code


def _lag(twin: Twin) -> tuple[int, int]:
    """(current offset, lag) of the group's one partition, parsed from kafka-consumer-groups.sh."""
    out, _, code = _tool(twin, "kafka-consumer-groups.sh", "--bootstrap-server", "kafka:9092", "--describe",
                         "--group", "ledger")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("ledger "))
    cells = row.split()
    return int(cells[3]), int(cells[5])


def _check_warm(twin: Twin) -> None:
    out, _, code = _tool(twin, "kafka-topics.sh", "--bootstrap-server", "localhost:9092", "--list")
    assert (code, out) == (0, "__consumer_offsets\norders\n")
    out, _, _ = _tool(twin, "kafka-topics.sh", "--bootstrap-server", "kafka:9092", "--describe", "--topic", "orders")
    assert out.startswith("Topic: orders\tTopicId: ")
    assert "\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n" in out
    assert "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1" in out
    out, _, _ = _tool(twin, "kafka-consumer-groups.sh", "--bootstrap-server", "kafka:9092", "--describe",
                      "--group", "ledger")
    lines = out.splitlines()
    assert lines[0] == ""
    assert lines[1].split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                                "CONSUMER-ID", "HOST", "CLIENT-ID"]
    assert lines[1].startswith("GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG ")
    cells = lines[2].split()
    assert cells[:3] == ["ledger", "orders", "0"] and cells[6].startswith("rdkafka-") and cells[8] == "rdkafka"
    assert int(cells[4]) >= 20 * 55 and int(cells[5]) <= 40  # the consumer keeps up with 20 orders/s
    logs = twin.logs("default", _pod(twin, "kafka")["metadata"]["name"], "kafka")
    assert "INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)" in logs
    assert "[GroupCoordinator 1]: Stabilized group ledger generation 1 (__consumer_offsets-" in logs
    # The consumer process reports its client metrics (scraped every 15 s).
    tsdb = twin.services.tsdb
    assert tsdb is not None
    result = Engine(tsdb).instant('kafka_consumer_records_consumed_total{client_id="rdkafka"}',
                                  int(twin.clock.now * 1000)).to_api()["result"]
    assert len(result) == 1 and float(result[0]["value"][1]) > 20 * 30


def _check_dead_consumer(twin: Twin) -> None:
    _, before = _lag(twin)
    twin.apply(CONSUMER % 0)
    twin.advance(90)
    out, _, _ = _tool(twin, "kafka-consumer-groups.sh", "--bootstrap-server", "kafka:9092", "--describe",
                      "--all-groups")
    assert out.startswith("\nConsumer group 'ledger' has no active members.\n\nGROUP ")
    row = next(line for line in out.splitlines() if line.startswith("ledger "))
    assert row.split()[6:] == ["-", "-", "-"]
    _, lag = _lag(twin)
    assert lag >= before + 20 * 80
    logs = twin.logs("default", _pod(twin, "kafka")["metadata"]["name"], "kafka")
    assert "in group ledger has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)" in logs
    assert "Group ledger with generation 2 is now empty" in logs


def _check_restored_consumer(twin: Twin) -> None:
    current, lag = _lag(twin)
    twin.apply(CONSUMER % 1)
    twin.advance(60)
    new_current, new_lag = _lag(twin)
    assert new_current >= current + 30 * 30  # it resumed from the committed offset at its full rate
    assert new_lag <= lag - 10 * 30


def _check_stopped_broker(twin: Twin) -> None:
    broker = datastore_for(twin, _pod(twin, "kafka"))
    assert isinstance(broker, KafkaBroker)
    twin.apply(BROKER % 0)
    twin.advance(30)
    shop = _pod(twin, "shop")["metadata"]["name"]
    logs = twin.logs("default", shop, "shop")
    assert "Failed to write message: kafka: client has run out of available brokers to talk to: dial tcp " in logs
    client = twin.store.peek("Pod", "default", "kafka-client")
    assert client is not None
    result = run_exec(exec_context(twin, client, "c"), [TOOLS + "kafka-consumer-groups.sh", "--bootstrap-server",
                                                        "kafka:9092", "--list"])
    assert result.exit_code == 1
    assert result.stdout == ("Error: Executing consumer group command failed due to org.apache.kafka.common."
                             "errors.TimeoutException: Timed out waiting for a node assignment. Call: "
                             "listConsumerGroups\n")
    assert "WARN [AdminClient clientId=adminclient-1] Connection to node -1 (kafka/" in result.stderr


def _check_restarted_broker(twin: Twin, end_before: int) -> None:
    """Without a volume under /tmp/kraft-combined-logs a new broker starts with an empty log."""
    twin.apply(BROKER % 1)
    twin.advance(40)
    out, _, _ = _tool(twin, "kafka-consumer-groups.sh", "--bootstrap-server", "kafka:9092", "--describe",
                      "--group", "ledger")
    row = next(line for line in out.splitlines() if line.startswith("ledger ")).split()
    assert int(row[4]) < end_before and row[6].startswith("rdkafka-")


def test_consumer_slow_path_follows_its_setting() -> None:
    consumer = Consumer(dependency="kafka", group="g", slow_when="KAFKA_QUEUE_PROBLEMS=on", slow_rate=1.0)
    assert consumer.slowed({"KAFKA_QUEUE_PROBLEMS": "on"})
    assert not consumer.slowed({"KAFKA_QUEUE_PROBLEMS": "off"})


def test_lag_follows_the_consumer_and_the_broker(twin: Twin) -> None:
    """One story on one twin (xdist may tear a module fixture down between tests): warm, the
    consumer dies, comes back, then the broker stops."""
    _check_warm(twin)
    _check_dead_consumer(twin)
    _check_restored_consumer(twin)
    end_before = _lag(twin)[0]
    _check_stopped_broker(twin)
    _check_restarted_broker(twin, end_before)


def test_unresolvable_bootstrap_server(twin: Twin) -> None:
    """From a pod of the Kafka image (the tools ship only there)."""
    server = "kafak:9092"
    client = twin.store.peek("Pod", "default", "kafka-client")
    assert client is not None
    result = run_exec(exec_context(twin, client, "c"), [TOOLS + "kafka-topics.sh", "--bootstrap-server", server,
                                                        "--list"])
    assert result.exit_code == 1
    assert result.stdout == "Error while executing topic command : Failed to create new KafkaAdminClient\n"
    assert ("WARN Couldn't resolve server kafak:9092 from bootstrap.servers as DNS resolution failed for kafak "
            "(org.apache.kafka.clients.ClientUtils)") in result.stderr


def test_demo_kafka_build_runs_the_broker_with_its_dockerfile_env() -> None:
    from sregym.twin.datastores.kafka_image import register_demo_kafka

    twin = Twin(seed=4)
    register_demo_kafka(catalogue_of(twin), "ghcr.io/open-telemetry/demo", ("2.0.2-kafka",))
    twin.apply("""
apiVersion: v1
kind: Pod
metadata: {name: kafka, namespace: default}
spec:
  containers: [{name: kafka, image: "ghcr.io/open-telemetry/demo:2.0.2-kafka"}]
""")
    twin.advance(10)
    pod = twin.store.peek("Pod", "default", "kafka")
    assert isinstance(datastore_for(twin, pod), KafkaBroker)
    logs = twin.logs("default", "kafka", "kafka")
    assert "===> Using provided cluster id ckjPoprWQzOf0-FuNkGfFQ ..." in logs and "CLUSTER_ID not set" not in logs
    assert "INFO Kafka version: 3.7.0 (org.apache.kafka.common.utils.AppInfoParser)" in logs
