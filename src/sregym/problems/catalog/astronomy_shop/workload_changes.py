"""Astronomy Shop problems from a bad change to one workload's pod template: an env var pointed
at a port nothing listens on (ITBench scenario 16), an image tag that was never pushed (ITBench
scenario 20). Both are ITBench-AA tasks; the Deployment is the root cause, as ITBench names it.
"""

from __future__ import annotations

from sregym.apps.astronomy_shop import NAMESPACE, PORTS
from sregym.problems.builders import keep, patch_container, service_serves
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    chart_object,
    deploy,
    error_free,
    mitigation,
)
from sregym.problems.model import CheckSpec, FaultSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

SUITES = (SUITE, "itbench-aa")


def _container(deployment: str) -> dict:
    return chart_object("Deployment", deployment)["spec"]["template"]["spec"]["containers"][0]


def _env_value(deployment: str, name: str) -> str:
    return next(e["value"] for e in _container(deployment).get("env") or [] if e["name"] == name)


def _env_patch(deployment: str, name: str, value: str) -> dict:
    return {"spec": {"template": {"spec": {"containers": [
        {"name": _container(deployment)["name"], "env": [{"name": name, "value": value}]}]}}}}


@problem
def shipping_quote_address() -> Problem:
    """ITBench-AA task (ITBench scenario 16): shipping's `QUOTE_ADDR` env var is changed from
    `http://quote:8080` to `quote:0000`, and the Deployment rolls out with it.

    Symptoms: every shipping quote fails (shipping's calls to quote time out), so checkout's
    PlaceOrder and the frontend's shipping quotes fail; quote itself is healthy and idle. All pods
    are Running and Ready. Fix: restore `QUOTE_ADDR` (or point it at quote's real port).
    """
    good = _env_value("shipping", "QUOTE_ADDR")
    return Problem(
        id="astronomy-shop/shipping-quote-address-v1",
        title="checkouts fail while every pod is running",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("config",), difficulty="medium", suites=SUITES, sources=("itbench:16", "itbench-aa")),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [{
            "kind": "Deployment", "namespace": NAMESPACE, "name": "shipping",
            "patch": _env_patch("shipping", "QUOTE_ADDR", "quote:0000")}]}),),
        ground_truth=GroundTruth(
            root_causes=(deploy("shipping"),), mechanism="env_shadowing",
            detail=f"shipping's QUOTE_ADDR environment variable was changed from {good} to quote:0000",
            detail_keywords=("QUOTE_ADDR", "quote:0000", "environment variable", "env var"),
            affected=(deploy("checkout"), deploy("frontend")), impact_keywords=IMPACT,
            description="shipping resolves quote's address from QUOTE_ADDR; pointed at port 0000 every quote "
                        "request fails, and with it shipping quotes and checkouts."),
        mitigation=mitigation(error_free("shipping"), error_free("checkout", "PlaceOrder")),
        gold=(patch_container(NAMESPACE, "shipping", "shipping", {"env": [{"name": "QUOTE_ADDR", "value": good}]}),),
        settle_s=SETTLE_S,
    )


@problem
def product_catalog_missing_image() -> Problem:
    """ITBench-AA task (ITBench scenario 20): the product-catalog Deployment is moved to an image
    tag that was never pushed.

    Symptoms: the new pod sits in `ErrImagePull`/`ImagePullBackOff`, the rollout never completes
    (the old pod keeps serving while the Deployment waits). Fix: roll back, or set an image that
    exists; the rollout must complete.
    """
    good = _container("product-catalog")["image"]
    bad = good.rsplit(":", 1)[0] + ":2.2.0-product-catalogue"
    return Problem(
        id="astronomy-shop/product-catalog-missing-image-v1",
        title="product-catalog rollout does not finish",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app", "k8s"), difficulty="easy", suites=SUITES, sources=("itbench:20", "itbench:56", "sregym:incorrect_image", "itbench-aa")),
        faults=(FaultSpec(fault="set_image", params={"namespace": NAMESPACE, "name": "product-catalog",
                                                      "image": bad}),),
        ground_truth=GroundTruth(
            root_causes=(deploy("product-catalog"),), mechanism="bad_image",
            detail=f"product-catalog Deployment image changed to {bad}, a tag the registry does not have",
            detail_keywords=(bad, "2.2.0-product-catalogue", "ImagePullBackOff"),
            affected=(), impact_keywords=IMPACT,
            description="A release pointed product-catalog at a tag that was never pushed: the new pod cannot "
                        "pull its image and the rollout is stuck."),
        mitigation=mitigation(CheckSpec(check="workloads_ready", params={"names": ["product-catalog"]}),
                              must_keep=keep(service_serves("product-catalog", PORTS["product-catalog"],
                                                            "product-catalog"))),
        gold=(patch_container(NAMESPACE, "product-catalog", "product-catalog", {"image": good}),),
        settle_s=SETTLE_S,
    )
