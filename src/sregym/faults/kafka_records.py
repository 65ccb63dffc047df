"""A record its consumers cannot read, written to a Kafka topic from inside the broker's pod: what
someone testing by hand does with `kafka-console-producer.sh` (a line of text on a topic of
protobuf messages). Nothing in the cluster's objects changes; the record sits in the log, and
a consumer that retries what it cannot deserialize stops at it.

Recover moves each named group one record past it, the way an operator skips a record
(`kafka-consumer-groups.sh --reset-offsets --to-offset`), unless the group is already past it.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from sregym.faults.app_config import running_pod
from sregym.faults.base import Fault, FaultParams, fault

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

BIN = "/opt/kafka/bin/"


class KafkaRecordParams(FaultParams):
    namespace: str
    deployment: str  # the broker's Deployment ("kafka")
    topic: str
    value: str  # the text line produced
    groups: tuple[str, ...]  # the consumer groups recover moves past the record
    bootstrap: str = "localhost:9092"


def kafka_tool(cluster: Cluster, p: KafkaRecordParams, script: str) -> str:
    """Run one Kafka shell command in the broker's pod; raise on failure."""
    pod = running_pod(cluster, p.namespace, p.deployment)
    result = cluster.exec(p.namespace, pod, ["sh", "-c", script])
    if result.exit_code != 0:
        raise RuntimeError(f"{script.split()[0]} in {pod} failed ({result.exit_code}): {result.stderr}")
    return result.stdout


def committed(cluster: Cluster, p: KafkaRecordParams, group: str) -> dict[int, tuple[int | None, int]]:
    """partition → (committed offset or None, log-end offset) of `group` on the topic."""
    out = kafka_tool(cluster, p, f"{BIN}kafka-consumer-groups.sh --bootstrap-server {p.bootstrap} --describe "
                                 f"--group {shlex.quote(group)}")
    rows: dict[int, tuple[int | None, int]] = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) >= 6 and cells[0] == group and cells[1] == p.topic and cells[2].isdigit():
            rows[int(cells[2])] = (int(cells[3]) if cells[3].isdigit() else None, int(cells[4]))
    return rows


@fault
class KafkaUnreadableRecord(Fault):
    """One text record produced to a topic whose consumers expect protobuf messages."""

    name = "kafka_unreadable_record"
    Params = KafkaRecordParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, KafkaRecordParams)
        kafka_tool(cluster, p, f"echo {shlex.quote(p.value)} | {BIN}kafka-console-producer.sh --bootstrap-server "
                               f"{p.bootstrap} --topic {shlex.quote(p.topic)}")
        # The record is the last one of the first partition (the demo's `orders` has only one;
        # on a topic with more, the console producer's sticky partition is not known here).
        ends = committed(cluster, p, p.groups[0]) if p.groups else {}
        partition = min(ends) if ends else 0
        return {"partition": partition, "offset": ends[partition][1] - 1 if ends else 0}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, KafkaRecordParams)
        partition, offset = int(state.get("partition", 0)), int(state.get("offset", 0))
        for group in p.groups:
            current = committed(cluster, p, group).get(partition, (None, 0))[0]
            if current is not None and current <= offset:
                kafka_tool(cluster, p, f"{BIN}kafka-consumer-groups.sh --bootstrap-server {p.bootstrap} "
                                       f"--reset-offsets --group {shlex.quote(group)} --topic "
                                       f"{shlex.quote(p.topic)}:{partition} --to-offset {offset + 1} --execute")
