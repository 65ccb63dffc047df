"""Astronomy Shop problems that complete the peers' app-level scenarios (SREGym, ITBench) on the
twin's own models of the shop's stores and clients.

A record fraud-detection cannot read (`kafka_poison_pill_hol_block`): someone produced a line of
text to `orders` with the broker image's console producer. fraud-detection's loop throws on it
before committing and polls it again, so its partition stops there (head-of-line blocking): its
pod stays Running and Ready, its committed offset freezes, its lag grows with every order and it
logs the same deserialization error at the same offset. accounting catches the error and moves
on, so orders are still recorded; the damage is silent. Restarting fraud-detection does not help
(it resumes from the committed offset). The fix an SRE applies is to move the group one record
past it (`kafka-consumer-groups.sh --reset-offsets --shift-by 1 --execute`, with fraud-detection
scaled to 0 until its group is Empty: a live group is refused), which keeps the orders queued behind it; `--to-latest` would skip them too and still pass the check, which only
asks that the group keeps up again.

product-catalog's container `command` names an executable its image does not have (ITBench 105,
`invalid-kubernetes-workload-container-command`): the binary's name from older releases of the
demo, `productcatalogservice`. The new pod never starts (`StartError`, then `CrashLoopBackOff`,
with containerd's `exec: "productcatalogservice": executable file not found in $PATH`); the rolling
update keeps the old pod serving, so the rollout stalls. The fix is the chart's container again (no
`command`: the image's `./product-catalog` entrypoint), by edit or `kubectl rollout undo`.
"""

from __future__ import annotations

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.builders import patch_container
from sregym.problems.catalog.astronomy_shop.common import APP, IMPACT, SETTLE_S, SUITE, deploy, mitigation
from sregym.problems.catalog.astronomy_shop.kafka_offsets import reset_gold
from sregym.problems.model import CheckSpec, FaultSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

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
    --execute`) once fraud-detection is scaled to 0 and its group is Empty, then scale it back."""
    return Problem(
        id="astronomy-shop/kafka-unreadable-record-v1",
        title="fraud checks stopped while every pod is running",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app",), difficulty="hard", suites=(SUITE,),
                  sources=("sregym:kafka_poison_pill_hol_block",)),
        faults=(FaultSpec(fault="kafka_unreadable_record", params={
            "namespace": NAMESPACE, "deployment": "kafka", "topic": "orders",
            "value": "order-test-2025-06-01", "groups": ["fraud-detection"], "consumers": ["fraud-detection"]}),),
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
        gold=reset_gold("fraud-detection", "fraud-detection", "--topic", "orders:0", "--shift-by", "1"),
        settle_s=SETTLE_S,
    )


OLD_BINARY = "productcatalogservice"  # the service's binary before the demo renamed its services


@problem
def product_catalog_invalid_command() -> Problem:
    """product-catalog's container command is set to an executable its image does not contain
    (ITBench 105).

    The new pod's container fails to start (`StartError`: `exec: "productcatalogservice":
    executable file not found in $PATH`) and restarts into CrashLoopBackOff; the rollout stalls
    with the old pod still serving. Fix: remove the command (the image's entrypoint starts
    `./product-catalog`) or roll the Deployment back."""
    return Problem(
        id="astronomy-shop/product-catalog-invalid-command-v1",
        title="the product-catalog rollout does not finish",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("config",), difficulty="easy", suites=(SUITE,), sources=("itbench:105",)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [{
            "kind": "Deployment", "namespace": NAMESPACE, "name": "product-catalog",
            "patch": {"spec": {"template": {"spec": {"containers": [
                {"name": "product-catalog", "command": [OLD_BINARY]}]}}}}}]}),),
        ground_truth=GroundTruth(
            root_causes=(deploy("product-catalog"),), mechanism="wrong_command",
            detail=f"product-catalog's container command was set to `{OLD_BINARY}`, which the image does not "
                   f"contain: exec: \"{OLD_BINARY}\": executable file not found in $PATH (StartError, "
                   "CrashLoopBackOff)",
            detail_keywords=("command", OLD_BINARY, "executable file not found", "StartError", "CrashLoopBackOff",
                             "entrypoint"),
            affected=(), impact_keywords=(*IMPACT, "crashloopbackoff", "rollout", "stalled"),
            description="The new product-catalog pod cannot start its container; the rollout stalls and only "
                        "the old pod serves the catalogue."),
        mitigation=mitigation(CheckSpec(check="workloads_ready", params={"names": ["product-catalog"]})),
        gold=(patch_container(NAMESPACE, "product-catalog", "product-catalog", {"command": None}),),
        settle_s=SETTLE_S,
    )
