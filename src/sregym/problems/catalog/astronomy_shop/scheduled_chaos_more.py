"""More Astronomy Shop problems rooted in a Chaos Mesh Schedule left running in the shop's
namespace: ITBench's scheduled StressChaos and HTTPChaos scenarios (19, 21, 22, 25, 27, 41, 62).

They share `scheduled_chaos`'s setting (the Schedule sits in astronomy-shop, spawns its child every
minute, the agent can see, pause or delete it) and its problem shape (`scheduled_problem`); this
module only adds the cases whose symptom comes from the twin's stress and HTTP rewrite engines, and
the two scenarios with a second cause: ITBench 62 runs two Schedules against valkey-cart (memory and
CPU stress, a 750 ms delay) and ITBench 41 strips cart's limits before stressing its memory, so each
needs both of its fixes.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE, PORTS
from sregym.problems.catalog.astronomy_shop.common import deploy, obj
from sregym.problems.catalog.astronomy_shop.scheduled_chaos import (
    ScheduledCase,
    component,
    scheduled_problem,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, Problem
from sregym.problems.registry import problem

AD_NULL_RULE = ("RULE modifyReturnValue\nCLASS AdService\nMETHOD getInstance\nAT ENTRY\nIF true\n"
                "DO return null\nENDRULE")  # ITBench 29's script
RUN = "55s"  # every ITBench scheduled experiment here runs 55 s of each minute
CART_MEMORY_LIMIT = "160Mi"  # the chart's limit on cart, which ITBench 41 removes


def _ready_through_next_run(deployment: str) -> CheckSpec:
    """Ready without a restart for longer than a cron minute: the next run would show."""
    return CheckSpec(check="sustained_ready", params={"deployment": deployment, "seconds": 70.0})


def _memory(size: str, workers: int) -> dict[str, Any]:
    return {"duration": RUN, "stressors": {"memory": {"size": size, "workers": workers}}}


def _cases() -> tuple[ScheduledCase, ...]:
    return (
        ScheduledCase(
            "shipping-quote-partition-until-removed", "shipping cannot reach quote",
            "fraud-detection-kafka-network-partition", "NetworkChaos", "shipping",
            {"action": "partition", "direction": "to"},
            "Schedule fraud-detection-kafka-network-partition (despite its name) runs a NetworkChaos partition "
            "from shipping to quote with no duration: its child stays until removed",
            ("frontend", "checkout"),
            CheckSpec(check="keeps_reaching", params={"deployment": "shipping", "targets": [["quote", PORTS["quote"]]],
                                                      "seconds": 70.0}),
            ("itbench:19",), target="quote", keywords=("partition", "quote")),
        ScheduledCase(
            "valkey-cart-scheduled-memory-stress", "carts keep getting emptied",
            "valkey-memory-stress", "StressChaos", "valkey-cart", _memory("100%", 4),
            "Schedule valkey-memory-stress spawns a StressChaos every minute whose 4 memory workers try to take "
            "all memory inside valkey-cart's container; its 20Mi limit OOM-kills valkey-cart",
            ("cart", "frontend"), _ready_through_next_run("valkey-cart"), ("itbench:21",),
            keywords=("memory", "OOMKilled")),
        ScheduledCase(
            "ad-scheduled-memory-stress", "ads keep disappearing",
            "ad-memory-stress", "StressChaos", "ad", _memory("100%", 4),
            "Schedule ad-memory-stress spawns a StressChaos every minute whose 4 memory workers try to take all "
            "memory inside ad's container; its 300Mi limit OOM-kills ad",
            ("frontend",), _ready_through_next_run("ad"), ("itbench:22",), keywords=("memory", "OOMKilled")),
        ScheduledCase(
            "recommendation-scheduled-cpu-stress", "recommendations are slow every minute",
            "recommendation-cpu-stress", "StressChaos", "recommendation",
            {"duration": RUN, "stressors": {"cpu": {"load": 100, "workers": 30}}},
            "Schedule recommendation-cpu-stress spawns a StressChaos every minute: 30 CPU workers at 100% load "
            "inside recommendation's container, which has no CPU limit, so they take the node's cores",
            ("frontend",),
            CheckSpec(check="container_cpu_within", params={"container": "recommendation", "max_cores": 1.0}),
            ("itbench:25",), keywords=("cpu",)),
        ScheduledCase(
            "quote-scheduled-http-abort", "shipping quotes fail every minute",
            "quote-http-chaos-abort", "HTTPChaos", "quote",
            {"duration": RUN, "target": "Request", "port": PORTS["quote"], "method": "POST", "path": "*",
             "abort": True},
            "Schedule quote-http-chaos-abort spawns an HTTPChaos every minute that aborts every POST to quote on "
            "port 8080 (the connection is dropped), so shipping cannot get quotes",
            ("shipping", "checkout", "frontend"),
            CheckSpec(check="service_error_free", params={"service": "shipping", "window_s": 60.0}),
            ("itbench:27",), keywords=("abort", "HTTP")),
        ScheduledCase(
            "ad-scheduled-jvm-return-null", "ads fail to load every minute",
            "ad-jvm-return", "JVMChaos", "ad",
            {"duration": RUN, "action": "ruleData", "ruleData": AD_NULL_RULE},
            "Schedule ad-jvm-return spawns a JVMChaos every minute whose Byteman rule makes AdService.getInstance "
            "return null: every GetAds dereferences it and fails with a NullPointerException (gRPC UNKNOWN)",
            ("frontend",), CheckSpec(check="service_error_free", params={"service": "ad", "window_s": 60.0}),
            ("itbench:29",), keywords=("JVM", "Byteman", "getInstance", "NullPointerException")),
        ScheduledCase(
            "ad-scheduled-jvm-heap-stress", "ad keeps failing and pausing",
            "ad-jvm-chaos", "JVMChaos", "ad",
            {"duration": RUN, "action": "stress", "memType": "heap"},
            "Schedule ad-jvm-chaos spawns a JVMChaos every minute that fills ad's Java heap: its requests fail "
            "with java.lang.OutOfMemoryError: Java heap space while the collector runs back to back",
            ("frontend",), CheckSpec(check="service_error_free", params={"service": "ad", "window_s": 60.0}),
            ("itbench:35",), keywords=("JVM", "heap", "OutOfMemoryError")),
    )


CASES: dict[str, ScheduledCase] = {c.slug: c for c in _cases()}

VALKEY_STRESS = ScheduledCase(
    "valkey-cart-scheduled-stress-and-delay", "cart is slow and loses items every minute",
    "valkey-cart-stress-chaos", "StressChaos", "valkey-cart",
    {"duration": RUN, "stressors": {"cpu": {"load": 50, "workers": 2},
                                    "memory": {"size": "128MB", "workers": 4, "options": ["--vm-hang", "0"]}}},
    "Schedule valkey-cart-stress-chaos stresses valkey-cart's CPU and 128MB of memory (over its 20Mi limit) "
    "and Schedule valkey-cart-network-delay delays valkey-cart's packets by 750 ms both ways, every minute",
    ("cart", "frontend"), _ready_through_next_run("valkey-cart"), ("itbench:62",),
    keywords=("valkey-cart-network-delay", "NetworkChaos", "delay", "memory"))
VALKEY_DELAY = ScheduledCase(
    "valkey-cart-scheduled-delay", "", "valkey-cart-network-delay", "NetworkChaos", "valkey-cart",
    {"duration": RUN, "action": "delay", "direction": "both", "delay": {"latency": "750ms"}}, "", (),
    CheckSpec(check="service_latency_within", params={"service": "cart", "max_p95_ms": 500.0}), ())

CART_STRESS = ScheduledCase(
    "cart-unlimited-scheduled-memory-stress", "cart keeps failing and its node runs out of memory",
    "cart-stress-chaos-memory", "StressChaos", "cart", _memory("85%", 10),
    "cart's container lost its resource limits and Schedule cart-stress-chaos-memory spawns a StressChaos every "
    "minute whose 10 memory workers take 85% of memory inside it; with no limit to stop them they take the node's",
    ("frontend", "checkout"),
    CheckSpec(check="container_memory_within", params={"container": "cart", "max_bytes": 1 << 30}), ("itbench:41",),
    keywords=("limits", "memory", "cart"))


def _with_second_schedule(first: ScheduledCase, second: ScheduledCase) -> Problem:
    """ITBench 62: two Schedules against one victim; each is a root cause, the gold ends both."""
    base = scheduled_problem(first)
    extra = scheduled_problem(second)
    return base.model_copy(update={
        "faults": (*base.faults, *extra.faults),
        "ground_truth": base.ground_truth.model_copy(update={
            "root_causes": (*base.ground_truth.root_causes, obj("Schedule", second.schedule))}),
        "mitigation": base.mitigation.model_copy(update={
            "must_fix": (*base.mitigation.must_fix, second.check)}),
        "gold": (*base.gold, *extra.gold),
    })


def _cart_limits_removed() -> FaultSpec:
    return FaultSpec(fault="patch_objects", params={"patches": [{
        "kind": "Deployment", "namespace": NAMESPACE, "name": "cart", "patch_type": "json",
        "patch": [{"op": "remove", "path": "/spec/template/spec/containers/0/resources/limits"}]}]})


def _unlimited_and_stressed(case: ScheduledCase) -> Problem:
    """ITBench 41: the limit removed first, then the Schedule; the gold restores both. Without a
    limit the stressors take most of the node's memory (judged on cart's peak working set); with
    the limit back alone they OOM-kill cart every minute (the durability check)."""
    base = scheduled_problem(case)
    restore = Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="cart", patch={"spec": {"template": {
        "spec": {"containers": [{"name": "cart", "resources": {"limits": {"memory": CART_MEMORY_LIMIT}}}]}}}})
    return base.model_copy(update={
        "faults": (_cart_limits_removed(), *base.faults),
        "ground_truth": base.ground_truth.model_copy(update={
            "root_causes": (*base.ground_truth.root_causes, deploy("cart"))}),
        "mitigation": base.mitigation.model_copy(update={
            "must_fix": (*base.mitigation.must_fix, CheckSpec(check="safeguards_kept")),
            # limits back but the Schedule left: the next run OOM-kills cart (cart is ready meanwhile,
            # so this cannot be a must-fix check, which must fail while the stress has no limit)
            "durability": (_ready_through_next_run("cart"),)}),
        "gold": (*base.gold, restore),
    })


@problem
def scheduled_chaos_left_running_more() -> list[Problem]:
    """A Chaos Mesh Schedule in the shop's namespace strikes every minute (ITBench's scheduled
    StressChaos and HTTPChaos scenarios): memory stress on valkey-cart (21) and ad (22), CPU
    stress on recommendation (25), POSTs to quote aborted (27), the shipping→quote partition under
    ITBench 19's Schedule name; two Schedules on valkey-cart (62); cart without limits under memory
    stress (41). The Schedule(s) are root causes (and cart's Deployment in 41); deleting or pausing
    them is the fix, restarting the victim is not."""
    return [*(scheduled_problem(c) for c in CASES.values()),
            _with_second_schedule(VALKEY_STRESS, VALKEY_DELAY),
            _unlimited_and_stressed(CART_STRESS)]


__all__ = ["CART_STRESS", "CASES", "VALKEY_DELAY", "VALKEY_STRESS", "component"]
