"""The Kafka image's tools (`/opt/kafka/bin/*.sh`) against the twin's broker model.

`kafka-topics.sh` (--list, --describe, --create), `kafka-consumer-groups.sh` (--list, --describe
with --group G or --all-groups, --state, --members; --reset-offsets with --to-offset, --shift-by,
--to-earliest, --to-latest or --to-current on --topic T[:P,...] or --all-topics, a dry run unless
--execute; a group that still has members is refused with the coordinator's "Assignments can only
be reset if the group ... is inactive" and, as the real tool does, exit status 0 and no rows;
--delete of an inactive group), `kafka-console-producer.sh`
(each stdin line is a text record, which the shop's protobuf consumers cannot deserialize),
`kafka-console-consumer.sh` and `kafka-broker-api-versions.sh`, with the JVM tools' output: the
consumer-group table's column layout, "has no active members", log4j-formatted WARN/ERROR lines.
`--bootstrap-server` is resolved from the exec'd pod like any client (localhost is the pod
itself); a server that cannot be reached ends with the admin client's node-assignment timeout
and exit status 1, as the real tools do after `default.api.timeout.ms`.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.datastores.kafka import (
    INACTIVE,
    OFFSETS_TOPIC,
    KafkaBroker,
    inactive_only,
    log_stamp,
    shown,
    topic_id,
)
from sregym.twin.node.shell import Invocation, command

MISSING = "-"


def _opts(args: list[str]) -> tuple[dict[str, str], set[str]]:
    """`--name value` / `--name=value` options and bare `--flags` of a Java tool's argv."""
    values: dict[str, str] = {}
    flags: set[str] = set()
    takes = {"--bootstrap-server", "--topic", "--group", "--partitions", "--replication-factor",
             "--max-messages", "--timeout-ms", "--broker-list", "--command-config", "--partition",
             "--entity-type", "--entity-name", "--property", "--to-offset", "--shift-by"}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--") and "=" in arg:
            name, _, value = arg.partition("=")
            values[name] = value
        elif arg in takes and i + 1 < len(args):
            values[arg] = args[i + 1]
            i += 1
        elif arg.startswith("--"):
            flags.add(arg)
        i += 1
    return values, flags


def _connect(call: Invocation, server: str) -> tuple[KafkaBroker | None, str, str]:
    """(broker, failure kind "dns"|"down"|"", shown address) for a bootstrap server."""
    from sregym.twin.datastores import datastore_for

    first = server.split(",")[0].strip()
    host, _, port_text = first.rpartition(":")
    if not host:
        host, port_text = first, "9092"
    port = int(port_text) if port_text.isdigit() else 9092
    twin, pod = call.ctx.twin, call.ctx.pod
    if twin is None:
        return None, "down", first
    if host in ("localhost", "127.0.0.1", "::1"):
        store = datastore_for(twin, pod)
        if isinstance(store, KafkaBroker) and store.port == port and not store.heap.exhausted:
            return store, "", f"localhost/127.0.0.1:{port}"
        return None, "down", f"localhost/127.0.0.1:{port}"
    dataplane = twin.services.dataplane
    if dataplane is None:
        return None, "dns", first
    result = dataplane.connect(pod, host, port)
    if not result.ok:
        kind = "dns" if result.error in ("nxdomain", "servfail") else "down"
        return None, kind, f"{host}/{result.dst_ip or ''}:{port}"
    store = datastore_for(twin, result.dst_pod)
    if isinstance(store, KafkaBroker) and not store.heap.exhausted:  # a broker out of heap never answers
        store.expire()
        return store, "", f"{host}/{result.dst_ip}:{port}"
    return None, "down", f"{host}/{result.dst_ip}:{port}"


