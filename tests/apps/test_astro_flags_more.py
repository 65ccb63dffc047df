"""The Astronomy Shop's remaining failure flags, flipped in the `flagd-config` ConfigMap and
rolled out with a flagd restart (the chart's init container copies the ConfigMap at start):
`loadGeneratorFloodHomepage` (the locustfile's flood task) and `failedReadinessProbe` (cart's
gRPC health check). Each symptom shows, flipping back recovers, flagd down means code defaults;
checkout's OpenTelemetry hook puts `feature_flag.evaluation` events on its spans (Jaeger API).
One shared twin: the tests run in order."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from sregym.apps import deploy_app
from sregym.apps.astronomy_shop.loadgen import FLOOD_FLAG
from sregym.twin import Twin
from sregym.twin.api.jaeger import create_jaeger_app
from sregym.twin.api.kubeconfig import make_tokens, token_for
from sregym.twin.telemetry.promql import Engine
from support.astro_twin import flip_flag

pytestmark = pytest.mark.xdist_group("astro_flags_more")

NS = "astronomy-shop"
HOME = ('sum(rate(traces_span_metrics_calls_total{service_name="frontend-proxy",span_name="HTTP GET /",'
        'span_kind="SPAN_KIND_SERVER"}[30s]))')


@pytest.fixture(scope="module")
def shop() -> Twin:
    twin = Twin(seed=11)
    deploy_app(twin, NS)
    twin.advance(60)
    return twin


def _restart(twin: Twin, deployment: str) -> None:  # kubectl rollout restart
    twin.patch("deployments", NS, deployment, {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": str(twin.clock.now)}}}}})


def _value(twin: Twin, expr: str) -> float:
    result: Any = Engine(twin.services.tsdb).instant(expr, int(twin.clock.now * 1000))
    return sum(sample.value for sample in result.value)


def _cart_pod(twin: Twin) -> dict[str, Any]:
    pods = [p for p in twin.list("pods", NS) if p["metadata"]["name"].startswith("cart-")
            and not p["metadata"].get("deletionTimestamp")]
    return max(pods, key=lambda p: p["metadata"]["creationTimestamp"])


def _ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


def _cart_endpoints(twin: Twin) -> list[Any]:
    subsets = twin.get("endpoints", NS, "cart").get("subsets") or []
    return [a for s in subsets for a in s.get("addresses") or []]


def _jaeger(twin: Twin) -> tuple[TestClient, dict[str, str]]:
    tokens = make_tokens()
    return TestClient(create_jaeger_app(twin, tokens=tokens)), {"Authorization": f"Bearer {token_for(tokens, 'admin')}"}


def _event_logs(twin: Twin, service: str, operation: str) -> list[list[dict[str, Any]]]:
    client, auth = _jaeger(twin)
    params = {"service": service, "operation": operation, "lookback": "1h", "limit": "20"}
    traces = client.get("/api/traces", params=params, headers=auth).json()["data"]
    return [span["logs"] for t in traces for span in t["spans"] if span["operationName"] == operation
            and t["processes"][span["processID"]]["serviceName"] == service]


def test_flood_homepage_multiplies_home_requests_and_recovers(shop: Twin) -> None:
    baseline = _value(shop, HOME)
    assert 0 < baseline < 2
    flip_flag(shop, FLOOD_FLAG, "on")
    shop.advance(60)
    flooded = _value(shop, HOME)
    # 100 GET / per flood_home pick of the 5 HTTP users (the browser users, the other 5, open / too)
    assert flooded > 5 * baseline + 5
    flip_flag(shop, FLOOD_FLAG, "off")
    shop.advance(60)
    assert _value(shop, HOME) < 2


def test_flood_falls_back_to_zero_when_flagd_is_down(shop: Twin) -> None:
    flip_flag(shop, FLOOD_FLAG, "on")
    shop.advance(45)
    assert _value(shop, HOME) > 10
    shop.patch("deployments", NS, "flagd", {"spec": {"replicas": 0}})
    shop.advance(60)
    assert _value(shop, HOME) < 2  # get_integer_value's default 0
    flip_flag(shop, FLOOD_FLAG, "off")
    shop.patch("deployments", NS, "flagd", {"spec": {"replicas": 1}})
    shop.advance(45)
    assert _value(shop, HOME) < 2


def test_failed_readiness_probe_without_a_probe_keeps_cart_ready(shop: Twin) -> None:
    """Chart 0.40.4 declares no probe on cart: the flag changes only the health answer."""
    flip_flag(shop, "failedReadinessProbe", "on")
    shop.advance(60)
    pod = _cart_pod(shop)
    assert "readinessProbe" not in pod["spec"]["containers"][0]
    assert _ready(pod) and _cart_endpoints(shop)
    flip_flag(shop, "failedReadinessProbe", "off")


def test_failed_readiness_probe_with_a_grpc_probe_takes_cart_out(shop: Twin) -> None:
    """With a gRPC readiness probe on cart (as an SRE might add), the flag makes it NotReady."""
    probe = {"grpc": {"port": 8080}, "periodSeconds": 5, "failureThreshold": 3}
    shop.patch("deployments", NS, "cart", {"spec": {"template": {"spec": {"containers": [
        {"name": "cart", "readinessProbe": probe}]}}}})
    shop.advance(60)
    assert _ready(_cart_pod(shop))
    flip_flag(shop, "failedReadinessProbe", "on")
    shop.advance(60)
    pod = _cart_pod(shop)
    assert pod["spec"]["containers"][0]["readinessProbe"]["grpc"]["port"] == 8080
    assert not _ready(pod)
    assert not _cart_endpoints(shop)
    events = [e for e in shop.list("events", NS) if e.get("involvedObject", {}).get("name") == pod["metadata"]["name"]]
    assert any(e.get("reason") == "Unhealthy" and
               e.get("message") == 'Readiness probe failed: service unhealthy (responded with "NOT_SERVING")'
               for e in events)
    errors = ('sum(rate(traces_span_metrics_calls_total{service_name="frontend",span_name="HTTP GET /api/cart",'
              'status_code="STATUS_CODE_ERROR"}[30s]))')
    assert _value(shop, errors) > 0
    flip_flag(shop, "failedReadinessProbe", "off")
    shop.advance(60)
    assert _ready(_cart_pod(shop)) and _cart_endpoints(shop)


def test_checkout_spans_carry_the_otel_hook_flag_events(shop: Twin) -> None:
    """Last: checkout exemplars are rare, the earlier tests ran the twin long enough."""
    logs = _event_logs(shop, "checkout", "oteldemo.CheckoutService/PlaceOrder")
    expected = [
        {"event": "feature_flag.evaluation", "feature_flag.key": "paymentUnreachable",
         "feature_flag.provider.name": "flagd", "feature_flag.result.variant": "off"},
        {"event": "feature_flag.evaluation", "feature_flag.key": "kafkaQueueProblems",
         "feature_flag.provider.name": "flagd", "feature_flag.result.variant": "off"}]
    seen = [[{f["key"]: f["value"] for f in log["fields"]} for log in entry] for entry in logs]
    assert seen and seen.count(expected) >= len(seen) // 2
    failed = [{"event": "exception", "exception.type": "*fmt.wrapError",
               "exception.message": "error code: PROVIDER_NOT_READY: connection not made",
               "feature_flag.key": flag, "feature_flag.provider.name": "flagd"}
              for flag in ("paymentUnreachable", "kafkaQueueProblems")]
    assert all(entry in (expected, failed, []) for entry in seen)  # while flagd was down: the error path
    ad = _event_logs(shop, "ad", "oteldemo.AdService/GetAds")
    assert ad and not any(ad)  # ad registers no traces hook
