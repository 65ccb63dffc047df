"""A record its consumers cannot read, written to a Kafka topic from inside the broker's pod: what
someone testing by hand does with `kafka-console-producer.sh` (a line of text on a topic of
protobuf messages). Nothing in the cluster's objects changes; the record sits in the log, and
a consumer that retries what it cannot deserialize stops at it.

Recover moves each named group one record past it, the way an operator skips a record
(`kafka-consumer-groups.sh --reset-offsets --to-offset`), unless the group is already past it.
The coordinator resets only an inactive group, so the groups' consumer Deployments (`consumers`)
are scaled to 0 first, the groups are waited on until they are Empty (a consumer that never
closes its client stays a member for the session timeout), and scaled back afterwards.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
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
    consumers: tuple[str, ...] = ()  # the Deployments consuming those groups (stopped while they are reset)
    bootstrap: str = "localhost:9092"


EMPTY_WAIT_S = 120.0  # longer than the clients' 45 s session timeout
POLL_S = 5.0


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
        behind = [g for g in p.groups
                  if (current := committed(cluster, p, g).get(partition, (None, 0))[0]) is not None
                  and current <= offset]
        if behind:
            with consumers_stopped(cluster, p, behind):
                for group in behind:
                    reset(cluster, p, group, f"{shlex.quote(p.topic)}:{partition} --to-offset {offset + 1}")


def group_state(cluster: Cluster, p: KafkaRecordParams, group: str) -> str:
    """The STATE column of `--describe --state` ("" when the group is not listed)."""
    out = kafka_tool(cluster, p, f"{BIN}kafka-consumer-groups.sh --bootstrap-server {p.bootstrap} --describe "
                                 f"--group {shlex.quote(group)} --state")
    row = next((line.split() for line in out.splitlines() if line.startswith(group + " ")), [])
    return row[-2] if len(row) >= 2 else ""


def reset(cluster: Cluster, p: KafkaRecordParams, group: str, plan: str) -> None:
    """`--reset-offsets --execute` of an inactive group; raise when the coordinator refuses."""
    out = kafka_tool(cluster, p, f"{BIN}kafka-consumer-groups.sh --bootstrap-server {p.bootstrap} --reset-offsets "
                                 f"--group {shlex.quote(group)} --topic {plan} --execute")
    if "Error:" in out:
        raise RuntimeError(f"resetting {group} was refused: {out.strip()[:300]}")


@contextmanager
def consumers_stopped(cluster: Cluster, p: KafkaRecordParams, groups: list[str]) -> Iterator[None]:
    """Scale the consumer Deployments to 0, wait until `groups` are Empty, run the body, and
    scale them back to their replicas."""
    replicas: dict[str, int] = {}
    for name in p.consumers:
        obj = cluster.get("Deployment", p.namespace, name)
        if obj is not None:
            replicas[name] = int((obj.get("spec") or {}).get("replicas", 1))
            cluster.patch("Deployment", p.namespace, name, {"spec": {"replicas": 0}})
    try:
        waited = 0.0
        while any(group_state(cluster, p, g) not in ("Empty", "Dead", "") for g in groups):
            if waited >= EMPTY_WAIT_S:
                raise RuntimeError(f"consumer groups {groups} still have members after {waited:.0f}s")
            cluster.advance(POLL_S)
            waited += POLL_S
        yield
    finally:
        for name, count in replicas.items():
            cluster.patch("Deployment", p.namespace, name, {"spec": {"replicas": count}})
