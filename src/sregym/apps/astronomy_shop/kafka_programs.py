"""The Astronomy Shop's Kafka side (demo 2.2.0): checkout's producer and the two consumers.

checkout (Go, sarama async producer) publishes each placed order to topic `orders` on
`KAFKA_ADDR` after the confirmation email; a failed write is logged ("Failed to write message:
...") and marks its `orders publish` span, but the order still succeeds. While the flag
`kafkaQueueProblems` resolves to a value N > 0 it sends the same message N more times
(the flag's `on` variant is 100). accounting (.NET, Confluent.Kafka, group `accounting`,
`AutoOffsetReset.Earliest`) runs `order-consumed` per record: EF Core inserts the order, its
items and its shipping into `accounting.order`, `accounting.orderitem` and `accounting.shipping`.
fraud-detection (Kotlin, kafka-clients, group `fraud-detection`, default `latest` reset) counts
records and, while `kafkaQueueProblems` > 0, sleeps a second per record. fraud-detection parses
each value as an `OrderResult` protobuf; a value that does not parse (a text line someone
produced to `orders`) throws out of its record loop before the offset is committed, so the loop
polls the same record again and its partition is blocked there (`Consumer.unreadable`).
accounting's handler catches the parse error and moves on.

`kafkaQueueProblems` is a program setting holding the flag's resolved integer as text ("0"
when off or unresolvable, the OpenFeature SDK's default), so a flag layer can set it.
"""

from __future__ import annotations

from sregym.apps.astronomy_shop.log_channels import sinks as log_sinks
from sregym.twin.dataplane.spec import (
    Call,
    Consumer,
    Dependency,
    LogFormat,
    MemoryModel,
    Operation,
    ProgramSpec,
    RetryPolicy,
    Setting,
    Startup,
)

FLAG = "kafkaQueueProblems"
OVERLOAD = 100  # the flag's `on` variant in demo.flagd.json: extra messages per order
TOPIC = "orders"
_DB = RetryPolicy(timeout=Setting(default="30s"), retries=Setting(default="0"))  # Npgsql's command timeout


def _kafka(error_log: str = "{error}") -> Dependency:
    return Dependency(name="kafka", kind="kafka", address=Setting(env="KAFKA_ADDR"),
                      policy=RetryPolicy(timeout=Setting(default="10s"), retries=Setting(default="0")),
                      error_log=error_log)


def flag_setting() -> dict[str, Setting]:
    return {FLAG: Setting(default="0")}


def checkout_kafka() -> tuple[Dependency, tuple[Call, ...]]:
    """checkout's producer dependency and the calls PlaceOrder makes last (sendToPostProcessor)."""
    return (_kafka("Failed to write message: {error}"),
            (Call(dependency="kafka", operation="produce", collection=TOPIC, optional=True),
             # The overload goroutines: the same message again, a flow of its own ("send").
             Call(dependency="kafka", operation="send", collection=TOPIC, optional=True, count=float(OVERLOAD),
                  feature=f"{FLAG}!=0")))


def accounting(prefix: str) -> ProgramSpec:
    inserts = (Call(dependency="postgres", operation="insert", collection="accounting.order"),
               Call(dependency="postgres", operation="insert", collection="accounting.orderitem"),
               Call(dependency="postgres", operation="insert", collection="accounting.shipping"))
    return ProgramSpec(
        name=prefix + "accounting", service_name="accounting", protocol="grpc", port=Setting(default="0"),
        dependencies=(_kafka(), Dependency(name="postgres", kind="postgres", address=Setting(env="DB_CONNECTION_STRING"),
                                           policy=_DB)),
        operations=(Operation(name="order-consumed", cpu_ms=2.5, calls=inserts),),
        consumers=(Consumer(dependency="kafka", group="accounting", client_id="rdkafka", operation="order-consumed",
                            max_rate=200.0, reset="earliest", leaves_on_stop=True,  # Close() on shutdown
                            error_log="%3|{epoch}|FAIL|rdkafka#consumer-1| [thrd:{host}:{port}/bootstrap]: "
                                      "{host}:{port}/bootstrap: Connect to {host}:{port} failed: {error}"),),
        memory=MemoryModel(base_mib=75.0, per_inflight_mib=0.1, per_rps_mib=0.05),
        startup=Startup(seconds=2.0, logs=("Accounting service started", "info: Accounting.Consumer[0]",
                                           "      Connecting to Kafka: {addr[kafka]}")),
        log=LogFormat(style="raw", main_caller="Accounting.Consumer", handler_caller="Accounting.Consumer",
                      sinks=log_sinks("accounting")))  # type: ignore[arg-type]


def fraud_detection(prefix: str, flagd: Dependency, flag_call: Call) -> ProgramSpec:
    return ProgramSpec(
        name=prefix + "fraud-detection", service_name="fraud-detection", protocol="grpc", port=Setting(default="0"),
        dependencies=(_kafka(), flagd), settings=flag_setting(),
        operations=(Operation(name=f"{TOPIC} process", cpu_ms=0.6, calls=(flag_call,)),),
        consumers=(Consumer(dependency="kafka", group="fraud-detection", client_id="consumer-fraud-detection-1",
                            operation=f"{TOPIC} process", max_rate=500.0, slow_when=f"{FLAG}!=0", slow_rate=1.0,
                            unreadable="retry",
                            unreadable_log="{time} - frauddetection - Error processing record {topic}-{partition} "
                                           "offset {offset}, retrying: com.google.protobuf."
                                           "InvalidProtocolBufferException: Protocol message contained an invalid "
                                           "tag (zero). trace_id= span_id= trace_flags= ",
                            error_log="{time} - org.apache.kafka.clients.NetworkClient - [Consumer "
                                      "clientId={client_id}, groupId={group}] Connection to node -1 "
                                      "({host}:{port}) could not be established. Node may not be available. "
                                      "trace_id= span_id= trace_flags= "),),
        memory=MemoryModel(base_mib=160.0, per_inflight_mib=0.1, per_rps_mib=0.05),
        startup=Startup(seconds=4.0),
        log=LogFormat(style="raw", main_caller="frauddetection", handler_caller="frauddetection",
                      sinks=log_sinks("fraud-detection")))  # type: ignore[arg-type]


__all__ = ["FLAG", "OVERLOAD", "TOPIC", "accounting", "checkout_kafka", "flag_setting", "fraud_detection"]
