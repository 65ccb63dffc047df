"""Astronomy Shop app-parity problems: what the agent sees does not give them away, the Kafka
record fault and the consumer-group check on a twin of the shop (the check protocol of each
problem runs in the registry-wide batch, `support/problem_batch.py`)."""

from __future__ import annotations

import pytest

from sregym.cluster.twin import TwinCluster
from sregym.faults.kafka_records import KafkaUnreadableRecord, committed
from sregym.oracles.checks import CheckContext
from sregym.oracles.checks_kafka import consumer_group_keeps_up
from sregym.problems.registry import get_problem
from sregym.twin import Twin
from support.astro_twin import warm_astro_twin

NS = "astronomy-shop"
IDS = ["astronomy-shop/kafka-unreadable-record-v1"]
PARAMS = {"namespace": NS, "deployment": "kafka", "topic": "orders", "value": "hello", "groups": ["fraud-detection"],
          "consumers": ["fraud-detection"]}


@pytest.mark.parametrize("problem_id", IDS)
def test_visible_texts_do_not_reveal(problem_id: str) -> None:
    problem = get_problem(problem_id)
    visible = (problem.title + " " + " ".join(str(f.params) for f in problem.faults)).lower()
    assert not any(w in visible for w in ("fault", "inject", "sregym", "benchmark", "poison", "bad", "broken"))
    assert "astronomy-shop" in problem.suites


def test_gold_skips_exactly_one_record_once_the_group_is_empty() -> None:
    stop, wait, reset, start = get_problem(IDS[0]).gold
    assert (stop.op, stop.name, stop.patch) == ("patch", "fraud-detection", {"spec": {"replicas": 0}})
    assert wait.op == "wait" and wait.seconds > 45  # fraud-detection's member outlives its pod by the session timeout
    assert reset.command[-5:] == ("--topic", "orders:0", "--shift-by", "1", "--execute")
    assert reset.command[reset.command.index("--group") + 1] == "fraud-detection"
    assert (start.name, start.patch) == ("fraud-detection", {"spec": {"replicas": 1}})


@pytest.fixture(scope="module")
def shop() -> Twin:
    return warm_astro_twin(seed=3, advance_s=120)


def test_record_fault_check_and_recover_on_the_twin(shop: Twin) -> None:
    cluster = TwinCluster(shop)
    ctx = CheckContext(cluster=cluster, namespace=NS)  # type: ignore[arg-type]
    assert consumer_group_keeps_up(ctx, group="fraud-detection")[0]
    fault = KafkaUnreadableRecord(PARAMS)
    state = fault.inject(cluster)  # type: ignore[arg-type]
    shop.advance(120)
    passed, detail = consumer_group_keeps_up(ctx, group="fraud-detection")
    assert not passed and detail.startswith("fraud-detection lags on orders-0 by "), detail
    assert consumer_group_keeps_up(ctx, group="accounting")[0]  # it moves past the record
    assert committed(cluster, fault.params, "fraud-detection")[0][0] == state["offset"]  # type: ignore[arg-type]
    assert not consumer_group_keeps_up(ctx, group="no-such-group")[0]
    fault.recover(cluster, state)  # type: ignore[arg-type]
    assert committed(cluster, fault.params, "fraud-detection")[0][0] == state["offset"] + 1  # type: ignore[arg-type]
    shop.advance(60)
    assert consumer_group_keeps_up(ctx, group="fraud-detection")[0]
    ahead = committed(cluster, fault.params, "fraud-detection")[0][0]  # type: ignore[arg-type]
    fault.recover(cluster, state)  # type: ignore[arg-type] # already past: recover leaves it alone
    assert committed(cluster, fault.params, "fraud-detection")[0][0] == ahead  # type: ignore[arg-type]
    shop.patch("Deployment", NS, "fraud-detection", {"spec": {"replicas": 0}})
    shop.advance(90)
    passed, detail = consumer_group_keeps_up(ctx, group="fraud-detection")
    assert not passed and detail == "consumer group fraud-detection has no active members"


def test_product_catalog_command_missing_from_the_image_never_starts(shop: Twin) -> None:
    """The product-catalog tag has its Dockerfile's entrypoint: a command naming another binary
    fails at container start with containerd's error, the rollout stalls on CrashLoopBackOff, and
    removing the command starts the service again."""
    def pods() -> list[dict]:
        return [p for p in shop.list("pods", NS) if p["metadata"]["name"].startswith("product-catalog-")
                and not p["metadata"].get("deletionTimestamp")]

    container = {"name": "product-catalog", "command": ["productcatalogservice"]}
    shop.patch("deployments", NS, "product-catalog", {"spec": {"template": {"spec": {"containers": [container]}}}})
    shop.advance(120)
    statuses = {p["metadata"]["name"]: p["status"]["containerStatuses"][0] for p in pods()}
    broken = [s for s in statuses.values() if s.get("restartCount", 0) >= 2]
    assert len(statuses) == 2 and len(broken) == 1  # the old pod still serves
    (status,) = broken
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    last = status["lastState"]["terminated"]
    assert last["reason"] == "StartError" and last["exitCode"] == 128
    assert 'exec: "productcatalogservice": executable file not found in $PATH' in last["message"]
    shop.patch("deployments", NS, "product-catalog", {"spec": {"template": {"spec": {"containers": [
        {"name": "product-catalog", "command": None}]}}}})
    shop.advance(90)
    (running,) = pods()
    assert "running" in running["status"]["containerStatuses"][0]["state"]
    assert running["status"]["containerStatuses"][0].get("restartCount", 0) == 0
