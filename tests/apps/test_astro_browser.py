"""The Astronomy Shop's browser traffic and what rides on it: the load generator's Playwright
user (live because the chart sets LOCUST_BROWSER_TRAFFIC_ENABLED) fetches product images through
frontend-proxy; `imageSlowLoad` flipped in the flagd ConfigMap (and the flagd restart the chart
needs) delays them by Envoy's header fault, capped by max_active_faults; the AI assistant route
answers as the llm mock does, inaccurately for L9ECAV7KIM under `llmInaccurateResponse`.
One shared twin: the tests run in order."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from sregym.apps import deploy_app
from sregym.apps.astronomy_shop.ai_assistant import summaries
from sregym.twin import Twin
from sregym.twin.api.jaeger import create_jaeger_app
from sregym.twin.api.kubeconfig import make_tokens, token_for
from sregym.twin.dataplane.browser import split_users, user_classes
from sregym.twin.dataplane.pages import PageRequest, pages_for
from sregym.twin.telemetry.promql import Engine
from support.astro_twin import flip_flag

pytestmark = pytest.mark.xdist_group("astro_browser")

NS = "astronomy-shop"
IMAGES = 'span_name="HTTP GET /images/products/{picture}"'
PROXY = 'service_name="frontend-proxy",span_kind="SPAN_KIND_SERVER"'


@pytest.fixture(scope="module")
def shop() -> Twin:
    twin = Twin(seed=11)
    deploy_app(twin, NS)
    twin.advance(60)
    return twin




def _value(twin: Twin, expr: str) -> float:
    result: Any = Engine(twin.services.tsdb).instant(expr, int(twin.clock.now * 1000))
    return sum(sample.value for sample in result.value)


def _mean_ms(twin: Twin, span: str, window: str = "30s") -> float:
    sel = f"{{{PROXY},{span}}}"
    return _value(twin, f"sum(rate(traces_span_metrics_duration_milliseconds_sum{sel}[{window}])) / "
                        f"sum(rate(traces_span_metrics_duration_milliseconds_count{sel}[{window}]))")


def _rate(twin: Twin, span: str) -> float:
    return _value(twin, f"sum(rate(traces_span_metrics_calls_total{{{PROXY},{span}}}[30s]))")


def _ask(twin: Twin, product: str, question: str) -> tuple[int, str]:
    page = pages_for("otel-demo-frontend-proxy")(PageRequest(  # type: ignore[misc]
        "POST", f"/api/product-ask-ai-assistant/{product}", headers={"Content-Type": "application/json"},
        body=json.dumps({"question": question}), twin=twin))
    assert page is not None
    return page.status, page.body


def test_the_chart_enables_browser_users_who_fetch_product_images(shop: Twin) -> None:
    pod = next(p for p in shop.list("pods", NS) if p["metadata"]["name"].startswith("load-generator-"))
    env = {e["name"]: e.get("value", "") for e in pod["spec"]["containers"][0]["env"]}
    assert env["LOCUST_BROWSER_TRAFFIC_ENABLED"] == "true"
    from sregym.apps.astronomy_shop import loadgen
    text = loadgen.locustfile(loadgen.workload("http://frontend-proxy:8080"))
    weight, browser = user_classes(text, env)
    assert browser is not None and browser.user_class == "WebsiteBrowserUser"
    assert [t.name for t in browser.tasks] == ["open_cart_page_and_change_currency", "add_product_to_cart"]
    assert user_classes(text, {**env, "LOCUST_BROWSER_TRAFFIC_ENABLED": "false"})[1] is None
    assert split_users(10, (weight, browser.weight)) == (5, 5)
    assert _rate(shop, IMAGES) > 5.0  # ten cards on the home page, four recommendations elsewhere
    assert _value(shop, 'sum(rate(traces_span_metrics_calls_total{service_name="image-provider"}[30s]))') > 5.0
    assert _rate(shop, 'span_name="HTTP POST /flagservice/flagd.evaluation.v1.Service/ResolveAll"') > 0.1
    assert _mean_ms(shop, IMAGES) < 100.0


def test_image_slow_load_delays_image_fetches_and_recovers(shop: Twin) -> None:
    before, api_before = _mean_ms(shop, IMAGES), _mean_ms(shop, 'span_name="HTTP GET /api/products"')
    flip_flag(shop, "imageSlowLoad", "10sec")
    shop.advance(60)
    rate = _rate(shop, IMAGES)
    # Little's law: rate × 10 s requests would wait at once; Envoy delays at most 100 (max_active_faults)
    expected = 10_000.0 * min(1.0, 100.0 / (rate * 10.0))
    rise = _mean_ms(shop, IMAGES) - before
    assert expected * 0.8 < rise < expected * 1.2
    assert _mean_ms(shop, 'span_name="HTTP GET /api/products"') < api_before + 50.0  # only the header's requests
    flip_flag(shop, "imageSlowLoad", "off")
    shop.advance(60)
    assert _mean_ms(shop, IMAGES) < before + 50.0


def test_ai_assistant_answers_like_the_llm_mock(shop: Twin) -> None:
    status, body = _ask(shop, "OLJCESPC7Z", "Can you summarize the product reviews?")
    assert status == 200 and json.loads(body) == {"response": summaries(False)["OLJCESPC7Z"]}
    assert json.loads(_ask(shop, "L9ECAV7KIM", "Can you summarize the product reviews?")[1])["response"] == \
        summaries(False)["L9ECAV7KIM"]
    assert json.loads(_ask(shop, "L9ECAV7KIM", "What age(s) is this recommended for?")[1]) == \
        {"response": "This product is recommended for ages 7 and above."}
    assert json.loads(_ask(shop, "L9ECAV7KIM", "Is it blue?")[1]) == \
        {"response": "Sorry, I'm not able to answer that question."}
    assert _ask(shop, "L9ECAV7KIM", "")[0] == 200


def test_llm_inaccurate_response_changes_the_answer_for_one_product(shop: Twin) -> None:
    flip_flag(shop, "llmInaccurateResponse", "on")
    shop.advance(20)
    inaccurate = json.loads(_ask(shop, "L9ECAV7KIM", "Can you summarize the product reviews?")[1])["response"]
    assert inaccurate == summaries(True)["L9ECAV7KIM"] and "damaged their equipment" in inaccurate
    assert json.loads(_ask(shop, "OLJCESPC7Z", "Can you summarize the product reviews?")[1])["response"] == \
        summaries(False)["OLJCESPC7Z"]
    flip_flag(shop, "llmInaccurateResponse", "off")
    shop.advance(20)
    assert json.loads(_ask(shop, "L9ECAV7KIM", "Can you summarize the product reviews?")[1])["response"] == \
        summaries(False)["L9ECAV7KIM"]


def _event_logs(twin: Twin, service: str, operation: str, since_us: int = 0) -> list[list[dict[str, Any]]]:
    tokens = make_tokens()
    client = TestClient(create_jaeger_app(twin, tokens=tokens))
    params = {"service": service, "operation": operation, "lookback": "1h", "limit": "200"}
    data = client.get("/api/traces", params=params,
                      headers={"Authorization": f"Bearer {token_for(tokens, 'admin')}"}).json()["data"]
    return [[{f["key"]: f["value"] for f in log["fields"]} for log in span["logs"]] for t in data
            for span in t["spans"] if span["operationName"] == operation and span["startTime"] >= since_us
            and t["processes"][span["processID"]]["serviceName"] == service]


def test_product_catalog_hook_adds_events_for_the_one_product_it_checks(shop: Twin) -> None:
    seen = _event_logs(shop, "product-catalog", "oteldemo.ProductCatalogService/GetProduct")
    event = [{"event": "feature_flag.evaluation", "feature_flag.key": "productCatalogFailure",
              "feature_flag.provider.name": "flagd", "feature_flag.result.variant": "off"}]
    assert seen and all(entry in (event, []) for entry in seen)
    assert 0 < seen.count(event) < len(seen) / 2  # only GetProduct("OLJCESPC7Z") evaluates the flag
    cart = _event_logs(shop, "cart", "oteldemo.CartService/EmptyCart")  # .NET TraceEnricherHook
    assert cart and all(entry == [{
        "event": "feature_flag.evaluation", "feature_flag.key": "cartFailure",
        "feature_flag.provider.name": "flagd Provider", "feature_flag.result.reason": "static",
        "feature_flag.result.variant": "off", "feature_flag.result.value": False}] for entry in cart)


def test_flagd_down_keeps_cart_serving_and_the_hooks_record_exceptions(shop: Twin) -> None:
    probe = {"grpc": {"port": 8080}, "periodSeconds": 5, "failureThreshold": 3}
    shop.patch("deployments", NS, "cart", {"spec": {"template": {"spec": {"containers": [
        {"name": "cart", "readinessProbe": probe}]}}}})
    flip_flag(shop, "failedReadinessProbe", "on")
    shop.advance(60)
    assert not _ready(_cart_pod(shop))
    down_at = int(shop.clock.now * 1_000_000)
    shop.patch("deployments", NS, "flagd", {"spec": {"replicas": 0}})
    shop.advance(60)
    assert _ready(_cart_pod(shop))  # HealthCheckService's GetBooleanValueAsync default: false
    exception = {"event": "exception", "exception.type": "*fmt.wrapError",
                 "exception.message": "error code: PROVIDER_NOT_READY: connection not made",
                 "feature_flag.key": "paymentUnreachable", "feature_flag.provider.name": "flagd"}
    late = [e for e in _event_logs(shop, "checkout", "oteldemo.CheckoutService/PlaceOrder", down_at + 15_000_000) if e]
    assert late and all(entry[0] == exception and entry[1]["feature_flag.key"] == "kafkaQueueProblems"
                        for entry in late)
    flip_flag(shop, "failedReadinessProbe", "off")
    shop.patch("deployments", NS, "flagd", {"spec": {"replicas": 1}})
    shop.advance(30)


def _ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


def _cart_pod(twin: Twin) -> dict[str, Any]:
    pods = [p for p in twin.list("pods", NS) if p["metadata"]["name"].startswith("cart-")
            and not p["metadata"].get("deletionTimestamp")]
    return max(pods, key=lambda p: p["metadata"]["creationTimestamp"])
