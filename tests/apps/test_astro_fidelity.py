"""Astronomy Shop details an SRE meets on the real demo (issue #17's remaining items): Next's 404
page for paths the frontend does not have, shipping's awc client on a `QUOTE_ADDR` with port 0 or
without a scheme, `llmRateLimitError` answered with an apology (200) instead of an error, and the
OTLP records' trace context as Loki structured metadata (`| trace_id="..."`)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from sregym.apps.astronomy_shop.ai_assistant import RATE_LIMITED
from sregym.twin import Twin
from sregym.twin.api.kubeconfig import make_tokens, token_for
from sregym.twin.api.loki import create_loki_app
from sregym.twin.telemetry.alerts import rule_manager
from sregym.twin.telemetry.otlp_logs import otlp_logs
from sregym.twin.telemetry.promql import Engine
from support.astro_twin import build_astro_twin, flip_flag

NS = "astronomy-shop"
TOKENS = make_tokens()
ADMIN = {"Authorization": f"Bearer {token_for(TOKENS, 'admin')}"}


def _pod(twin: Twin, prefix: str) -> dict[str, Any]:
    return next(p for p in twin.store.scan("Pod", NS) if p["metadata"]["name"].startswith(prefix + "-")
                and p["status"].get("phase") == "Running")


def _get(twin: Twin, target: str, path: str, **kwargs: Any) -> Any:
    ip = _pod(twin, target)["status"]["podIP"]
    return twin.services.dataplane.http_request(None, f"http://{ip}:8080{path}", **kwargs)


@pytest.fixture(scope="module")
def shop() -> Twin:
    return build_astro_twin(5, 90.0)


# ------------------------------------------------------------------ item 7: the frontend's router
@pytest.mark.parametrize("path", ["/healthz", "/api/nope", "/product", "/_next/static/chunks/x.js", "/cart/x/y/z"])
def test_unknown_paths_get_nexts_404_page(shop: Twin, path: str) -> None:
    for target in ("frontend", "frontend-proxy"):
        res = _get(shop, target, path)
        assert res.error is None and res.status == 404, (target, path, res.status)
        assert "<title>404: This page could not be found</title>" in res.body
        headers = {k.lower(): v for k, v in res.headers.items()}
        assert headers["x-powered-by"] == "Next.js" and headers["content-type"] == "text/html; charset=utf-8"
        assert (headers.get("server") == "envoy") == (target == "frontend-proxy")


@pytest.mark.parametrize(("path", "title"), [("/", "Home"), ("/cart", "Cart"), ("/cart/checkout/8c4a-11f0", "Checkout"),
                                             ("/product/OLJCESPC7Z", "Product"), ("/product/NOSUCHPRODUCT", "Product")])
def test_the_demos_pages_render(shop: Twin, path: str, title: str) -> None:
    res = _get(shop, "frontend-proxy", path)
    assert res.error is None and res.status == 200
    assert f"<title>Otel Demo - {title}</title>" in res.body
    assert "NEXT_PUBLIC_OTEL_SERVICE_NAME: 'frontend-web'" in res.body
    assert "IS_SYNTHETIC_REQUEST: 'false'" in res.body


def test_load_generator_baggage_marks_the_document_synthetic(shop: Twin) -> None:
    res = _get(shop, "frontend", "/", headers={"baggage": "session.id=abc,synthetic_request=true"})
    assert res.status == 200 and "IS_SYNTHETIC_REQUEST: 'true'" in res.body
    assert "NEXT_PUBLIC_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://otel-collector:4318/v1/traces'" in res.body


def test_api_routes_and_public_files_still_answer(shop: Twin) -> None:
    products = _get(shop, "frontend-proxy", "/api/products")
    assert products.status == 200 and json.loads(products.body)[0]["id"]
    assert _get(shop, "frontend", "/favicon.ico").status == 200
    assert _get(shop, "frontend", "/icons/Cart.svg").status == 200
    assert _get(shop, "frontend", "/icons/Nope.svg").status == 404
    assert _get(shop, "frontend", "/api/products", method="PUT").status == 405  # the route exists


# ------------------------------------------------------------------ item 5: Loki structured metadata
def _loki(twin: Twin, query: str) -> list[dict[str, Any]]:
    client = TestClient(create_loki_app(twin, tokens=TOKENS))
    params = {"query": query, "start": str(int((twin.clock.now - 90) * 1e9)),
              "end": str(int((twin.clock.now + 1) * 1e9)), "limit": "5000"}
    response = client.get("/loki/api/v1/query_range", params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    return response.json()["data"]["result"]


def test_trace_id_is_structured_metadata_queryable_with_a_label_filter(shop: Twin) -> None:
    pod = _pod(shop, "fraud-detection")["metadata"]["name"]
    printed = re.findall(r"Consumed record with orderId: (\S+), .* trace_id=([0-9a-f]{32}) span_id=([0-9a-f]{16})",
                         shop.logs(NS, pod, "fraud-detection"))
    assert len(printed) >= 2
    order, trace_id, span_id = printed[-1]
    streams = _loki(shop, f'{{service_name="fraud-detection"}} | trace_id="{trace_id}"')
    assert len(streams) == 1 and len(streams[0]["values"]) == 1
    labels = streams[0]["stream"]
    assert labels["span_id"] == span_id and labels["severity_text"] == "INFO" and labels["severity_number"] == "9"
    assert labels["flags"] == "1" and labels["scope_name"] == "fraud-detection"
    assert labels["k8s_pod_name"] == pod and labels["k8s_pod_uid"]  # uid: not indexed, kept as metadata
    assert order in streams[0]["values"][0][1]
    # the same order's trace on accounting's record (the trace crossed Kafka in the record's headers)
    accounting = _loki(shop, f'{{service_name="accounting"}} | trace_id="{trace_id}"')
    assert len(accounting) == 1 and accounting[0]["stream"]["OrderResult"].startswith("{")
    # structured metadata are not index labels: a stream selector on them matches nothing
    assert _loki(shop, f'{{trace_id="{trace_id}"}}') == []
    assert _loki(shop, '{service_name="fraud-detection"} | trace_id="00000000000000000000000000000000"') == []


def test_metadata_groups_metric_queries(shop: Twin) -> None:
    client = TestClient(create_loki_app(shop, tokens=TOKENS))
    response = client.get("/loki/api/v1/query", headers=ADMIN, params={
        "query": 'sum by (severity_text) (count_over_time({service_name="fraud-detection"}[1m]))',
        "time": str(int(shop.clock.now * 1e9))})
    assert response.status_code == 200, response.text
    result = response.json()["data"]["result"]
    assert [r["metric"] for r in result] == [{"severity_text": "INFO"}] and float(result[0]["value"][1]) > 0


# ------------------------------------------------------------------ item 6: QUOTE_ADDR with port 0
def _set_quote_addr(twin: Twin, value: str) -> None:
    twin.patch("deployments", NS, "shipping", {"spec": {"template": {"spec": {"containers": [
        {"name": "shipping", "env": [{"name": "QUOTE_ADDR", "value": value}]}]}}}})


def _quote_spans(twin: Twin, since: float) -> list[Any]:
    return [s for s in twin.services.traces.spans() if s.service == "shipping" and s.kind == "client"
            and s.operation == "HTTP POST /getquote" and s.start_us >= since * 1e6]


def test_quote_addr_port_zero_times_out_the_awc_way_and_logs_nothing() -> None:
    twin = build_astro_twin(6, 30.0)
    _set_quote_addr(twin, "http://quote:0000")
    twin.advance(60)
    since = twin.clock.now - 30
    spans = _quote_spans(twin, since)
    assert spans and all(s.error for s in spans)
    assert {s.message for s in spans} == {"Timeout while waiting for response"}  # awc's 5 s request timeout
    assert {s.tags["net.peer.port"] for s in spans} == {0} and {s.duration_us for s in spans} == {5_000_000}
    records = [r for res, rs in otlp_logs(twin).resources() if res["service.name"] == "shipping"
               for r in rs if r.at >= since]
    assert not [r for r in records if r.severity_text == "ERROR"]  # get_quote answers 500 without a log line
    # the 500 reaches checkout with the path, not the method, in the URL
    checkout = [r.body for res, rs in otlp_logs(twin).resources() if res["service.name"] == "checkout"
                for r in rs if r.at >= since and r.severity_text == "ERROR"]
    assert any("http://shipping:8080/get-quote: Timeout while waiting for response" in b for b in checkout)

    _set_quote_addr(twin, "quote:0000")  # ITBench's value: no scheme, so awc's URI parser rejects it
    twin.advance(60)
    spans = _quote_spans(twin, twin.clock.now - 30)
    assert spans and {s.message for s in spans} == {"invalid format"} and max(s.duration_us for s in spans) < 1000

    _set_quote_addr(twin, "http://quote:8080")
    twin.advance(60)
    spans = _quote_spans(twin, twin.clock.now - 20)
    assert spans and not any(s.error for s in spans)


# ------------------------------------------------------------------ item 3: llmRateLimitError
def _ask(twin: Twin, n: int) -> list[Any]:
    body = json.dumps({"question": "Can you summarize the product reviews?"})
    return [_get(twin, "frontend-proxy", "/api/product-ask-ai-assistant/OLJCESPC7Z", method="POST",
                 headers={"Content-Type": "application/json"}, body=body, timeout_ms=60_000) for _ in range(n)]


def test_llm_rate_limit_flag_answers_an_apology_with_200() -> None:
    twin = build_astro_twin(7, 60.0)
    before = _ask(twin, 10)
    assert all(r.status == 200 for r in before)
    assert not any(json.loads(r.body)["response"] == RATE_LIMITED for r in before)

    flip_flag(twin, "llmRateLimitError", "on")
    twin.advance(45)
    since = twin.clock.now
    answers = _ask(twin, 40)
    assert all(r.error is None and r.status == 200 for r in answers)
    texts = [json.loads(r.body)["response"] for r in answers]
    apologies = texts.count(RATE_LIMITED)
    assert 8 <= apologies <= 32 and len(set(texts)) == 2  # half of them, the others the real summary
    twin.advance(30)
    errors = [r.body for res, rs in otlp_logs(twin).resources() if res["service.name"] == "product-reviews"
              for r in rs if r.at >= since and r.severity_text == "ERROR"]
    assert errors and all(b.startswith("Caught Exception: Error code: 429 - {'error': {'message': 'Rate limit "
                                       "reached. Please try again later.'") for b in errors)
    # the RPC itself succeeds: product-reviews' server spans stay free of errors
    spans = [s for s in twin.services.traces.spans() if s.service == "product-reviews" and s.kind == "server"
             and s.start_us >= since * 1e6]
    assert not any(s.error for s in spans)

    flip_flag(twin, "llmRateLimitError", "off")
    twin.advance(45)
    assert not any(json.loads(r.body)["response"] == RATE_LIMITED for r in _ask(twin, 10))


# ------------------------------------------------------------------ item 1: NoDatabaseOperations
def _promql(twin: Twin, query: str) -> list[Any]:
    result: Any = Engine(twin.services.tsdb).instant(query, int(twin.clock.now * 1000))
    return list(result.value)


def test_no_database_operations_fires_when_accounting_stops_writing() -> None:
    twin = build_astro_twin(8, 120.0)
    inserted = 'sum(rate(postgresql_tup_inserted_total{k8s_namespace_name="astronomy-shop"}[2m]))'
    assert _promql(twin, inserted)[0].value > 0  # orders reach accounting.order, orderitem, shipping

    def states() -> dict[str, str]:
        return {a["labels"]["service_name"]: a["state"] for a in rule_manager(twin).api_alerts(lambda _labels: True)
                if a["labels"]["alertname"] == "NoDatabaseOperations"}

    assert states() == {}
    twin.patch("deployments", NS, "accounting", {"spec": {"replicas": 0}})
    twin.advance(660)
    assert states() == {"postgresql": "firing"}
    twin.patch("deployments", NS, "accounting", {"spec": {"replicas": 1}})
    twin.advance(120)
    assert states() == {}


# ------------------------------------------------------------------ item 2: start-up lines
# what `kubectl logs` shows after a rollout restart (services that print; OTLP-only ones print nothing)
STARTUP = {
    "frontend": ("   ▲ Next.js 16.1.1", "   - Local:        http://localhost:8080", " ✓ Ready in"),
    "payment": ('"msg":"payment gRPC server started on 0.0.0.0:8080"',),  # a JSON logger (pino)
    "accounting": ("Accounting service started",),
    "ad": ("Ad service starting.", "Ad service started, listening on 8080"),
    "llm": ("OpenAI API server starting on http://localhost:8000", " * Serving Flask app 'app'", " * Debug mode: on"),
}


def test_restarted_services_print_their_start_up_lines(tmp_path: Any) -> None:
    from sregym.apps import deploy_app
    from support.kube import serve_twin

    harness = serve_twin(Twin(seed=9), tmp_path)
    try:
        harness.call(deploy_app, harness.twin, NS)
        harness.advance(60)
        for service in STARTUP:
            harness.ok("rollout", "restart", f"deployment/{service}", "-n", NS, user="admin")
        harness.advance(60)
        for service, expected in STARTUP.items():
            out = harness.ok("logs", f"deployment/{service}", "-n", NS, user="admin")
            positions = [out.find(line) for line in expected]
            assert all(p >= 0 for p in positions) and positions == sorted(positions), (service, out[:400])
        # shipping and recommendation log through OTLP only: their start-up messages are records
        records = {res["service.name"]: [r.body for r in rs] for res, rs in otlp_logs(harness.twin).resources()
                   if res["service.name"] in ("shipping", "recommendation", "product-reviews")}
        assert "Shipping service is running" in records["shipping"]
        assert "Recommendation service started, listening on port 8080" in records["recommendation"]
        assert "Product reviews service started, listening on port 3551" in records["product-reviews"]
        assert harness.ok("logs", "deployment/shipping", "-n", NS, user="admin") == ""
    finally:
        harness.server.stop()