def _unreachable(call: Invocation, kind: str, shown_addr: str, server: str, api: str, prefix: str,
                 logger: str, timeout_prefix: str = "") -> int:
    """What the admin client prints when no bootstrap server answers."""
    stamp = log_stamp(call.now)
    if kind == "dns":
        host = server.split(",")[0].rsplit(":", 1)[0]
        call.error(f"[{stamp}] WARN Couldn't resolve server {server.split(',')[0]} from bootstrap.servers as DNS "
                   f"resolution failed for {host} (org.apache.kafka.clients.ClientUtils)")
        message = "org.apache.kafka.common.KafkaException: Failed to create new KafkaAdminClient"
        call.write(f"{prefix}{message.split(': ', 1)[1]}\n")
        call.error(f"[{stamp}] ERROR {message}\n\tat org.apache.kafka.clients.admin.KafkaAdminClient."
                   f"createInternal(KafkaAdminClient.java:551)\nCaused by: org.apache.kafka.common.config."
                   f"ConfigException: No resolvable bootstrap urls given in bootstrap.servers\n ({logger})")
        return 1
    call.error(f"[{stamp}] WARN [AdminClient clientId=adminclient-1] Connection to node -1 ({shown_addr}) could "
               "not be established. Node may not be available. (org.apache.kafka.clients.NetworkClient)")
    message = f"Timed out waiting for a node assignment. Call: {api}"
    call.write(f"{prefix}{timeout_prefix}{message}\n")
    call.error(f"[{stamp}] ERROR org.apache.kafka.common.errors.TimeoutException: {message}\n ({logger})")
    return 1


def _require_server(call: Invocation, values: dict[str, str], usage: str) -> str | None:
    server = values.get("--bootstrap-server") or values.get("--broker-list")
    if not server:
        call.error(f"Missing required argument \"[bootstrap-server]\"\nOption                                   "
                   f"Description\n------                                   -----------\n{usage}")
    return server


# ------------------------------------------------------------------------------- kafka-topics.sh
@command("kafka-topics.sh")
def kafka_topics(call: Invocation) -> int:
    values, flags = _opts(list(call.args))
    logger = "org.apache.kafka.tools.TopicCommand"
    server = _require_server(call, values, "--bootstrap-server <String: server to connect to>")
    if server is None:
        return 1
    api = "createTopics" if "--create" in flags else "describeTopics" if "--describe" in flags else "listTopics"
    broker, kind, addr = _connect(call, server)
    if broker is None:
        return _unreachable(call, kind, addr, server, api, "Error while executing topic command : ", logger)
    topics = broker.data.topics
    wanted = values.get("--topic")
    if "--create" in flags:
        name = wanted or ""
        error = broker.create_topic(name, int(values.get("--partitions", "1") or 1),
                                    int(values.get("--replication-factor", "1") or 1))
        if error is not None:
            exc = "TopicExistsException" if "already exists" in error else "InvalidReplicationFactorException"
            call.write(f"Error while executing topic command : {error}\n")
            call.error(f"[{log_stamp(call.now)}] ERROR org.apache.kafka.common.errors.{exc}: {error}\n ({logger})")
            return 1
        call.write(f"Created topic {name}.\n")
        return 0
    names = sorted(n for n in topics if wanted is None or n == wanted)
    if "--exclude-internal" in flags:
        names = [n for n in names if n != OFFSETS_TOPIC]
    if wanted is not None and not names:
        text = f"Topic '{wanted}' does not exist as expected"
        call.write(f"Error while executing topic command : {text}\n")
        call.error(f"[{log_stamp(call.now)}] ERROR java.lang.IllegalArgumentException: {text}\n ({logger})")
        return 1
    if "--describe" in flags:
        node = broker.node_id
        for name in names:
            topic = topics[name]
            configs = "compression.type=producer,cleanup.policy=compact,segment.bytes=104857600" \
                if name == OFFSETS_TOPIC else ""
            call.write(f"Topic: {name}\tTopicId: {topic_id(name, broker.data.cluster_id)}\tPartitionCount: "
                       f"{len(topic.partitions)}\tReplicationFactor: {topic.replication}\tConfigs: {configs}\n")
            for index in range(len(topic.partitions)):
                call.write(f"\tTopic: {name}\tPartition: {index}\tLeader: {node}\tReplicas: {node}\tIsr: {node}"
                           "\tElr: N/A\tLastKnownElr: N/A\n")
        return 0
    for name in names:
        call.write(name + "\n")
    return 0


