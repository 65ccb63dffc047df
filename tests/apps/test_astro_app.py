"""Astronomy Shop (the OpenTelemetry demo) deployed in-process: the chart's objects, every
workload Ready, requests through frontend-proxy, span metrics for every service."""

from __future__ import annotations

import json

import pytest

from sregym.apps import deploy_app, get_app, list_apps
from sregym.twin import Twin

NS = "astronomy-shop"
SERVED = ("ad", "cart", "checkout", "currency", "email", "flagd", "frontend", "frontend-proxy", "llm", "payment",
          "product-catalog", "product-reviews", "quote", "recommendation", "shipping")


@pytest.fixture(scope="module")
def shop() -> Twin:
    twin = Twin(seed=42)
    deploy_app(twin, "astronomy-shop")
    twin.advance(120)
    return twin


def test_registered_with_the_charts_objects() -> None:
    spec = get_app("astronomy-shop")
    assert "astronomy-shop" in list_apps()
    objs = {(o["kind"], o["metadata"]["name"]): o for o in spec.objects()}
    assert ("ConfigMap", "flagd-config") in objs and ("DaemonSet", "otel-collector-agent") in objs
    flags = json.loads(objs[("ConfigMap", "flagd-config")]["data"]["demo.flagd.json"])["flags"]
    assert {"adFailure", "cartFailure", "paymentFailure", "productCatalogFailure"} <= set(flags)
    shipping = objs[("Deployment", "shipping")]
    container = shipping["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "ghcr.io/open-telemetry/demo:2.2.0-shipping"
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["QUOTE_ADDR"] == "http://quote:8080" and env["OTEL_COLLECTOR_NAME"] == "otel-collector"
    assert shipping["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] == "shipping"
    assert objs[("Service", "frontend-proxy")]["spec"]["ports"] == [
        {"port": 8080, "name": "tcp-service", "targetPort": 8080}]


def test_every_workload_ready(shop: Twin) -> None:
    pods = shop.list("pods", NS)
    collectors = [p for p in pods if p["metadata"]["name"].startswith("otel-collector-agent-")]
    assert collectors and len(pods) - len(collectors) == len(get_app("astronomy-shop").baseline)
    for pod in pods:
        statuses = pod["status"].get("containerStatuses") or []
        assert statuses and all(s["ready"] for s in statuses), pod["metadata"]["name"]


def test_products_through_frontend_proxy(shop: Twin) -> None:
    reply = shop.services.dataplane.http_request(None, f"http://frontend-proxy.{NS}:8080/api/products")
    assert reply.status == 200
    stats = shop.services.dataplane.entry_stats(60)
    assert stats.rps > 0 and stats.success_ratio == 1.0


def test_span_metrics_for_every_service(shop: Twin) -> None:
    services = {labels["service_name"] for name, labels, value, _ in shop.services.dataplane.span_metrics()
                if name == "traces_span_metrics_calls_total" and value > 0}
    assert set(SERVED) <= services
