"""Kafka (a KRaft single-node broker): topics, partitions, log-end offsets and consumer groups.

The state a broker keeps is what an SRE reads with `kafka-consumer-groups.sh`: per partition the
log-end offset, per group the committed offset, its members and its state. Lag is the gap, so it
grows whenever producers append faster than a group commits -- a slowed consumer, a dead one (its
member expires after the session timeout and the group goes Empty), or a rebalance -- and shrinks
when the consumer catches up. Offsets are fluid (a rate times a tick) and printed as integers.

A group walks the classic coordinator's states: a join or a departure starts a rebalance
(PreparingRebalance) that waits until every remaining member has rejoined (and, for a group that
was Empty, `group.initial.rebalance.delay.ms`), then the leader's assignment (CompletingRebalance)
makes it Stable; with no members left it is Empty, and a deleted group is Dead. A consumer that
closes leaves at once (LeaveGroup); one that dies or hangs stays a member until the session
timeout. Offsets can be reset only while the group is inactive (Empty or Dead), as the real
coordinator insists, so an operator stops the consumers and waits for the group to empty first.

The log directory is the image's `/tmp/kraft-combined-logs` (the demo's broker mounts nothing
there), so a restarted broker without a volume starts with no topics and no committed offsets,
as the real one does. Group coordinator events go to the broker's stdout in its log4j format.

A record whose value is not what the topic's consumers deserialize (a line typed into
`kafka-console-producer.sh` on a topic of protobuf messages) is kept by its offset
(`Topic.malformed`). A consumer that fails on such a record and retries it never commits past it:
its partition stops at that offset (head-of-line blocking) until the group's offset is moved past
it (`reset_offsets`, what `kafka-consumer-groups.sh --reset-offsets --execute` does).

Records carry a size when a client says so (`receive`): above the broker's `message.max.bytes`
they are refused, below it they are read onto the broker's heap (`kafka_heap.py`), which a flood
of huge records exhausts; the broker then answers no client until its process is replaced.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.twin.datastores.base import DataStore, StoreReply, bank_of, state_key
from sregym.twin.datastores.kafka_heap import DEFAULT_MESSAGE_MAX_BYTES, MIB, BrokerHeap, heap_mb

if TYPE_CHECKING:
    from sregym.twin.node.runtime import ContainerInstance
    from sregym.twin.twin import Twin

LOG_DIR = "/tmp/kraft-combined-logs"
OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_PARTITIONS = 50
SESSION_TIMEOUT_S = 45.0  # the Java and librdkafka clients' session.timeout.ms default
INITIAL_REBALANCE_DELAY_S = 3.0  # the broker's group.initial.rebalance.delay.ms default
INACTIVE = ("Empty", "Dead")  # the states in which a group's offsets may be reset or it may be deleted
CLOSING = "the consumer is being closed"  # the client's LeaveGroup reason
COORDINATOR = "(kafka.coordinator.group.GroupCoordinator)"
UNKNOWN_TOPIC = "kafka server: Request was for a topic or partition that does not exist on this broker"
OUT_OF_BROKERS = "kafka: client has run out of available brokers to talk to"
RECORD_TOO_LARGE = "The request included a message larger than the max message size the server will accept."
# What sarama (checkout) reports when the broker accepted the connection but never answered.
REQUEST_TIMED_OUT = "kafka server: Request exceeded the user-specified time limit in the request"
NETWORK_THREAD = "data-plane-kafka-network-thread-{node}-ListenerName(PLAINTEXT)-PLAINTEXT-0"


def java_hash(text: str) -> int:
    """Java's String.hashCode (the coordinator partition of a group depends on it)."""
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def offsets_partition(group: str) -> int:
    return (java_hash(group) & 0x7FFFFFFF) % OFFSETS_PARTITIONS