# ---------------------------------------------------------------------- kafka-consumer-groups.sh
@command("kafka-consumer-groups.sh")
def kafka_consumer_groups(call: Invocation) -> int:
    values, flags = _opts(list(call.args))
    logger = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
    server = _require_server(call, values, "--bootstrap-server <String: server to  REQUIRED: The server(s) to "
                                           "connect to.\n  connect to>")
    if server is None:
        return 1
    api = "listConsumerGroups" if "--list" in flags else \
        "listOffsets" if "--reset-offsets" in flags else "describeConsumerGroups"
    broker, kind, addr = _connect(call, server)
    if broker is None:
        return _unreachable(call, kind, addr, server, api, "Error: Executing consumer group command failed due to ",
                            logger, "org.apache.kafka.common.errors.TimeoutException: ")
    groups = broker.data.groups
    if "--list" in flags:
        for name in sorted(groups):
            call.write(name + "\n")
        return 0
    if "--reset-offsets" in flags:
        return _reset_offsets(call, broker, values, flags)
    if "--delete" in flags:
        return _delete(call, broker, values)
    if "--describe" not in flags:
        call.error("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
                   "--delete-offsets")
        return 1
    names = sorted(groups) if "--all-groups" in flags else [values.get("--group", "")]
    status = 0
    for name in names:
        group = groups.get(name)
        if group is None:
            call.write(f"\nConsumer group '{name}' does not exist.\n")
            continue
        if "--state" in flags:
            _print_state(call, broker, group, addr)
        elif "--members" in flags:
            _print_members(call, group)
        else:
            _print_offsets(call, broker, group)
    return status


RESET_SCOPES = "One of the reset scopes should be defined: --all-topics, --topic."
RESET_PLANS = ("Option [reset-offsets] takes exactly one of these options: [to-datetime], [by-duration], "
               "[to-earliest], [to-latest], [shift-by], [from-file], [to-current], [to-offset]")
DRY_RUN_WARNING = ("WARN: No action will be performed as the --execute option is missing. In a future major "
                   "release, the default behavior of this command will be to prompt the user before executing "
                   "the reset rather than doing a dry run. You should add the --dry-run option explicitly if you "
                   "are scripting this command and want to keep the current default behavior without prompting.")


def _reset_offsets(call: Invocation, broker: KafkaBroker, values: dict[str, str], flags: set[str]) -> int:
    """`--reset-offsets --group G (--topic T[:P,..] | --all-topics) <plan> [--dry-run | --execute]`:
    prints the new offset of every partition, and commits them with --execute."""
    group = values.get("--group")
    if not group:
        call.error("Option [reset-offsets] takes one of these options: [all-groups], [group]")
        return 1
    plans = [p for p in ("--to-offset", "--shift-by") if p in values] + \
        [p for p in ("--to-earliest", "--to-latest", "--to-current") if p in flags]
    if len(plans) != 1:
        call.error(RESET_PLANS)
        return 1
    how = plans[0][2:]
    try:
        amount = int(values.get(plans[0], "0"))
    except ValueError:
        call.error(f"Exception in thread \"main\" joptsimple.OptionArgumentConversionException: Cannot parse "
                   f"argument '{values.get(plans[0])}' of option {how}")
        return 1
    scopes: list[tuple[str, list[int] | None]] = []
    if "--all-topics" in flags:
        known = broker.data.groups.get(group)
        scopes = [(t, None) for t in sorted({t for t, _ in known.committed})] if known is not None else []
    elif values.get("--topic"):
        name, _, parts = values["--topic"].partition(":")
        scopes = [(name, [int(p) for p in parts.split(",") if p.strip().isdigit()] if parts else None)]
    if not scopes:
        call.error(RESET_SCOPES)
        return 1
    execute = "--execute" in flags
    if not execute and "--dry-run" not in flags:
        call.write(DRY_RUN_WARNING + "\n")
    rows: list[list[str]] = []
    known = broker.data.groups.get(group)
    if known is not None and known.state not in INACTIVE:
        # The coordinator refuses; the tool prints the error, an empty table, and exits 0.
        call.write(f"\nError: {inactive_only(group, known.state)}\n")
        _table(call, [30, 30, 10], ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], rows)
        return 0
    for topic, partitions in scopes:
        result = broker.reset_offsets(group, topic, partitions, how, amount, execute=execute)
        if isinstance(result, str):
            call.write(f"Error: Executing consumer group command failed due to {result}\n")
            return 1
        rows.extend([group, topic, str(p), str(o)] for p, o in result)
    widths = [max([30] + [len(r[0]) for r in rows]), max([30] + [len(r[1]) for r in rows]), 10]
    _table(call, widths, ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], rows)
    return 0


