"""Astronomy Shop (the OpenTelemetry demo) deployed in-process: the chart's objects, every
workload Ready, requests through frontend-proxy with the frontend's real bodies, a checkout trace
across the services, span metrics for every service in PromQL."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sregym.apps import get_app, list_apps
from sregym.twin import Twin
from sregym.twin.telemetry.promql import Engine
from support.astro_twin import warm_astro_twin

NS = "astronomy-shop"
PROXY = f"http://frontend-proxy.{NS}:8080"
SERVED = ("ad", "cart", "checkout", "currency", "email", "flagd", "frontend", "frontend-proxy", "llm", "payment",
          "product-catalog", "product-reviews", "quote", "recommendation", "shipping")


@pytest.fixture(scope="module")
def shop() -> Twin:
    return warm_astro_twin(seed=42, advance_s=120)


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


def test_the_charts_load_generator_is_the_one_source_of_load(shop: Twin) -> None:
    deployment = next(o for o in get_app("astronomy-shop").objects()
                      if o["kind"] == "Deployment" and o["metadata"]["name"] == "load-generator")
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["LOCUST_USERS"] == "10" and env["LOCUST_HOST"] == "http://frontend-proxy:8080"
    assert all(name.startswith(f"{NS}/load-generator-") for name in shop.services.dataplane.workloads)
    assert shop.services.dataplane.workloads and not shop.list("deployments", "sregym-system")
    assert shop.services.dataplane.http_request(None, f"http://load-generator.{NS}:8089/").status == 200  # web UI


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


def test_span_metrics_for_every_service_in_promql(shop: Twin) -> None:
    query = "sum by (service_name) (rate(traces_span_metrics_calls_total[1m]))"
    result = Engine(shop.services.tsdb).instant(query, int(shop.clock.now * 1000))
    services = {sample.labels["service_name"] for sample in result.value if sample.value > 0}  # type: ignore[union-attr]
    assert set(SERVED) <= services


def _server_calls(shop: Twin) -> dict[tuple[str, str], float]:
    calls: dict[tuple[str, str], float] = {}
    for name, labels, value, _ in shop.services.dataplane.span_metrics():
        if name == "traces_span_metrics_calls_total" and labels["span_kind"] == "SPAN_KIND_SERVER":
            key = (labels["service_name"], labels["span_name"])
            calls[key] = calls.get(key, 0.0) + value
    return calls


def test_get_and_post_on_one_path_are_two_operations(shop: Twin) -> None:
    calls = _server_calls(shop)
    posts, gets = calls[("frontend", "HTTP POST /api/cart")], calls[("frontend", "HTTP GET /api/cart")]
    # One AddItem per POST (the callee counts a tick later, so the windows differ by a burst).
    assert posts == pytest.approx(calls[("cart", "oteldemo.CartService/AddItem")], rel=0.25)
    # the HTTP flows post to the cart (weight 6) twice as often as they view it (3), but every page a
    # browser user opens fetches the cart too (CartProvider), so views outnumber posts
    assert gets > posts > 0


def test_checkout_trace_crosses_the_services(shop: Twin) -> None:
    store = shop.services.traces
    # The last order placed (the first ones may meet services still starting).
    tid = [s.trace_id for s in store.spans() if s.operation == "oteldemo.CheckoutService/PlaceOrder"][-1]
    spans = store.trace(tid)
    by_id = {s.span_id: s for s in spans}
    edges = {(by_id[s.parent_span_id].service, s.service) for s in spans
             if s.kind == "server" and s.parent_span_id in by_id}
    assert {("frontend-proxy", "frontend"), ("frontend", "checkout"), ("checkout", "cart"),
            ("checkout", "product-catalog"), ("checkout", "currency"), ("checkout", "shipping"), ("shipping", "quote"),
            ("checkout", "payment"), ("checkout", "email")} <= edges
    names = {s.operation for s in spans if s.service == "checkout" and s.kind == "client"}
    assert {"HTTP POST /get-quote", "HTTP POST /ship-order", "oteldemo.PaymentService/Charge"} <= names
    assert not any(s.error for s in spans)


def _get(shop: Twin, path: str, method: str = "GET", body: object = None, timeout_ms: float = 10_000.0) -> Any:
    headers = {"Content-Type": "application/json"} if body is not None else None
    text = body if isinstance(body, str) or body is None else json.dumps(body)
    return shop.services.dataplane.http_request(None, PROXY + path, method=method, body=text, headers=headers,
                                                timeout_ms=timeout_ms)


def test_product_list_body(shop: Twin) -> None:
    reply = _get(shop, "/api/products")
    assert reply.status == 200 and reply.headers["content-type"] == "application/json; charset=utf-8"
    assert reply.headers["server"] == "envoy"
    products = json.loads(reply.body)
    assert [p["id"] for p in products] == sorted(p["id"] for p in products) and len(products) == 10
    explorascope = next(p for p in products if p["id"] == "OLJCESPC7Z")
    assert list(explorascope) == ["id", "name", "description", "picture", "priceUsd", "categories"]
    assert explorascope["name"] == "National Park Foundation Explorascope"
    assert explorascope["priceUsd"] == {"currencyCode": "USD", "units": 101, "nanos": 960000000}
    assert explorascope["categories"] == ["telescopes"] and explorascope["picture"] == "NationalParkFoundationExplorascope.jpg"
    assert reply.body.startswith('[{"id":"0PUK6V6EV0","name":"Solar System Color Imager"')  # compact, as res.json


# (method, path, body, status, what the body holds)
ROUTES = [
    ("GET", "/api/products/OLJCESPC7Z?currencyCode=EUR", None, 200,
     lambda b: json.loads(b)["priceUsd"] == {"currencyCode": "EUR", "units": 90, "nanos": 190181335}),
    ("GET", "/api/products/NOTAPRODUCT", None, 500, lambda b: b == "Internal Server Error"),
    ("GET", "/api/data?contextKeys=telescopes", None, 200, lambda b: json.loads(b) == [
        {"redirectUrl": "/product/66VCHSJNUP", "text": "Starsense Explorer Refractor Telescope for sale. 20% off."}]),
    ("GET", "/api/data?contextKeys=books", None, 200, lambda b: len(json.loads(b)) == 2),  # random ads
    ("GET", "/api/currency", None, 200, lambda b: json.loads(b)[:3] == ["ZAR", "ISK", "ILS"] and len(json.loads(b)) == 33),
    ("GET", "/api/recommendations?productIds=OLJCESPC7Z", None, 200,
     lambda b: len(json.loads(b)) == 4 and "OLJCESPC7Z" not in {p["id"] for p in json.loads(b)}),
    ("GET", "/api/product-reviews/OLJCESPC7Z", None, 200, lambda b: len(json.loads(b)) == 5 and json.loads(b)[0] == {
        "username": "stargazer_mike", "description": "Great entry-level telescope! Easy to set up and provides clear "
        "views of the moon and brighter planets. Highly recommend for new astronomers.", "score": "4.5"}),
    ("GET", "/api/product-reviews-avg-score/OLJCESPC7Z", None, 200, lambda b: b == '"3.8"'),
    ("GET", "/api/product-reviews-avg-score/NOTAPRODUCT", None, 500, lambda b: b == "Internal Server Error"),
    ("GET", "/api/shipping", None, 500, lambda b: b == "Internal Server Error"),  # JSON.parse('') throws
    ("GET", "/api/checkout", None, 405, lambda b: b == ""),
    ("POST", "/api/cart", "{not json", 400, lambda b: b == "Invalid JSON"),
    ("POST", "/api/currency", None, 504, lambda b: b == "upstream request timeout"),  # the handler never answers
]


@pytest.mark.parametrize(("method", "path", "body", "status", "check"), ROUTES, ids=[f"{r[0]} {r[1]}" for r in ROUTES])
def test_frontend_api_routes(shop: Twin, method: str, path: str, body: object, status: int, check: Any) -> None:
    reply = _get(shop, path, method, body, timeout_ms=20_000.0)
    assert (reply.status, reply.error) == (status, None) and check(reply.body), reply.body[:200]


def test_cart_and_checkout_round_trip(shop: Twin) -> None:
    added = _get(shop, "/api/cart", "POST", {"userId": "u-1", "item": {"productId": "L9ECAV7KIM", "quantity": 2}})
    assert json.loads(added.body) == {"userId": "u-1", "items": [{"productId": "L9ECAV7KIM", "quantity": 2}]}
    cart = json.loads(_get(shop, "/api/cart?sessionId=u-1").body)
    assert cart["items"][0]["quantity"] == 2 and cart["items"][0]["product"]["name"] == "Lens Cleaning Kit"
    address = {"streetAddress": "1600 Amphitheatre Parkway", "city": "Mountain View", "state": "CA", "country": "US",
               "zipCode": "94043"}
    card = {"creditCardNumber": "4432-8015-6152-0454", "creditCardExpirationMonth": 1,
            "creditCardExpirationYear": 2039, "creditCardCvv": 672}
    order = json.loads(_get(shop, "/api/checkout", "POST", {"userId": "u-1", "userCurrency": "USD", "address": address,
                                                            "email": "someone@example.com", "creditCard": card}).body)
    assert list(order) == ["orderId", "shippingTrackingId", "shippingCost", "shippingAddress", "items"]
    assert order["shippingAddress"]["zipCode"] == 94043 and order["items"][0]["item"]["productId"] == "L9ECAV7KIM"
    assert order["shippingCost"]["units"] == 17  # quote: 2 items x 8.99
    assert json.loads(_get(shop, "/api/cart?sessionId=u-1").body) == {"userId": "", "items": []}  # emptied
    expired = {**card, "creditCardExpirationYear": 2020}
    _get(shop, "/api/cart", "POST", {"userId": "u-1", "item": {"productId": "L9ECAV7KIM", "quantity": 1}})
    assert _get(shop, "/api/checkout", "POST", {"userId": "u-1", "userCurrency": "USD", "address": address,
                                                "creditCard": expired}).status == 500
