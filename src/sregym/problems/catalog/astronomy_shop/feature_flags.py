"""Astronomy Shop problems from the demo's failure flags, flipped in flagd's ConfigMap.

One builder, one row of data per flag (ITBench scenarios 2–8, 10 and 11; 10, imageSlowLoad, is
latency at frontend-proxy, which holds every product picture the flag's value in ms) and per ITBench two-flag
combination (12–15): the fault edits the flag's `defaultVariant` in `flagd-config` and restarts
flagd, exactly what an operator does to turn a flag on. The root cause is the ConfigMap (ITBench's
ground truth); the service whose code path the flag opens is the affected entity. The gold fix
puts the flag definitions back and restarts flagd; the checks read the symptom (errors, latency,
CPU, memory growth), so any way of turning the flag off passes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.catalog.astronomy_shop.common import (
    AA_SUITE_ALSO,
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    chart_object,
    deploy,
    error_free,
    mitigation,
    obj,
    restart,
    selector,
)
from sregym.problems.family import Param, declare_family
from sregym.problems.model import Action, CheckSpec, Difficulty, FaultSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

CONFIGMAP = "flagd-config"
KEY = "demo.flagd.json"


@dataclass(frozen=True)
class FlagCase:
    """One failure flag: the variant turned on, the service whose behaviour changes, what an
    operator sees, and the check that is green again once the flag is off."""

    flag: str
    variant: str
    service: str
    slug: str
    title: str
    symptom: str
    check: CheckSpec
    itbench: int
    difficulty: Difficulty = "medium"
    peers: tuple[str, ...] = ()  # the SREGym and AIOpsLab ids of the same scenario


def _latency(service: str, max_p95_ms: float) -> CheckSpec:
    return CheckSpec(check="service_latency_within", params={"service": service, "max_p95_ms": max_p95_ms})


def _leak(container: str) -> CheckSpec:
    return CheckSpec(check="memory_not_growing", params={"container": container})


FLAGS: dict[str, FlagCase] = {c.flag: c for c in (
    FlagCase("adHighCpu", "on", "ad", "ad-high-cpu", "the ad service's CPU use climbs",
             "ad's JVM starts busy threads that keep several cores spinning; ads get slower",
             CheckSpec(check="container_cpu_within", params={"container": "ad", "max_cores": 0.1}), 3),
    FlagCase("adFailure", "on", "ad", "ad-failure", "some ad requests fail",
             "one GetAds call in ten fails with gRPC UNAVAILABLE (`GetAds Failed with status ...`)",
             error_free("ad", "GetAds"), 5, "easy"),
    FlagCase("adManualGc", "on", "ad", "ad-manual-gc", "ad responses are slow",
             "ad runs full garbage collections inside GetAds: long pauses, p95 latency in the hundreds of ms",
             _latency("ad", 100.0), 6),
    FlagCase("cartFailure", "on", "cart", "cart-failure", "checkouts fail at emptying the cart",
             "every EmptyCart fails with `Can't access cart storage`, so placed orders error",
             error_free("cart", "EmptyCart"), 2, "easy"),
    FlagCase("paymentFailure", "50%", "payment", "payment-failure", "half of the payments fail",
             "half of the Charge calls fail with `Payment request failed. Invalid token.`",
             error_free("payment", "Charge"), 7, "easy"),
    FlagCase("paymentUnreachable", "on", "checkout", "payment-unreachable", "every checkout fails",
             "checkout dials a payment address that does not resolve; every PlaceOrder fails",
             error_free("checkout", "PlaceOrder"), 8),
    FlagCase("productCatalogFailure", "on", "product-catalog", "product-catalog-failure",
             "one product page keeps failing",
             "GetProduct fails with `Product Catalog Fail Feature Flag Enabled` for product OLJCESPC7Z",
             error_free("product-catalog", "GetProduct"), 4),
    FlagCase("recommendationCacheFailure", "on", "recommendation", "recommendation-cache-failure",
             "recommendation's memory keeps growing",
             "recommendation's product cache grows on every miss: memory climbs without bound",
             _leak("recommendation"), 0, "hard"),
    FlagCase("emailMemoryLeak", "100x", "email", "email-memory-leak", "email's memory keeps growing",
             "email keeps copies of every order confirmation: its memory climbs with each order",
             _leak("email"), 0, "hard"),
    FlagCase("kafkaQueueProblems", "on", "checkout", "kafka-queue-problems", "checkout slows down",
             "checkout floods the orders topic with extra messages per order; PlaceOrder latency triples",
             _latency("checkout", 120.0), 11, "hard"),
    FlagCase("loadGeneratorFloodHomepage", "on", "frontend", "load-generator-flood-homepage",
             "the frontend is overloaded",
             "the load generator's users each send a hundred homepage requests per pick: the frontend's "
             "request rate and CPU jump",
             CheckSpec(check="container_cpu_within", params={"container": "frontend", "max_cores": 0.05}), 1),
    FlagCase("imageSlowLoad", "10sec", "frontend-proxy", "image-slow-load", "product pictures take seconds to load",
             "every product picture the shop's pages fetch is held 10 s by frontend-proxy's fault filter "
             "(ProductCard sends x-envoy-fault-delay-request with the flag's value)",
             _latency("frontend-proxy", 2000.0), 10,
             peers=("sregym:astronomy_shop_ad_service_image_slow_load",
                    "aiopslab:astronomy_shop_image_slow_load-1")),
)}

# ITBench scenarios ITBench-AA released (benchmarks-facts §4): their problems join suite itbench-aa.
AA_RELEASED = frozenset({2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15})

COMBOS: tuple[tuple[int, str, str], ...] = (
    (12, "productCatalogFailure", "recommendationCacheFailure"),
    (13, "paymentFailure", "paymentUnreachable"),
    (14, "paymentFailure", "adFailure"),
    (15, "paymentUnreachable", "adFailure"),
)


# The same single flag in SREGym's and AIOpsLab's catalogues (AIOpsLab's id without its task type).
PEER_SOURCES: dict[str, tuple[str, ...]] = {
    flag: (f"sregym:{sregym}", f"aiopslab:{aiopslab}-1") if sregym else (f"aiopslab:{aiopslab}-1",)
    for flag, sregym, aiopslab in (
        ("adFailure", "astronomy_shop_ad_service_failure", "astronomy_shop_ad_service_failure"),
        ("adHighCpu", "astronomy_shop_ad_service_high_cpu", "astronomy_shop_ad_service_high_cpu"),
        ("adManualGc", "astronomy_shop_ad_service_manual_gc", "astronomy_shop_ad_service_manual_gc"),
        ("cartFailure", "astronomy_shop_cart_service_failure", "astronomy_shop_cart_service_failure"),
        ("paymentFailure", "astronomy_shop_payment_service_failure", "astronomy_shop_payment_service_failure"),
        ("paymentUnreachable", "astronomy_shop_payment_service_unreachable",
         "astronomy_shop_payment_service_unreachable"),
        ("productCatalogFailure", "astronomy_shop_product_catalog_service_failure",
         "astronomy_shop_product_catalog_service_failure"),
        ("recommendationCacheFailure", "", "astronomy_shop_recommendation_service_cache_failure"),
        ("kafkaQueueProblems", "kafka_queue_problems", "astronomy_shop_kafka_queue_problems"),
        ("loadGeneratorFloodHomepage", "loadgenerator_flood_homepage", "astronomy_shop_loadgenerator_flood_homepage"),
    )
}


def _sources(*cases: FlagCase, itbench: int = 0, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    number = itbench or (cases[0].itbench if len(cases) == 1 else 0)
    peers = cases[0].peers + PEER_SOURCES.get(cases[0].flag, ()) if len(cases) == 1 else ()
    return (f"itbench:{number}",) * bool(number) + peers + extra


def flag_problem(cases: tuple[FlagCase, ...], *, slug: str, title: str, difficulty: Difficulty,
                 itbench: int = 0, extra_suites: tuple[str, ...] = ()) -> Problem:
    """The problem of turning `cases`' flags on: one ConfigMap edit, the flags' services affected."""
    flags = {c.flag: c.variant for c in cases}
    services = tuple(dict.fromkeys(c.service for c in cases))
    named = " and ".join(f"{c.flag}={c.variant}" for c in cases)
    original = chart_object("ConfigMap", CONFIGMAP)["data"][KEY]
    return Problem(
        id=f"astronomy-shop/{slug}-v1",
        title=title,
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app", "config"), difficulty=difficulty, suites=(SUITE, *extra_suites),
                  sources=_sources(*cases, itbench=itbench, extra=tuple(
                      s for s in extra_suites if (itbench or cases[0].itbench) in AA_RELEASED))),
        faults=(FaultSpec(fault="set_flag_variant", params={
            "namespace": NAMESPACE, "flags": flags, "configmap": CONFIGMAP, "key": KEY,
            "restart_selector": selector("flagd")}),),
        ground_truth=GroundTruth(
            root_causes=(obj("ConfigMap", CONFIGMAP),), mechanism="feature_flag",
            detail=f"the defaultVariant of {named} in ConfigMap {CONFIGMAP} ({KEY}); flagd serves it to "
                   f"{', '.join(services)}",
            detail_keywords=(*flags, CONFIGMAP, "defaultVariant"),
            affected=tuple(deploy(s) for s in services), impact_keywords=IMPACT,
            description="A feature flag was turned on in flagd's ConfigMap and flagd restarted with it: "
                        + "; ".join(c.symptom for c in cases) + "."),
        mitigation=mitigation(*(c.check for c in cases)),
        gold=(Action(op="patch", kind="ConfigMap", namespace=NAMESPACE, name=CONFIGMAP, patch_type="merge",
                     patch={"data": {KEY: original}}),
              restart("flagd")),
        settle_s=SETTLE_S,
    )


@problem
def failure_flags() -> list[Problem]:
    """A failure flag of the demo is turned on in `flagd-config` (its `defaultVariant` moved
    from `off`) and flagd is restarted so it serves the flag.

    The service that evaluates the flag takes the flag's code path: errors (adFailure,
    cartFailure, paymentFailure, paymentUnreachable, productCatalogFailure), latency (adManualGc,
    kafkaQueueProblems), CPU (adHighCpu, ITBench-AA's task 3), load (loadGeneratorFloodHomepage,
    ITBench 1: the load generator's users flood the homepage) or memory growth
    (recommendationCacheFailure, emailMemoryLeak). Every pod stays Running and Ready. Fix: set
    the flag back to `off` and restart flagd (its init container copies the ConfigMap at start).
    """
    return [flag_problem((c,), slug=f"flag-{c.slug}", title=c.title, difficulty=c.difficulty,
                         extra_suites=("itbench-aa",) if c.itbench in AA_RELEASED | AA_SUITE_ALSO else ())
            for c in FLAGS.values()]


@problem
def failure_flag_pairs() -> list[Problem]:
    """Two failure flags are turned on together in `flagd-config` (ITBench scenarios 12–15),
    and flagd restarted. Both symptoms show, often in different services; the one root cause is
    the ConfigMap edit. Fix: both flags back to `off`, flagd restarted.
    """
    out = []
    for number, first, second in COMBOS:
        a, b = FLAGS[first], FLAGS[second]
        out.append(flag_problem((a, b), slug=f"flags-{a.slug}-and-{b.slug}", difficulty="hard",
                                title=f"{a.title}; {b.title}", itbench=number,
                                extra_suites=("itbench-aa",) if number in AA_RELEASED else ()))
    return out


# The share of Charge calls the paymentFailure variants fail (the demo's own variants, named by
# percent), and how a card says it.
PAYMENT_SHARES: dict[int, str] = {50: "half", 10: "one in ten", 25: "a quarter", 75: "three quarters",
                                  90: "nearly all", 100: "all"}


def payment_failure(percent: int = 50) -> Problem:
    """flag-payment-failure with another of the flag's variants (`percent`% of the charges fail)."""
    share = PAYMENT_SHARES[percent]
    case = replace(FLAGS["paymentFailure"], variant=f"{percent}%", title=f"{share} of the payments fail",
                   symptom=f"{share} of the Charge calls fail with `Payment request failed. Invalid token.`")
    return flag_problem((case,), slug=f"flag-{case.slug}", title=case.title, difficulty=case.difficulty,
                        extra_suites=("itbench-aa",) if case.itbench in AA_RELEASED else ())


declare_family("astronomy-shop/flag-payment-failure-v1", (Param("percent", tuple(PAYMENT_SHARES)),),
               payment_failure, defaults={"percent": 50})
