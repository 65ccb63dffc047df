"""Astronomy Shop metastable failures: a short trigger, a bad state that outlives it.

Each builder's docstring is the problem card. The sustaining loop is the data plane's own: a
caller whose per-attempt timeout is below the callee's latency under load retries every call,
the retries multiply the callee's arrivals past its capacity, and the queue they build keeps
every attempt late. The trigger (`transient_chaos`) ends before the agent starts; the
durability check (`replayed_chaos_recovers`) replays it.

The demo's gRPC clients set no deadline and no retries; the twin reads a per-peer client policy
from `<PEER>_RPC_TIMEOUT` / `<PEER>_RPC_RETRIES` (`apps/astronomy_shop/programs.py`), a knob
the real demo does not have — it stands for a retry interceptor someone added to the frontend.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.catalog.astronomy_shop.common import APP, IMPACT, SUITE, deploy
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

CATALOG_TIMEOUT = "20ms"
CATALOG_RETRIES = "5"
CATALOG_CPU = "30m"  # ~2× what normal traffic's GetProduct/ListProducts need; far below ×6 attempts
# The chart's 20Mi would OOM-kill product-catalog under the storm's in-flight calls, and each
# restart empties its queue: a resized pod keeps the failure a retry storm.
CATALOG_MEMORY = "64Mi"
CATALOG_DELAY = {"name": "latency-shaping", "kind": "NetworkChaos", "namespace": NAMESPACE,
                 "labels": {"opentelemetry.io/name": "product-catalog"},
                 "action": {"action": "delay", "delay": {"latency": "30ms"}, "direction": "to"}, "seconds": 20.0}


def _env_patch(container: str, env: dict[str, str]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [
        {"name": container, "env": [{"name": k, "value": v} for k, v in env.items()]}]}}}}


def _resources_patch(container: str, cpu: str, memory: str) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [
        {"name": container, "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu, "memory": memory}}}]}}}}


@problem
def metastable_catalog_retry_storm() -> Problem:
    """The frontend's product-catalog client runs with a 20 ms per-attempt timeout and 5 retries
    (env `PRODUCT_CATALOG_RPC_TIMEOUT`, `PRODUCT_CATALOG_RPC_RETRIES` on the frontend
    Deployment — a knob the twin models, the real demo's client has none), while
    `product-catalog` was resized to a 30m CPU limit (about twice what normal traffic needs) and a
    64Mi memory limit. Then
    every packet product-catalog sends is delayed by 30 ms for 20 s (a congested link), and the delay goes away.

    During the delay every attempt exceeds 20 ms; the frontend abandons its
    GetProduct/ListProducts calls and retries each up to five times, so product-catalog receives
    several times the normal load — more than its limit serves even without the dip. Its queue
    stays at the frontend's timeout: product pages, recommendations and the cart fail with
    DeadlineExceeded at the frontend, product-catalog is CPU-throttled, and it persists at
    normal traffic after the delay is gone. Restarting product-catalog clears the queue only until
    the next slowdown. Fix: a timeout above product-catalog's latency and few retries on the frontend
    (rolled out). A durability check replays the 20 s of 30 ms latency; the shop must come back
    within a minute or so.
    """
    return Problem(
        id="astronomy-shop/metastable-catalog-retry-storm-v1",
        title="product pages and recommendations keep failing although every pod is running",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("metastable",), difficulty="hard", suites=(SUITE,)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
                    {"kind": "Deployment", "namespace": NAMESPACE, "name": "product-catalog",
                     "patch": _resources_patch("product-catalog", CATALOG_CPU, CATALOG_MEMORY)},
                    {"kind": "Deployment", "namespace": NAMESPACE, "name": "frontend",
                     "patch": _env_patch("frontend", {"PRODUCT_CATALOG_RPC_TIMEOUT": CATALOG_TIMEOUT,
                                                      "PRODUCT_CATALOG_RPC_RETRIES": CATALOG_RETRIES})}]}),
                FaultSpec(fault="transient_chaos", params={
                    **CATALOG_DELAY,
                    "wait_rollout": [f"{NAMESPACE}/product-catalog", f"{NAMESPACE}/frontend"]})),
        ground_truth=GroundTruth(
            root_causes=(deploy("frontend"),), mechanism="retry_storm",
            detail=f"the frontend's product-catalog client uses PRODUCT_CATALOG_RPC_TIMEOUT={CATALOG_TIMEOUT} "
                   f"with PRODUCT_CATALOG_RPC_RETRIES={CATALOG_RETRIES}: after 20 s of extra latency the retries keep "
                   "product-catalog overloaded",
            detail_keywords=("PRODUCT_CATALOG_RPC_TIMEOUT", "PRODUCT_CATALOG_RPC_RETRIES", CATALOG_TIMEOUT,
                             "retries", "retry", "timeout", "metastable"),
            affected=(deploy("product-catalog"), deploy("frontend")), impact_keywords=IMPACT,
            description="A short network slowdown pushed product-catalog's latency past the frontend's tiny timeout; "
                        "the retries multiply the load on product-catalog, which stays saturated at normal "
                        "traffic."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="entry_slo"),),
            durability=(CheckSpec(check="replayed_chaos_recovers", params=CATALOG_DELAY),),
            window_s=180.0),
        gold=(Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="frontend",
                     patch=_env_patch("frontend", {"PRODUCT_CATALOG_RPC_TIMEOUT": "5s",
                                                   "PRODUCT_CATALOG_RPC_RETRIES": "0"})),),
    )


# ====================================================== load spike + retry storm on currency
CURRENCY_TIMEOUT = "20ms"
CURRENCY_RETRIES = "5"
CURRENCY_CPU = "11m"  # ~1.1× what normal traffic's Convert/GetSupportedCurrencies need
# Enough memory for the storm's in-flight calls: an OOM kill would empty the queue and end it.
CURRENCY_MEMORY = "2Gi"
LOAD_SPIKE = {"namespace": NAMESPACE, "name": "load-generator", "multiplier": 3, "seconds": 20.0}


@problem
def metastable_currency_load_spike() -> Problem:
    """The frontend's currency client runs with a 20 ms per-attempt timeout and 5 retries (env
    `CURRENCY_RPC_TIMEOUT`, `CURRENCY_RPC_RETRIES` on the frontend Deployment — a knob the twin
    models, standing for a retry interceptor someone added), while `currency` was resized to a
    14m CPU limit, enough for normal traffic with little headroom. Then the shop's traffic spikes
    (the load generator runs three times its users for 20 s) and goes back to normal.

    During the spike currency's queue grows past 20 ms; the frontend abandons its Convert and
    GetSupportedCurrencies calls and retries each up to five times, so currency receives several
    times the normal load — more than its limit can serve. Its queue stays at the frontend's
    timeout: pages that show prices fail with DeadlineExceeded at the frontend, currency is
    CPU-throttled, and it persists at normal traffic long after the spike (SREGym's
    load_spike_rpc_retry_storm anatomy). Restarting currency clears the queue only until the next
    spike. Fix: a timeout above currency's latency and few retries on the frontend (rolled out), or
    enough currency capacity for the retries. A durability check replays the spike; the shop must
    come back within a minute or so.
    """
    return Problem(
        id="astronomy-shop/metastable-currency-load-spike-v1",
        title="prices fail to load since a traffic spike, although traffic is back to normal",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("metastable",), difficulty="hard", suites=(SUITE,)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
                    {"kind": "Deployment", "namespace": NAMESPACE, "name": "currency",
                     "patch": _resources_patch("currency", CURRENCY_CPU, CURRENCY_MEMORY)},
                    {"kind": "Deployment", "namespace": NAMESPACE, "name": "frontend",
                     "patch": _env_patch("frontend", {"CURRENCY_RPC_TIMEOUT": CURRENCY_TIMEOUT,
                                                      "CURRENCY_RPC_RETRIES": CURRENCY_RETRIES})}]}),
                FaultSpec(fault="scale_burst", params={
                    **LOAD_SPIKE, "wait_rollout": [f"{NAMESPACE}/currency", f"{NAMESPACE}/frontend"]})),
        ground_truth=GroundTruth(
            root_causes=(deploy("frontend"),), mechanism="retry_storm",
            detail=f"the frontend's currency client uses CURRENCY_RPC_TIMEOUT={CURRENCY_TIMEOUT} with "
                   f"CURRENCY_RPC_RETRIES={CURRENCY_RETRIES}: after a traffic spike the retries keep currency "
                   "overloaded",
            detail_keywords=("CURRENCY_RPC_TIMEOUT", "CURRENCY_RPC_RETRIES", CURRENCY_TIMEOUT, "retries", "retry",
                             "timeout", "metastable"),
            affected=(deploy("currency"), deploy("frontend")), impact_keywords=IMPACT,
            description="A short traffic spike pushed currency's latency past the frontend's tiny timeout; the "
                        "retries multiply the load on currency, which stays saturated at normal traffic."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="entry_slo"),),
            durability=(CheckSpec(check="replayed_burst_recovers", params=LOAD_SPIKE),),
            window_s=180.0),
        gold=(Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="frontend",
                     patch=_env_patch("frontend", {"CURRENCY_RPC_TIMEOUT": "5s", "CURRENCY_RPC_RETRIES": "0"})),),
    )
