"""The Kafka images: `apache/kafka` (KRaft, combined controller+broker) and what the broker prints.

The image's entrypoint (`/__cacert_entrypoint.sh /etc/kafka/docker/run`) turns `KAFKA_*`
environment variables into `server.properties` and starts the JVM; the broker listens on the
`PLAINTEXT` listener (9092) and the controller on `CONTROLLER` (9093). Its heap comes from
`KAFKA_HEAP_OPTS` (`-Xms` is committed up front, so a memory limit below it OOM-kills the pod).
The tools an operator runs live in `/opt/kafka/bin` (not on PATH); the userland's
`kafka_tools.py` implements them. The demo's own Kafka image is this image plus an OTel agent:
an app registers it with `register_demo_kafka(catalogue, repository, tags)`.
"""

from __future__ import annotations

import re
from typing import Any

from sregym.twin.datastores.kafka import image_env, listener_port, log_stamp
from sregym.twin.datastores.kafka_heap import heap_mb
from sregym.twin.node import images
from sregym.twin.node.images import ImageSpec, register_image
from sregym.twin.node.shell import Invocation, Program

BIN = "/opt/kafka/bin"
TOOLS = ("kafka-topics.sh", "kafka-consumer-groups.sh", "kafka-console-consumer.sh", "kafka-console-producer.sh",
         "kafka-broker-api-versions.sh", "kafka-producer-perf-test.sh")  # `userland/kafka_tools.py`, `kafka_perf.py`
BINARIES = (*(f"{BIN}/{name}" for name in TOOLS), "/etc/kafka/docker/run", "/__cacert_entrypoint.sh",
            "/bin/bash", "/opt/java/openjdk/bin/java")
KAFKA_TAGS = ("3.7.0", "3.7.1", "3.7.2", "3.8.0", "3.8.1", "3.9.0", "3.9.1", "4.0.0", "latest")
COMMIT_IDS = {"3.7.0": "2ae524ed625438c5"}  # `Kafka commitId:` of releases we know
# The apache/kafka release each demo minor builds FROM (src/kafka/Dockerfile).
DEMO_BASE = {"2.0": "3.7.0", "2.1": "3.9.1", "2.2": "3.9.1"}
# The demo's Dockerfile (src/kafka) sets these ENV on top of apache/kafka.
DEMO_ENV = {"KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0", "KAFKA_PROCESS_ROLES": "controller,broker",
            "KAFKA_NODE_ID": "1", "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "true",
            "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1", "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
            "KAFKA_OPTS": "-javaagent:/tmp/opentelemetry-javaagent.jar -Dotel.jmx.target.system=kafka-broker",
            "CLUSTER_ID": "ckjPoprWQzOf0-FuNkGfFQ"}


def _image_of(call: Invocation) -> str:
    from sregym.twin.node.runtime import runtime_of

    ctx = call.ctx
    meta = (ctx.pod or {}).get("metadata") or {}
    instance = runtime_of(ctx.twin).instance(meta.get("namespace", "default"), meta.get("name", ""),
                                             ctx.container) if ctx.twin is not None else None
    return instance.image if instance is not None else ""


def _version(call: Invocation) -> str:
    """Kafka's version: the apache/kafka tag, or the base of a demo build (`2.0.2-kafka`)."""
    image = _image_of(call)
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else "latest"
    if tag.endswith("-kafka"):
        return DEMO_BASE.get(".".join(tag.split(".")[:2]), "3.9.1")
    match = re.match(r"\d+\.\d+\.\d+", tag)
    return match.group(0) if match else "3.9.1"