def _delete(call: Invocation, broker: KafkaBroker, values: dict[str, str]) -> int:
    """`--delete --group G`: an inactive group goes; a live one is refused (GroupNotEmpty)."""
    group = values.get("--group")
    if not group:
        call.error("Option [delete] takes one of these options: [all-groups], [group]")
        return 1
    error = broker.delete_group(group)
    if error is not None:
        call.write(f"\nError: Deletion of some consumer groups failed:\n* {error}\n")
        return 0
    call.write(f"Deletion of requested consumer groups ('{group}') was successful.\n")
    return 0


def _table(call: Invocation, widths: list[int], header: list[str], rows: list[list[str]]) -> None:
    def line(cells: list[str]) -> str:
        return " ".join(c.ljust(w) for c, w in zip(cells[:-1], widths, strict=False)) + " " + cells[-1]

    call.write("\n" + line(header) + "\n")
    for row in rows:
        call.write(line(row) + "\n")


def _print_offsets(call: Invocation, broker: KafkaBroker, group: Any) -> None:
    members = sorted(group.members.values(), key=lambda m: m.member_id)
    rows: list[list[str]] = []
    for topic, partition, committed, end in broker.lag(group.name):
        owner = members[partition % len(members)] if members else None
        current = MISSING if committed is None else str(shown(committed))
        lag = MISSING if committed is None else str(max(0, shown(end) - shown(committed)))
        rows.append([group.name, topic, str(partition), current, str(shown(end)), lag,
                     owner.member_id if owner else MISSING, owner.host if owner else MISSING,
                     owner.client_id if owner else MISSING])
    if not members:
        call.write(f"\nConsumer group '{group.name}' has no active members.\n")
    elif group.state not in ("Stable", *INACTIVE):
        call.error(f"\nWarning: Consumer group '{group.name}' is rebalancing.\n")
    widths = [max([15] + [len(r[0]) for r in rows]), max([15] + [len(r[1]) for r in rows]), 10, 15, 15, 15,
              max([15] + [len(r[6]) for r in rows]), max([15] + [len(r[7]) for r in rows])]
    _table(call, widths, ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                          "CONSUMER-ID", "HOST", "CLIENT-ID"], rows)


def _print_state(call: Invocation, broker: KafkaBroker, group: Any, addr: str) -> None:
    coordinator = f"{broker.config.get('advertised', '').split('://')[-1].split(',')[0]} ({broker.node_id})"
    widths = [max(15, len(group.name)), max(25, len(coordinator)), 20, 15]
    strategy = group.protocol if group.members else ""
    _table(call, widths, ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
           [[group.name, coordinator, strategy, group.state, str(len(group.members))]])


def _print_members(call: Invocation, group: Any) -> None:
    members = sorted(group.members.values(), key=lambda m: m.member_id)
    if not members:
        call.write(f"\nConsumer group '{group.name}' has no active members.\n")
        return
    widths = [max(15, len(group.name)), max([15] + [len(m.member_id) for m in members]),
              max([15] + [len(m.host) for m in members]), max([15] + [len(m.client_id) for m in members])]
    _table(call, widths, ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"],
           [[group.name, m.member_id, m.host, m.client_id, "1"] for m in members])


