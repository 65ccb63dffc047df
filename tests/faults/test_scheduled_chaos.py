"""`scheduled_chaos`: ITBench's scheduled Chaos Mesh experiments (a `Schedule`, cron `* * * * *`,
Forbid, history 1) on the Astronomy Shop in the twin: the first child exists when the fault
returns, the symptom reaches the shop's entry point within the minute, a 55 s experiment comes
back every minute, recover removes the Schedule and its children (and the shop recovers), and the
agent's credential sees none of it. Same seed, same children."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.errors import ApiError
from sregym.faults.base import make_fault
from sregym.faults.chaos_objects import CHAOS_NAMESPACE
from sregym.faults.scheduled_chaos import schedule_manifest, spawned
from support.problem_runs import deployed

SHOP = "astronomy-shop/no-incident-noise-v1"
NS = "astronomy-shop"


def component(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/component": name}  # the selector ITBench's scenarios use


# ITBench scenario 17: 20 s of delay on every packet product-catalog sends, no duration.
CATALOG_DELAY: dict[str, Any] = {
    "name": "product-catalog-network-delay", "type": "NetworkChaos", "namespace": NS,
    "labels": component("product-catalog"), "experiment": {"action": "delay", "delay": {"latency": "20000ms"}}}
# ITBench scenario 61: 100% loss from checkout to payment, 55 s of every minute.
CHECKOUT_PAYMENT_LOSS: dict[str, Any] = {
    "name": "checkout-payment-network-loss", "type": "NetworkChaos", "namespace": NS,
    "labels": component("checkout"), "target": {"namespace": NS, "labels": component("payment")},
    "experiment": {"action": "loss", "direction": "to", "duration": "55s",
                   "loss": {"loss": "100", "correlation": "0"}}}


def test_the_schedule_is_the_one_itbench_writes() -> None:
    manifest = schedule_manifest(make_fault("scheduled_chaos", CHECKOUT_PAYMENT_LOSS).params)
    assert manifest["metadata"] == {"name": "checkout-payment-network-loss", "namespace": CHAOS_NAMESPACE}
    spec = manifest["spec"]
    assert (spec["schedule"], spec["concurrencyPolicy"], spec["historyLimit"], spec["type"]) == (
        "* * * * *", "Forbid", 1, "NetworkChaos")
    block = spec["networkChaos"]
    assert block["selector"] == {"namespaces": [NS], "labelSelectors": component("checkout")}
    assert block["target"] == {"mode": "all", "selector": {"namespaces": [NS], "labelSelectors": component("payment")}}
    assert (block["action"], block["direction"], block["duration"], block["mode"]) == ("loss", "to", "55s", "all")


def test_a_kind_a_schedule_cannot_embed_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot embed"):
        schedule_manifest(make_fault("scheduled_chaos", {**CATALOG_DELAY, "type": "KernelChaos"}).params)


def test_scheduled_delay_slows_the_shop_until_the_schedule_is_gone() -> None:
    cluster, run = deployed(SHOP)
    before = cluster.entry_stats(30)
    fault = make_fault("scheduled_chaos", CATALOG_DELAY)
    state = fault.inject(cluster)
    children = spawned(cluster, "NetworkChaos", CATALOG_DELAY["name"])
    assert len(children) == 1 and children[0]["metadata"]["name"].startswith("product-catalog-network-delay-")
    schedule = cluster.get("Schedule", CHAOS_NAMESPACE, CATALOG_DELAY["name"])
    assert [a["name"] for a in schedule["status"]["active"]] == [children[0]["metadata"]["name"]]
    run.advance(60)
    slow = cluster.entry_stats(30)
    assert slow.p95_ms > 10 * max(before.p95_ms, 10.0) or slow.success_ratio < 0.9
    # Forbid: the undated child never finishes, so no second one is spawned.
    run.advance(120)
    assert [c["metadata"]["name"] for c in spawned(cluster, "NetworkChaos", CATALOG_DELAY["name"])] == [
        children[0]["metadata"]["name"]]

    agent = cluster.as_user("agent")
    # The agent's credential knows Chaos Mesh's kinds but nothing of the hidden namespace.
    assert agent.list("Schedule", None) == [] and agent.list("NetworkChaos", None) == []
    with pytest.raises(ApiError):
        agent.list("Schedule", CHAOS_NAMESPACE)
    with pytest.raises(ApiError):
        agent.get("NetworkChaos", CHAOS_NAMESPACE, children[0]["metadata"]["name"])

    fault.recover(cluster, state)
    run.advance(60)
    assert cluster.get("Schedule", CHAOS_NAMESPACE, CATALOG_DELAY["name"]) is None
    assert spawned(cluster, "NetworkChaos", CATALOG_DELAY["name"]) == []
    run.advance(60)
    after = cluster.entry_stats(30)
    assert after.success_ratio > 0.99 and after.p95_ms < 5 * max(before.p95_ms, 10.0)


def _children_over(cluster: Any, run: Any, seconds: int) -> list[str]:
    seen: list[str] = []
    for _ in range(seconds // 10):
        run.advance(10)
        for child in spawned(cluster, "NetworkChaos", CHECKOUT_PAYMENT_LOSS["name"]):
            if child["metadata"]["name"] not in seen:
                seen.append(child["metadata"]["name"])
    return seen


def test_a_55_second_experiment_comes_back_every_minute_and_repeats_with_the_seed() -> None:
    names = []
    for _ in range(2):
        cluster, run = deployed(SHOP)
        make_fault("scheduled_chaos", CHECKOUT_PAYMENT_LOSS).inject(cluster)
        seen = _children_over(cluster, run, 180)
        assert len(seen) >= 3  # one child a minute; history 1 keeps only the newest
        assert len(spawned(cluster, "NetworkChaos", CHECKOUT_PAYMENT_LOSS["name"])) == 1
        names.append(seen)
    assert names[0] == names[1]