def topic_id(name: str, cluster: str) -> str:
    """A stable 22-character base64url topic id (what `--describe` prints as TopicId)."""
    import base64

    raw = hashlib.sha256(f"{cluster}/{name}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass
class Topic:
    name: str
    partitions: list[float]  # log-end offset per partition
    replication: int = 1
    configs: dict[str, str] = field(default_factory=dict)
    malformed: dict[int, list[int]] = field(default_factory=dict)  # partition -> offsets of unreadable records

    def first_malformed(self, partition: int, start: float, stop: float) -> int | None:
        """The offset of the first unreadable record in [start, stop) of a partition, if any."""
        for offset in self.malformed.get(partition, ()):
            if start - 1e-9 <= offset < stop - 1e-9:
                return offset
        return None


@dataclass
class Member:
    member_id: str
    client_id: str
    host: str  # "/10.244.1.7", as the coordinator records the client address
    topics: tuple[str, ...]
    last_seen: float
    consumed: float = 0.0  # records this member fetched (its client's records-consumed-total)
    # (topic, partition, offset) of the unreadable records its last poll stopped at.
    stuck: tuple[tuple[str, int, int], ...] = ()


@dataclass
class Group:
    name: str
    committed: dict[tuple[str, int], float] = field(default_factory=dict)
    members: dict[str, Member] = field(default_factory=dict)  # by the client's stable key
    generation: int = 0
    protocol: str = "range"
    # Empty, PreparingRebalance, CompletingRebalance, Stable or Dead (the coordinator's states).
    state: str = "Empty"
    changed_at: float = 0.0  # when the group entered its state
    rebalance_delay: float = 0.0  # the initial delay of a rebalance that began on an Empty group
    rejoined: set[str] = field(default_factory=set)  # members that rejoined the rebalance in progress


@dataclass
class KafkaState:
    cluster_id: str = "ckjPoprWQzOf0-FuNkGfFQ"
    topics: dict[str, Topic] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    # Where the coordinator logs: (namespace, pod, container) of the broker now serving this state.
    owner: tuple[str, str, str] = ("", "", "")
    node_id: int = 1
    member_seq: int = 0


class KafkaBroker(DataStore):
    """The broker of one running container. Producers reach it through `serve` (the data plane's
    `Dependency(kind="kafka")`), consumers through `poll` (`dataplane/consumers.py`), the image's
    scripts through the query methods."""

    kind = "kafka"

    @property
    def data(self) -> KafkaState:
        return self.state

    @property
    def node_id(self) -> int:
        return int(self.config.get("node_id", 1))

    @property
    def auto_create(self) -> bool:
        return str(self.config.get("auto_create", "true")).lower() == "true"

    @property
    def message_max_bytes(self) -> int:
        return int(self.config.get("message_max_bytes") or DEFAULT_MESSAGE_MAX_BYTES)

    @property
    def heap(self) -> BrokerHeap:
        """This process's heap (a new process, a new heap)."""
        found = self.config.get("_heap")
        if found is None:
            found = self.config["_heap"] = BrokerHeap(float(self.config.get("heap_max_mb") or 1024.0) * MIB)
        return found

    def receive(self, topic: str, count: float, record_bytes: float) -> str | None:
        """A Produce request of `count` records of `record_bytes` each: None when appended, else the
        error the producer gets (too large for `message.max.bytes`, or no answer once the heap ran out)."""
        if self.heap.exhausted:
            return REQUEST_TIMED_OUT
        if record_bytes > self.message_max_bytes:
            return RECORD_TOO_LARGE
        if not self.heap.receive(self.twin.clock.now, count * record_bytes):
            self._out_of_heap()
            return REQUEST_TIMED_OUT
        return self.produce(topic, count)

    def _out_of_heap(self) -> None:
        """What the broker prints when the network processor's allocation fails."""
        thread = NETWORK_THREAD.format(node=self.node_id)
        self.log(f"Uncaught exception in thread '{thread}':", level="ERROR", prefix="",
                 logger="(org.apache.kafka.common.utils.KafkaThread)\njava.lang.OutOfMemoryError: Java heap space")
        self.log("Processor got uncaught exception.", level="ERROR", prefix="",
                 logger="(kafka.network.Processor)\njava.lang.OutOfMemoryError: Java heap space")

    # ------------------------------------------------------------------ topics
    def topic(self, name: str, *, create: bool = False, partitions: int | None = None) -> Topic | None:
        found = self.data.topics.get(name)
        if found is None and create:
            count = partitions or int(self.config.get("num_partitions", 1))
            found = self.data.topics[name] = Topic(name, [0.0] * max(1, count))
        return found

    def create_topic(self, name: str, partitions: int, replication: int) -> str | None:
        """`CreateTopics`; returns the error text or None."""
        if name in self.data.topics:
            return f"Topic '{name}' already exists."
        if replication > 1:
            return (f"Unable to replicate the partition {replication} time(s): The target replication factor "
                    f"of {replication} cannot be reached because only 1 broker(s) are registered.")
        self.topic(name, create=True, partitions=partitions)
        return None

    def produce(self, topic: str, count: float) -> str | None:
        """Append `count` records spread over the partitions; the error text when refused."""
        found = self.topic(topic, create=self.auto_create)
        if found is None:
            return UNKNOWN_TOPIC
        share = count / len(found.partitions)
        for index in range(len(found.partitions)):
            found.partitions[index] += share
        return None

    def produce_unreadable(self, topic: str, partition: int = 0) -> tuple[int, int] | str:
        """Append one record the topic's consumers cannot deserialize to `partition` (a console
        producer's sticky partition); returns (partition, offset) or the error text. The fluid
        log end is rounded up to a whole record first, so the record has an offset of its own."""
        found = self.topic(topic, create=self.auto_create)
        if found is None:
            return UNKNOWN_TOPIC
        index = min(max(0, partition), len(found.partitions) - 1)
        offset = math.ceil(found.partitions[index] - 1e-9)
        found.partitions[index] = float(offset + 1)
        found.malformed.setdefault(index, []).append(offset)
        return index, offset

    def reset_offsets(self, group_name: str, topic: str, partitions: list[int] | None, how: str,
                      value: int = 0, execute: bool = False) -> list[tuple[int, int]] | str:
        """`--reset-offsets` of one group on one topic: (partition, new offset) rows, committed
        when `execute`. `how` is to-offset, shift-by, to-earliest, to-latest or to-current; new
        offsets are clamped to the partition's log (as the admin client does)."""
        known = self.data.groups.get(group_name)
        if known is not None and known.state not in INACTIVE:
            return inactive_only(group_name, known.state)
        found = self.data.topics.get(topic)
        if found is None:
            return f"Topic '{topic}' does not exist"
        group = self.group(group_name)
        indexes = list(range(len(found.partitions))) if partitions is None else partitions
        rows: list[tuple[int, int]] = []
        for index in indexes:
            if not 0 <= index < len(found.partitions):
                return f"Partition {topic}-{index} does not exist"
            end = shown(found.partitions[index])
            current = group.committed.get((topic, index))
            now = shown(current) if current is not None else end
            target = {"to-offset": value, "shift-by": now + value, "to-earliest": 0,
                      "to-latest": end, "to-current": now}[how]
            rows.append((index, min(max(0, target), end)))
        if execute:
            for index, target in rows:
                group.committed[(topic, index)] = float(target)
        return rows

    def serve(self, req: Any) -> StoreReply:
        """A producer flow (`operation` produce/send, topic in `collection`) at `rate` records/s."""
        rate = float(getattr(req, "rate", 0.0) or 0.0)
        topic = getattr(req, "collection", "") or getattr(req, "database", "") or "orders"
        if self.heap.exhausted:
            return StoreReply(False, 10000.0, REQUEST_TIMED_OUT, "timeout", None, 1.0, "RequestTimedOut")
        error = self.produce(topic, rate * self.twin.clock.tick)
        self.account(rate, 0.05)
        if error is not None:
            return StoreReply(False, 1.0, error, "server_error", None, 1.0, "UnknownTopicOrPartition")
        return StoreReply(True, 1.2)

    # ------------------------------------------------------------------ groups
    def group(self, name: str) -> Group:
        found = self.data.groups.get(name)
        if found is None:
            found = self.data.groups[name] = Group(name)
            self.topic(OFFSETS_TOPIC, create=True, partitions=OFFSETS_PARTITIONS)
        return found

    def poll(self, group_name: str, key: str, client_id: str, host: str, topic: str, capacity: float,
             reset: str = "latest", blocks_on_unreadable: bool = False) -> float:
        """One consumer's tick: join (or heartbeat) the group, fetch up to `capacity` records from
        its committed position, commit what it processed. A consumer that `blocks_on_unreadable`
        stops each partition at its first unreadable record (kept in `Member.stuck`); others
        process it like any record. Returns the records consumed."""
        now = self.twin.clock.now
        if self.heap.exhausted:  # no fetch, no heartbeat: the member expires, lag builds
            return 0.0
        group = self.group(group_name)
        member = group.members.get(key)
        if member is None:
            self.data.member_seq += 1
            seq = hashlib.sha256(f"{group_name}/{key}/{self.data.member_seq}".encode()).hexdigest()
            member_id = f"{client_id}-{seq[:8]}-{seq[8:12]}-{seq[12:16]}-{seq[16:20]}-{seq[20:32]}"
            member = Member(member_id, client_id, host, (topic,), now)
            self._rebalance(group, f"Adding new member {member_id} with group instance id None; "
                                   "client reason: need to re-join with the given member-id", member, key)
        elif group.state == "PreparingRebalance":
            group.rejoined.add(key)  # its next poll rejoins the rebalance in progress
        member.last_seen = now
        found = self.topic(topic, create=self.auto_create)
        if found is None:
            return 0.0
        consumed = 0.0
        budget = max(0.0, capacity)
        stuck: list[tuple[str, int, int]] = []
        for index, end in enumerate(found.partitions):
            pos = group.committed.get((topic, index))
            if pos is None:
                pos = 0.0 if reset == "earliest" else end
            take = min(budget / len(found.partitions), max(0.0, end - pos))
            blocker = found.first_malformed(index, pos, pos + take) if blocks_on_unreadable and take > 0 else None
            if blocker is not None:
                take = max(0.0, blocker - pos)
                stuck.append((topic, index, blocker))
            group.committed[(topic, index)] = pos + take
            consumed += take
        member.stuck = tuple(stuck)
        member.consumed += consumed
        return consumed

    def _rebalance(self, group: Group, reason: str, joining: Member | None, key: str = "") -> None:
        """A member joined or left: the group prepares a rebalance (its remaining members must
        rejoin), or is now empty. `settle` finishes the rebalance on later ticks."""
        part = f"({OFFSETS_TOPIC}-{offsets_partition(group.name)})"
        if joining is not None:
            self.log(f"Dynamic member with unknown member id joins group {group.name} in {group.state} state. "
                     f"Created a new member id {joining.member_id} and request the member to rejoin with this id.")
        if group.state != "PreparingRebalance":
            self.log(f"Preparing to rebalance group {group.name} in state PreparingRebalance with old generation "
                     f"{group.generation} {part} (reason: {reason})")
            group.rebalance_delay = INITIAL_REBALANCE_DELAY_S if group.state == "Empty" else 0.0
            group.rejoined = set()
            self._enter(group, "PreparingRebalance")
        if joining is not None:
            group.members[key or joining.member_id] = joining
            group.rejoined.add(key or joining.member_id)
        if not group.members:
            group.generation += 1
            self.log(f"Group {group.name} with generation {group.generation} is now empty {part}")
            self._enter(group, "Empty")

    def _enter(self, group: Group, state: str) -> None:
        group.state = state
        group.changed_at = self.twin.clock.now

    def settle(self, group: Group) -> None:
        """Move a rebalance on: once every member has rejoined (and the initial delay passed) the
        coordinator completes the join (CompletingRebalance, a new generation); the leader's
        assignment, a round trip later, makes the group Stable."""
        part = f"({OFFSETS_TOPIC}-{offsets_partition(group.name)})"
        now = self.twin.clock.now
        if group.state == "PreparingRebalance" and group.members \
                and all(k in group.rejoined for k in group.members) \
                and now >= group.changed_at + group.rebalance_delay:
            group.generation += 1
            self.log(f"Stabilized group {group.name} generation {group.generation} {part} with "
                     f"{len(group.members)} members")
            self._enter(group, "CompletingRebalance")
        elif group.state == "CompletingRebalance" and now > group.changed_at:
            leader = min(m.member_id for m in group.members.values())
            self.log(f"Assignment received from leader {leader} for group {group.name} for generation "
                     f"{group.generation}. The group has {len(group.members)} members, 0 of which are static.")
            self._enter(group, "Stable")

    def leave(self, group_name: str, key: str) -> bool:
        """A closing consumer's LeaveGroup: it stops being a member now, not at the session
        timeout. False when it was not a member."""
        group = self.data.groups.get(group_name)
        member = group.members.pop(key, None) if group is not None else None
        if group is None or member is None:
            return False
        self.log(f"Member {member.member_id} has left group {group_name} through explicit `LeaveGroup`; "
                 f"client reason: {CLOSING}")
        self._rebalance(group, f"Removing member {member.member_id} on LeaveGroup; client reason: {CLOSING}", None)
        return True

    def delete_group(self, group_name: str) -> str | None:
        """`--delete --group`: only an inactive group can go (it is Dead, then forgotten); the
        error text otherwise."""
        group = self.data.groups.get(group_name)
        if group is None:
            return f"Group '{group_name}' could not be deleted due to: " \
                   "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist."
        if group.state not in INACTIVE:
            return f"Group '{group_name}' could not be deleted due to: " \
                   "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty."
        self._enter(group, "Dead")
        del self.data.groups[group_name]
        return None

    def expire(self) -> None:
        """Remove members whose heartbeats stopped for the session timeout (a dead consumer),
        then move every group's rebalance on."""
        now = self.twin.clock.now
        for name in sorted(self.data.groups):
            group = self.data.groups[name]
            for key in sorted(group.members):
                member = group.members[key]
                if now - member.last_seen >= SESSION_TIMEOUT_S:
                    del group.members[key]
                    self.log(f"Member {member.member_id} in group {name} has failed, removing it from the group")
                    self._rebalance(group, f"removing member {member.member_id} on heartbeat expiration", None)
            self.settle(group)

    def lag(self, group_name: str) -> list[tuple[str, int, float | None, float]]:
        """(topic, partition, committed or None, log end) of every partition the group knows."""
        group = self.data.groups.get(group_name)
        if group is None:
            return []
        topics = sorted({t for t, _ in group.committed} | {t for m in group.members.values() for t in m.topics})
        rows: list[tuple[str, int, float | None, float]] = []
        for name in topics:
            found = self.data.topics.get(name)
            if found is None:
                continue
            for index, end in enumerate(found.partitions):
                rows.append((name, index, group.committed.get((name, index)), end))
        return rows

    # ------------------------------------------------------------------ logs
    def log(self, message: str, level: str = "INFO", logger: str = COORDINATOR,
            prefix: str = "[GroupCoordinator {node}]: ") -> None:
        from sregym.twin.node.runtime import runtime_of

        ns, pod, container = self.data.owner
        instance = runtime_of(self.twin).instance(ns, pod, container)
        logs = self.twin.services.logs
        if instance is None or logs is None:
            return
        now = self.twin.clock.now
        stamp = log_stamp(now)
        logs.append(instance.container_id, now, "stdout",
                    f"[{stamp}] {level} {prefix.format(node=self.node_id)}{message} {logger}")


def log_stamp(now: float) -> str:
    moment = datetime.fromtimestamp(now, tz=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S,") + f"{int(moment.microsecond / 1000):03d}"


def inactive_only(group: str, state: str) -> str:
    """What the coordinator's admin client answers to an offset reset of a live group."""
    return f"Assignments can only be reset if the group '{group}' is inactive, but the current state is {state}."


def shown(offset: float) -> int:
    """An offset as a client prints it: whole records."""
    return math.floor(offset + 1e-9)


# ---------------------------------------------------------------------- the server factory
def runs_broker(argv: list[str]) -> bool:
    """Whether a container's command starts the broker (the image's `/etc/kafka/docker/run`, or
    `kafka-server-start.sh`), not a one-off script or `sleep`."""
    names = [a.rsplit("/", 1)[-1] for a in argv]
    if not names:
        return True
    if names[0] in ("__cacert_entrypoint.sh", "bash", "sh") and len(names) > 1:
        names = names[1:]
    return names[0] in ("run", "kafka-server-start.sh")


def broker_state(twin: Twin, pod: dict[str, Any], container: str, started_at: float) -> KafkaState:
    return bank_of(twin).state(state_key(twin, pod, container, LOG_DIR, started_at), KafkaState)


def make_server(twin: Twin, pod: dict[str, Any], container: str,
                instance: ContainerInstance) -> KafkaBroker | None:
    """The `SERVER_FACTORIES` entry for Kafka images (None when the broker is not what runs)."""
    if not runs_broker(list(instance.argv)):
        return None
    env = {**image_env(twin, instance.image), **instance.env}
    state = broker_state(twin, pod, container, instance.started_at)
    meta = pod.get("metadata") or {}
    state.owner = (meta.get("namespace", "default"), meta.get("name", ""), container)
    state.cluster_id = env.get("CLUSTER_ID") or state.cluster_id
    state.node_id = int(env.get("KAFKA_NODE_ID") or 1)
    config = {"port": listener_port(env.get("KAFKA_LISTENERS", "")), "node_id": state.node_id,
              "auto_create": env.get("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "true"),
              "num_partitions": int(env.get("KAFKA_NUM_PARTITIONS") or 1),
              "advertised": env.get("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://localhost:9092"),
              "message_max_bytes": int(env.get("KAFKA_MESSAGE_MAX_BYTES") or DEFAULT_MESSAGE_MAX_BYTES),
              "heap_max_mb": heap_mb(env.get("KAFKA_HEAP_OPTS", ""))[1]}
    return KafkaBroker(twin, pod, container, state, config)


def image_env(twin: Any, image: str) -> dict[str, str]:
    """The ENV an image's Dockerfile sets (`extras["kafka_env"]`: the demo's build sets the KRaft
    defaults), under the container's own env."""
    from sregym.twin.node.images import lookup

    spec, _ = lookup(image, twin) if image else (None, None)
    return dict(spec.extras.get("kafka_env") or {}) if spec is not None else {}


def listener_port(listeners: str, name: str = "PLAINTEXT") -> int:
    for item in listeners.split(","):
        proto, _, rest = item.strip().partition("://")
        if proto == name and ":" in rest:
            try:
                return int(rest.rsplit(":", 1)[1])
            except ValueError:
                break
    return 9092


def brokers(twin: Twin) -> list[KafkaBroker]:
    """The running brokers a client has reached (cached instances of live containers), in order."""
    from sregym.twin.node.runtime import runtime_of

    bank = bank_of(twin)
    runtime = runtime_of(twin)
    out: list[KafkaBroker] = []
    for key in sorted(bank.instances):
        store = bank.instances[key]
        if not isinstance(store, KafkaBroker):
            continue
        instance = runtime.instance(*key)
        if instance is not None and instance.running and instance.container_id == store.config.get("_instance"):
            out.append(store)
    return out


def register(factories: dict[str, Any]) -> None:
    factories["kafka"] = make_server


__all__ = ["INACTIVE", "OUT_OF_BROKERS", "RECORD_TOO_LARGE", "REQUEST_TIMED_OUT", "KafkaBroker", "KafkaState", "brokers", "inactive_only", "make_server", "offsets_partition", "shown"]