# ---------------------------------------------------------------------- console producer/consumer
@command("kafka-console-producer.sh")
def kafka_console_producer(call: Invocation) -> int:
    values, _ = _opts(list(call.args))
    server = _require_server(call, values, "--bootstrap-server <String: server to connect to>")
    topic = values.get("--topic")
    if server is None or not topic:
        if server is not None:
            call.error("Missing required argument \"[topic]\"")
        return 1
    broker, _kind, addr = _connect(call, server)
    records = [line for line in call.stdin.splitlines() if line]
    if broker is None:
        stamp = log_stamp(call.now)
        for _ in records[:1]:
            call.error(f"[{stamp}] WARN [Producer clientId=console-producer] Connection to node -1 ({addr}) could "
                       "not be established. Node may not be available. (org.apache.kafka.clients.NetworkClient)")
        return 0 if not records else 1
    error: str | None = None
    for _ in records:
        placed = broker.produce_unreadable(topic)
        error = placed if isinstance(placed, str) else None
        if error is not None:
            break
    if error is not None:
        call.error(f"[{log_stamp(call.now)}] ERROR Error when sending message to topic {topic} with key: null, "
                   f"value: {len(records[0]) if records else 0} bytes with error: "
                   "(org.apache.kafka.clients.producer.internals.ErrorLoggingCallback)")
        return 1
    return 0


@command("kafka-console-consumer.sh")
def kafka_console_consumer(call: Invocation) -> int:
    values, flags = _opts(list(call.args))
    server = _require_server(call, values, "--bootstrap-server <String: server to connect to>")
    topic = values.get("--topic")
    if server is None or not topic:
        if server is not None:
            call.error("Exactly one of whitelist/topic is required.")
        return 1
    broker, _kind, _addr = _connect(call, server)
    limit = int(values.get("--max-messages", "0") or 0)
    available = 0
    if broker is not None and topic in broker.data.topics:
        ends = broker.data.topics[topic].partitions
        available = sum(shown(e) for e in ends) if "--from-beginning" in flags else 0
    count = min(available, limit) if limit else available
    if limit and count < limit:
        call.error(f"[{log_stamp(call.now)}] ERROR Error processing message, terminating consumer process:  "
                   "(org.apache.kafka.tools.consumer.ConsoleConsumer$)\n"
                   "org.apache.kafka.common.errors.TimeoutException")
    call.error(f"Processed a total of {count} messages")
    return 0 if not limit or count == limit else 1


# --------------------------------------------------------------------- kafka-broker-api-versions.sh
@command("kafka-broker-api-versions.sh")
def kafka_broker_api_versions(call: Invocation) -> int:
    values, _ = _opts(list(call.args))
    server = _require_server(call, values, "--bootstrap-server <String: server(s)  REQUIRED: The server to "
                                           "connect to.\n  to use for\n  bootstrapping>")
    if server is None:
        return 1
    broker, kind, addr = _connect(call, server)
    if broker is None:
        return _unreachable(call, kind, addr, server, "listNodes", "", "kafka.admin.BrokerApiVersionsCommand$")
    host = broker.config.get("advertised", "PLAINTEXT://localhost:9092").split("://")[-1].split(",")[0]
    call.write(f"{host} (id: {broker.node_id} rack: null) -> (\n"
               "\tProduce(0): 0 to 10 [usable: 10],\n\tFetch(1): 0 to 16 [usable: 16],\n"
               "\tListOffsets(2): 0 to 8 [usable: 8],\n\tMetadata(3): 0 to 12 [usable: 12],\n"
               "\tOffsetCommit(8): 0 to 9 [usable: 9],\n\tOffsetFetch(9): 0 to 9 [usable: 9],\n"
               "\tFindCoordinator(10): 0 to 4 [usable: 4],\n\tJoinGroup(11): 0 to 9 [usable: 9],\n"
               "\tHeartbeat(12): 0 to 4 [usable: 4],\n\tLeaveGroup(13): 0 to 5 [usable: 5],\n"
               "\tSyncGroup(14): 0 to 5 [usable: 5],\n\tDescribeGroups(15): 0 to 5 [usable: 5],\n"
               "\tListGroups(16): 0 to 4 [usable: 4],\n\tApiVersions(18): 0 to 3 [usable: 3],\n"
               "\tCreateTopics(19): 0 to 7 [usable: 7],\n\tDeleteTopics(20): 0 to 6 [usable: 6]\n)\n")
    return 0


connect_bootstrap = _connect  # for the other tools of the image (`kafka_perf.py`)

__all__ = ["connect_bootstrap", "kafka_broker_api_versions", "kafka_console_consumer", "kafka_console_producer",
           "kafka_consumer_groups", "kafka_topics"]
