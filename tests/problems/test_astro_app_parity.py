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
PARAMS = {"namespace": NS, "deployment": "kafka", "topic": "orders", "value": "hello", "groups": ["fraud-detection"]}


@pytest.mark.parametrize("problem_id", IDS)
def test_visible_texts_do_not_reveal(problem_id: str) -> None:
    problem = get_problem(problem_id)
    visible = (problem.title + " " + " ".join(str(f.params) for f in problem.faults)).lower()
    assert not any(w in visible for w in ("fault", "inject", "sregym", "benchmark", "poison", "bad", "broken"))
    assert "astronomy-shop" in problem.suites


def test_gold_skips_exactly_one_record() -> None:
    (gold,) = get_problem(IDS[0]).gold
    assert gold.command[-5:] == ("--topic", "orders:0", "--shift-by", "1", "--execute")
    assert gold.command[gold.command.index("--group") + 1] == "fraud-detection"


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
