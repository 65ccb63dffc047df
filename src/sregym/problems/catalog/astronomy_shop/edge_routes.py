"""Astronomy Shop's edge proxy given a route timeout shorter than its slowest user flow.

Envoy's route `timeout` bounds the whole upstream response of every request on that route (the
default is 15 s; the demo's template keeps it on the catch-all route to `frontend`). An edge team
tightens it as a latency budget: a ConfigMap holding frontend-proxy's `envoy.tmpl.yaml`, the
demo's own except `timeout: 0.02s` on the catch-all route, mounted over the image's template.
That budget sits above what browsing takes (product pages, cart, the catalogue: a few to fifteen
milliseconds here) and below what placing an order takes (`POST /api/checkout` walks cart,
currency, shipping and quote, payment, email and Kafka in turn: about twenty): Envoy gives up on
every checkout and answers 504 `upstream request timeout` with response flag `UT`, counting
`upstream_rq_timeout` on the frontend cluster, while the frontend finishes the order nobody
waits for. Every pod is Running and Ready; only the orders stop.

The rollout that mounts the file restarts frontend-proxy (Envoy reads its configuration only at
start), so the budget is live when the agent arrives; a corrected ConfigMap equally needs a
restart. Fix: remove the short timeout (or raise it above the checkout's latency) in the
ConfigMap, and restart frontend-proxy.
"""

from __future__ import annotations

from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    WINDOW_S,
    deploy,
    error_free,
    restart,
)
from sregym.problems.catalog.astronomy_shop.edge_filter import (
    PROXY,
    TEMPLATE_KEY,
    image_template,
    template_configmap,
    template_mount_patch,
)
from sregym.problems.model import Action, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import EntityPattern, GroundTruth, RootCause

mechanisms({
    "route_timeout_too_short": (
        "route timeout", "upstream request timeout", "upstream_rq_timeout", "504", "gateway timeout",
        "timeout too short", "too short timeout", "short timeout", "route timeout too short",
        "response flag ut", "ut flag", "latency budget"),
}, related={"route_timeout_too_short": ("retry_storm", "ingress_misroute")})

CONFIGMAP = "frontend-proxy-routes"
CATCH_ALL = "                          route: { cluster: frontend }\n"
SHORT_TIMEOUT = "0.02s"
CHECKOUT_PATH = "/api/checkout"


def template_with_timeout(timeout: str) -> str:
    """The image's template with `timeout` on the catch-all route to `frontend`."""
    text = image_template()
    if text.count(CATCH_ALL) != 1:
        raise ValueError("frontend-proxy's template has no single catch-all route to frontend")
    return text.replace(CATCH_ALL, CATCH_ALL.replace("frontend }", f"frontend, timeout: {timeout} }}"))


def _configmap() -> dict[str, Any]:
    return template_configmap(CONFIGMAP, template_with_timeout(SHORT_TIMEOUT))


def _proxy_patch() -> dict[str, Any]:
    """Mount the ConfigMap over the image's template (the rollout restarts the proxy)."""
    return template_mount_patch(CONFIGMAP, "envoy-routes", {"edge.platform/change-ticket": "EDGE-1912",
                                                           "edge.platform/latency-budget": "storefront-p99"})


@problem
def edge_route_timeout() -> Problem:
    """frontend-proxy's Envoy gets `timeout: 0.02s` on its catch-all route to the frontend (its
    mounted `envoy.tmpl.yaml`, ConfigMap `frontend-proxy-routes`): shorter than a checkout takes.

    Symptoms: browsing works; every `POST /api/checkout` answers 504 `upstream request timeout`
    after 20 ms, the proxy's access log shows `UT`, `envoy_cluster_upstream_rq_timeout` rises on
    the frontend cluster, no orders reach Kafka's consumers. Every pod is Running and Ready.
    Fix: drop the short timeout in the ConfigMap and restart frontend-proxy.
    """
    return Problem(
        id="astronomy-shop/edge-route-timeout-v1",
        title="customers can browse the shop but every checkout fails",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app", "config"), difficulty="medium", suites=(SUITE,), sources=()),
        faults=(
            FaultSpec(fault="create_objects", params={"objects": [_configmap()]}),
            FaultSpec(fault="patch_objects", params={"patches": [_proxy_patch()]}),
            FaultSpec(fault="wait_pod_turnover", params={"namespace": NAMESPACE,
                                                         "label_selector": f"opentelemetry.io/name={PROXY}"}),
        ),
        ground_truth=GroundTruth(
            root_causes=(RootCause(entity=deploy(PROXY).entity, aliases=(
                *deploy(PROXY).aliases, EntityPattern(kind="ConfigMap", namespace=NAMESPACE, name=CONFIGMAP))),),
            mechanism="route_timeout_too_short",
            detail=f"the Envoy configuration mounted on frontend-proxy (ConfigMap {CONFIGMAP}) sets "
                   f"`timeout: {SHORT_TIMEOUT}` on the catch-all route to the frontend cluster, shorter than "
                   f"`POST {CHECKOUT_PATH}` takes, so Envoy abandons every checkout with a 504 "
                   "(upstream request timeout, response flag UT)",
            detail_keywords=("timeout", SHORT_TIMEOUT, "route", "504", "upstream request timeout", "checkout",
                             CONFIGMAP, "envoy"),
            affected=(deploy("frontend"), deploy("checkout")), impact_keywords=(*IMPACT, "504", "checkout"),
            description="A route timeout shorter than the checkout flow on frontend-proxy makes every order "
                        "fail with a gateway timeout while browsing keeps working."),
        mitigation=MitigationSpec(must_fix=(error_free(PROXY, CHECKOUT_PATH),), window_s=WINDOW_S),
        gold=(Action(op="patch", kind="ConfigMap", namespace=NAMESPACE, name=CONFIGMAP, patch_type="merge",
                     patch={"data": {TEMPLATE_KEY: image_template()}}),
              restart(PROXY)),
        settle_s=SETTLE_S,
    )


__all__ = ["CHECKOUT_PATH", "CONFIGMAP", "SHORT_TIMEOUT", "edge_route_timeout", "template_with_timeout"]