def _broker(call: Invocation) -> Program:
    """`/etc/kafka/docker/run`: configure from env, then the JVM's KRaft server."""
    env = {**image_env(call.ctx.twin, _image_of(call)), **call.shell.exported_env()}
    version = _version(call)
    now = call.now
    node = env.get("KAFKA_NODE_ID", "1")
    cluster = env.get("CLUSTER_ID", "")
    port = listener_port(env.get("KAFKA_LISTENERS", "PLAINTEXT://:9092"))
    controller = listener_port(env.get("KAFKA_LISTENERS", ""), "CONTROLLER") \
        if "CONTROLLER://" in env.get("KAFKA_LISTENERS", "") else 9093
    committed, _ = heap_mb(env.get("KAFKA_HEAP_OPTS", ""))
    stamp = log_stamp(now)

    def line(text: str, logger: str) -> str:
        return f"[{stamp}] INFO {text} ({logger})"

    logs = ["===> User", "uid=1000(appuser) gid=1000(appuser) groups=1000(appuser)",
            "===> Setting default values of environment variables if not already set."]
    if not cluster:
        cluster = "5L6g3nShT-eMCtK--X86sw"
        logs.append(f'CLUSTER_ID not set. Setting it to default value: "{cluster}"')
    logs += ["===> Configuring ...", "Running in KRaft mode...", "===> Launching ... ",
             "===> Using provided cluster id " + cluster + " ...",
             line("Registered kafka:type=kafka.Log4jController MBean", "kafka.utils.Log4jControllerRegistration$"),
             line(f"[ControllerServer id={node}] Starting controller", "kafka.server.ControllerServer"),
             line(f"[BrokerServer id={node}] Transition from SHUTDOWN to STARTING", "kafka.server.BrokerServer"),
             line(f"Awaiting socket connections on 0.0.0.0:{port}.", "kafka.network.DataPlaneAcceptor"),
             line(f"[BrokerServer id={node}] Transition from STARTING to STARTED", "kafka.server.BrokerServer"),
             line(f"Kafka version: {version}", "org.apache.kafka.common.utils.AppInfoParser")]
    if version in COMMIT_IDS:
        logs.append(line(f"Kafka commitId: {COMMIT_IDS[version]}", "org.apache.kafka.common.utils.AppInfoParser"))
    logs += [line(f"Kafka startTimeMs: {int(now * 1000)}", "org.apache.kafka.common.utils.AppInfoParser"),
             line(f"[KafkaRaftServer nodeId={node}] Kafka Server started", "kafka.server.KafkaRaftServer")]
    return (yield from images.serve(call, ports=(port, controller), http_paths=None, startup_seconds=5,
                                    memory_mb=committed + 160, cpu_cores=0.02, logs=logs))


def _cacert_entrypoint(call: Invocation) -> Program:
    """`/__cacert_entrypoint.sh`: imports CA certificates when asked, then execs its arguments."""
    args = list(call.args) or ["/etc/kafka/docker/run"]
    return (yield from images.exec_rest(call, args))


def kafka_image(repository: str, tags: tuple[str, ...], **extras: Any) -> ImageSpec:
    """An image that is (or is built FROM) apache/kafka: its entrypoint, broker and tools."""
    return ImageSpec(repository, tags, size_mb=390.0, description="Apache Kafka", ports=(9092, 9093),
                     memory_mb=560, entrypoint=("/__cacert_entrypoint.sh",), cmd=("/etc/kafka/docker/run",),
                     shell="ash", commands={"run": _broker, "__cacert_entrypoint.sh": _cacert_entrypoint},
                     # FROM eclipse-temurin:21-jre-alpine, `apk add bash`: BusyBox ash as sh, bash beside it
                     extras={"datastore": "kafka", "family": "alpine", "add_binaries": BINARIES, **extras})


def register_demo_kafka(catalogue: Any, repository: str, tags: tuple[str, ...]) -> ImageSpec:
    """Push the demo's Kafka build (`ghcr.io/open-telemetry/demo:<v>-kafka`) to a twin's catalogue.

    Every service of the demo shares that repository; the broker model only answers for the
    containers that run the broker (`kafka.runs_broker`), so marking the repository is harmless."""
    return catalogue.register(kafka_image(repository, tags, kafka_env=DEMO_ENV))


def register() -> None:
    register_image(kafka_image("docker.io/apache/kafka", KAFKA_TAGS))


register()
