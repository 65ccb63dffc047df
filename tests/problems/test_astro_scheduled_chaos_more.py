"""The rest of ITBench's scheduled Chaos Mesh scenarios on the Astronomy Shop: StressChaos,
HTTPChaos and JVMChaos Schedules left running in the shop's namespace, and the two scenarios with
a second cause (two Schedules on valkey-cart; cart without limits). The JVMChaos run shows the
Byteman rule really reaching ad's handler: the child is Injected on ad's JVM, GetAds fails with a
NullPointerException in ad's log, restarting ad does not help, pausing the Schedule does. The
registry-wide check protocol (`sregym check`) runs each problem's gold and noop."""

from __future__ import annotations

import json

import pytest

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.faults.scheduled_chaos import spawned
from sregym.problems.catalog.astronomy_shop.common import restart
from sregym.problems.catalog.astronomy_shop.scheduled_chaos_more import CASES
from sregym.problems.registry import get_problem
from sregym.problems.run import apply_action
from support.problem_runs import deployed

FORBIDDEN = ("sregym", "benchmark", "fault", "inject", "itbench", "ground")
PAUSE = "experiment.chaos-mesh.org/pause"
JVM_PROBLEM = "astronomy-shop/ad-scheduled-jvm-return-null-v1"
TWO_SCHEDULES = "astronomy-shop/valkey-cart-scheduled-stress-and-delay-v1"
UNLIMITED = "astronomy-shop/cart-unlimited-scheduled-memory-stress-v1"


def _itbench(problem_id: str) -> set[int]:
    return {int(s.split(":")[1]) for s in get_problem(problem_id).tags.sources if s.startswith("itbench:")}


def test_the_family_covers_the_remaining_scheduled_scenarios() -> None:
    covered: set[int] = set()
    for case in CASES.values():
        p = get_problem(f"astronomy-shop/{case.slug}-v1")
        covered |= _itbench(p.id)
        schedule = p.faults[0].params
        assert schedule["schedule_namespace"] == NAMESPACE
        assert [(rc.entity.kind, rc.entity.name) for rc in p.ground_truth.root_causes] == [
            ("Schedule", schedule["name"])]
        assert p.ground_truth.affected[0].entity.name == case.victim
        assert [(a.op, a.kind, a.name) for a in p.gold] == [("delete", "Schedule", schedule["name"])]
        visible = (p.title + json.dumps(schedule)).lower()
        assert not [w for w in FORBIDDEN if w in visible], visible
    covered |= _itbench(TWO_SCHEDULES) | _itbench(UNLIMITED)
    assert covered == {19, 21, 22, 25, 27, 29, 35, 41, 62}


def test_two_causes_need_two_fixes() -> None:
    two = get_problem(TWO_SCHEDULES)
    assert [f.params["name"] for f in two.faults] == ["valkey-cart-stress-chaos", "valkey-cart-network-delay"]
    assert {rc.entity.name for rc in two.ground_truth.root_causes} == {"valkey-cart-stress-chaos",
                                                                        "valkey-cart-network-delay"}
    assert [(a.op, a.name) for a in two.gold] == [("delete", "valkey-cart-stress-chaos"),
                                                  ("delete", "valkey-cart-network-delay")]
    unlimited = get_problem(UNLIMITED)
    assert [f.fault for f in unlimited.faults] == ["patch_objects", "scheduled_chaos"]
    assert {(rc.entity.kind, rc.entity.name) for rc in unlimited.ground_truth.root_causes} == {
        ("Schedule", "cart-stress-chaos-memory"), ("Deployment", "cart")}
    restore = unlimited.gold[1]
    assert (restore.op, restore.name) == ("patch", "cart")
    assert [c.check for c in unlimited.mitigation.must_fix] == ["container_memory_within", "safeguards_kept"]
    assert [c.check for c in unlimited.mitigation.durability] == ["sustained_ready"]


@pytest.fixture(scope="module")
def jvm_injected():
    cluster, run = deployed(JVM_PROBLEM)
    run.inject()
    run.advance(30)
    return cluster, run


def test_the_byteman_rule_reaches_ads_handler_and_a_restart_does_not_help(jvm_injected) -> None:
    cluster, run = jvm_injected
    agent = cluster.as_user("agent")
    [child] = agent.list("JVMChaos", NAMESPACE)
    records = child["status"]["experiment"]["containerRecords"]
    assert records and {r["phase"] for r in records} == {"Injected"}
    assert all(r["id"].split("/")[2] == "ad" for r in records)
    pod = records[0]["id"].split("/")[1]
    log = cluster.logs(NAMESPACE, pod, container="ad")
    assert "java.lang.NullPointerException" in log
    [result] = run.must_fix_now()
    assert not result.passed and "failed" in result.detail
    apply_action(cluster, restart("ad"))
    assert not run.verify(window_s=90).passed


def test_pausing_the_jvm_schedule_ends_the_failures(jvm_injected) -> None:
    cluster, run = jvm_injected
    cluster.as_user("agent").patch("Schedule", NAMESPACE, "ad-jvm-return",
                                   {"metadata": {"annotations": {PAUSE: "true"}}}, patch_type="merge")
    run.advance(10)
    for child in spawned(cluster, "JVMChaos", "ad-jvm-return", NAMESPACE):
        assert (child["metadata"].get("annotations") or {}).get(PAUSE) == "true"
    score = run.verify()
    assert score.passed, score


def test_jvmchaos_attaches_only_to_the_shops_java_services(jvm_injected) -> None:
    cluster, run = jvm_injected
    for name, component in (("probe-cart", "cart"), ("probe-fraud", "fraud-detection")):
        cluster.create({"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "JVMChaos",
                        "metadata": {"name": name, "namespace": NAMESPACE},
                        "spec": {"action": "latency", "latency": 10, "class": "Main", "method": "main", "port": 9277,
                                 "mode": "all", "selector": {"namespaces": [NAMESPACE], "labelSelectors": {
                                     "app.kubernetes.io/component": component}}}})
    run.advance(3)
    phases = {name: {r["phase"] for r in cluster.get("JVMChaos", NAMESPACE, name)["status"]["experiment"][
        "containerRecords"]} for name in ("probe-cart", "probe-fraud")}
    assert phases == {"probe-cart": {"Not Injected"}, "probe-fraud": {"Injected"}}  # .NET cart, Kotlin fraud
    for name in ("probe-cart", "probe-fraud"):
        cluster.delete("JVMChaos", NAMESPACE, name)
    run.advance(3)


@pytest.fixture(scope="module")
def quote_aborted():
    cluster, run = deployed("astronomy-shop/quote-scheduled-http-abort-v1")
    run.inject()
    run.advance(30)
    return cluster, run


def test_an_http_abort_on_quote_fails_shippings_calls_to_it(quote_aborted) -> None:
    cluster, run = quote_aborted
    [child] = cluster.as_user("agent").list("HTTPChaos", NAMESPACE)
    assert {r["phase"] for r in child["status"]["experiment"]["containerRecords"]} == {"Injected"}
    [result] = run.must_fix_now()
    assert not result.passed and "shipping" in result.detail and "failed" in result.detail
