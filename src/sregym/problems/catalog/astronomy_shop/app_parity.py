"""Astronomy Shop problems that complete the peers' app-level scenarios (SREGym, ITBench) on the
twin's own models of the shop's stores and clients.

A record fraud-detection cannot read (`kafka_poison_pill_hol_block`): someone produced a line of
text to `orders` with the broker image's console producer. fraud-detection's loop throws on it
before committing and polls it again, so its partition stops there (head-of-line blocking): its
pod stays Running and Ready, its committed offset freezes, its lag grows with every order and it
logs the same deserialization error at the same offset. accounting catches the error and moves
on, so orders are still recorded; the damage is silent. Restarting fraud-detection does not help
(it resumes from the committed offset). The fix an SRE applies is to move the group one record
past it (`kafka-consumer-groups.sh --reset-offsets --shift-by 1 --execute`), which keeps the
orders queued behind it; `--to-latest` would skip them too and still pass the check, which only
asks that the group keeps up again.
"""

from __future__ import annotations

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.catalog.astronomy_shop.common import APP, IMPACT, SETTLE_S, SUITE, deploy, mitigation
from sregym.problems.model import Action, CheckSpec, FaultSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

GROUPS = "/opt/kafka/bin/kafka-consumer-groups.sh"
QUEUE_IMPACT = (*IMPACT, "lag", "backlog", "stuck", "not processed", "stalled")


def keeps_up(group: str) -> CheckSpec:
    return CheckSpec(check="consumer_group_keeps_up", params={"group": group, "topic": "orders"})


@problem
def kafka_unreadable_record() -> Problem:
    """A text record on `orders` blocks fraud-detection's partition (SREGym's
    `kafka_poison_pill_hol_block`).

    fraud-detection stays Running and Ready but its committed offset on `orders-0` is frozen at
    the record while the log end moves on; its logs repeat `InvalidProtocolBufferException` for
    the same offset. Fix: move the `fraud-detection` group past the record
    (`kafka-consumer-groups.sh --reset-offsets --group fraud-detection --topic orders:0 --shift-by 1
    --execute`)."""
    return Problem(
        id="astronomy-shop/kafka-unreadable-record-v1",
        title="fraud checks stopped while every pod is running",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app",), difficulty="hard", suites=(SUITE,),
                  sources=("sregym:kafka_poison_pill_hol_block",)),
        faults=(FaultSpec(fault="kafka_unreadable_record", params={
            "namespace": NAMESPACE, "deployment": "kafka", "topic": "orders",
            "value": "order-test-2025-06-01", "groups": ["fraud-detection"]}),),
        ground_truth=GroundTruth(
            root_causes=(deploy("kafka"),), mechanism="poison_record",
            detail="a record that is not an OrderResult protobuf (a text line) was produced to the Kafka topic "
                   "orders; fraud-detection fails to deserialize it, never commits past its offset and retries it "
                   "forever (head-of-line blocking on orders-0), so the fraud-detection group's lag keeps growing",
            detail_keywords=("poison", "orders", "offset", "fraud-detection", "deserialize", "protobuf",
                             "InvalidProtocolBufferException", "consumer lag", "reset-offsets"),
            affected=(deploy("fraud-detection"),), impact_keywords=QUEUE_IMPACT,
            description="fraud-detection is stuck on one unreadable record of the orders topic: it processes no "
                        "order behind it while its pod looks healthy."),
        mitigation=mitigation(keeps_up("fraud-detection")),
        gold=(Action(op="exec", kind="Deployment", namespace=NAMESPACE, name="kafka",
                     command=(GROUPS, "--bootstrap-server", "localhost:9092", "--reset-offsets", "--group",
                              "fraud-detection", "--topic", "orders:0", "--shift-by", "1", "--execute")),),
        settle_s=SETTLE_S,
    )
