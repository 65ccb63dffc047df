"""The Prometheus HTTP API over scripted series: shapes, parity with the engine, errors, the
agent/admin views, alerts/rules endpoints, and a fuzz run that must never produce a 500."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from sregym.twin import Twin
from sregym.twin.api.kubeconfig import make_tokens, token_for
from sregym.twin.api.prometheus import create_prometheus_app
from sregym.twin.telemetry.alerts import RuleManager, parse_rule_file
from sregym.twin.telemetry.promql import Engine
from sregym.twin.telemetry.tsdb import TSDB

TOKENS = make_tokens()
ADMIN = {"Authorization": f"Bearer {token_for(TOKENS, 'admin')}"}
AGENT = {"Authorization": f"Bearer {token_for(TOKENS, 'agent')}"}


@pytest.fixture(scope="module")
def setup() -> tuple[Twin, TSDB, TestClient, int]:
    twin = Twin(seed=5, bootstrap=False)
    tsdb = TSDB()
    twin.services.tsdb = tsdb
    now_ms = round(twin.clock.now * 1000)
    start = now_ms - 600_000
    for i in range(41):
        t = start + i * 15_000
        for pod, rate in (("geo-1", 2.0), ("geo-2", 3.0)):
            tsdb.append({"__name__": "http_requests_total", "namespace": "hotel", "pod": pod, "job": "geo",
                         "code": "200"}, t, rate * i * 15)
        tsdb.append({"__name__": "http_requests_total", "namespace": "hotel", "pod": "geo-1", "job": "geo",
                     "code": "500"}, t, 0.5 * i * 15)
        # The machinery: must never be visible to the agent.
        tsdb.append({"__name__": "http_requests_total", "namespace": "sregym-system", "pod": "loadgen-0",
                     "job": "sregym-loadgen", "code": "200"}, t, 100.0 * i)
        tsdb.append({"__name__": "up", "namespace": "chaos-mesh", "job": "chaos-daemon",
                     "instance": "10.0.0.9:10080"}, t, 1)
        tsdb.append({"__name__": "up", "namespace": "monitoring", "job": "kube-state-metrics",
                     "instance": "10.0.0.5:8080"}, t, 1)
    tsdb.set_metadata("http_requests_total", "counter", "Total HTTP requests.")
    tsdb.set_metadata("up", "gauge", "Whether the target is up.")
    manager = RuleManager(twin, parse_rule_file("""
groups:
  - name: demo
    rules:
      - alert: Errors
        expr: sum by (namespace, job) (rate(http_requests_total{code="500"}[5m])) > 0
        labels: {severity: warning}
        annotations: {summary: '{{ $labels.job }} fails'}
      - alert: LoadgenBusy
        expr: rate(http_requests_total{job="sregym-loadgen"}[5m]) > 0
""", "demo.yaml"))
    twin.services.alerts = manager
    manager.tick(now_ms)
    client = TestClient(create_prometheus_app(twin, tokens=TOKENS))
    return twin, tsdb, client, now_ms


def test_instant_query_matches_engine(setup: tuple[Twin, TSDB, TestClient, int]) -> None:
    _twin, tsdb, client, now_ms = setup
    query = 'sum by (pod) (rate(http_requests_total{namespace="hotel"}[5m]))'
    body = client.get("/api/v1/query", params={"query": query}, headers=ADMIN).json()
    assert body["status"] == "success"
    assert body["data"] == Engine(tsdb, lookback_ms=300_000).instant(query, now_ms).to_api()
    assert body["data"]["resultType"] == "vector"
    values = {r["metric"]["pod"]: r["value"] for r in body["data"]["result"]}
    assert values["geo-2"] == [now_ms / 1000 if now_ms % 1000 else now_ms // 1000, "3"]
    assert isinstance(values["geo-2"][1], str)


def test_query_time_formats_and_post_form(setup: tuple[Twin, TSDB, TestClient, int]) -> None:
    _twin, _tsdb, client, now_ms = setup
    at = now_ms - 60_000
    rfc = "2026-01-05T08:59:00Z"  # 60 s before the bootstrap-free twin's now
    assert round(Twin(seed=5, bootstrap=False).clock.now * 1000) - 60_000 == at
    unix = client.get("/api/v1/query", params={"query": "up", "time": str(at / 1000)}).json()
    iso = client.post("/api/v1/query", data={"query": "up", "time": rfc}).json()
    assert unix == iso
    assert unix["data"]["result"][0]["value"][0] == at // 1000
    scalar = client.get("/api/v1/query", params={"query": "1 + 1"}).json()["data"]
    assert scalar["resultType"] == "scalar" and scalar["result"][1] == "2"


def test_query_range_matches_engine(setup: tuple[Twin, TSDB, TestClient, int]) -> None:
    _twin, tsdb, client, now_ms = setup
    query = 'sum(rate(http_requests_total{code="200"}[2m]))'
    params = {"query": query, "start": str((now_ms - 300_000) / 1000), "end": str(now_ms / 1000), "step": "60s"}
    body = client.get("/api/v1/query_range", params=params).json()
    assert body["data"]["resultType"] == "matrix"
    engine = Engine(tsdb, lookback_ms=300_000)
    from sregym.twin.telemetry.visibility import FilteredTSDB

    assert body["data"] == Engine(FilteredTSDB(tsdb), lookback_ms=300_000).range(
        query, now_ms - 300_000, now_ms, 60_000).to_api()
    admin = client.get("/api/v1/query_range", params=params, headers=ADMIN).json()
    assert admin["data"] == engine.range(query, now_ms - 300_000, now_ms, 60_000).to_api()
    # The loadgen's counter is part of the admin's sum only.
    assert float(admin["data"]["result"][0]["values"][-1][1]) > float(body["data"]["result"][0]["values"][-1][1])
    assert len(body["data"]["result"][0]["values"]) == 6


def test_agent_view_cannot_see_or_aggregate_hidden_series(setup: tuple[Twin, TSDB, TestClient, int]) -> None:
    _twin, _tsdb, client, _now = setup
    for headers in ({}, AGENT, {"Authorization": "Bearer nonsense"}):
        count = client.get("/api/v1/query", params={"query": "count(up)"}, headers=headers).json()
        assert count["data"]["result"][0]["value"][1] == "1"
        jobs = client.get("/api/v1/label/job/values", headers=headers).json()["data"]
        assert "sregym-loadgen" not in jobs and "chaos-daemon" not in jobs and "geo" in jobs
        namespaces = client.get("/api/v1/label/namespace/values", headers=headers).json()["data"]
        assert namespaces == ["hotel", "monitoring"]
        series = client.get("/api/v1/series", params={"match[]": "up"}, headers=headers).json()["data"]
        assert [s["job"] for s in series] == ["kube-state-metrics"]
    admin = client.get("/api/v1/query", params={"query": "count(up)"}, headers=ADMIN).json()
    assert admin["data"]["result"][0]["value"][1] == "2"
    admin_ns = client.get("/api/v1/label/namespace/values", headers=ADMIN).json()["data"]
    assert "sregym-system" in admin_ns and "chaos-mesh" in admin_ns


def test_series_labels_metadata_shapes(setup: tuple[Twin, TSDB, TestClient, int]) -> None:
    _twin, _tsdb, client, _now = setup
    series = client.get("/api/v1/series", params=[("match[]", 'http_requests_total{code="500"}'),
                                                   ("match[]", "up")]).json()
    assert series["status"] == "success"
    assert series["data"][0] == {"__name__": "http_requests_total", "code": "500", "job": "geo",
                                 "namespace": "hotel", "pod": "geo-1"}
    labels = client.get("/api/v1/labels").json()["data"]
    assert labels == sorted(labels) and "__name__" in labels and "instance" in labels
    names = client.get("/api/v1/label/__name__/values").json()["data"]
    assert names == ["ALERTS", "ALERTS_FOR_STATE", "http_requests_total", "up"]
    meta = client.get("/api/v1/metadata").json()["data"]
    assert meta["http_requests_total"] == [{"type": "counter", "help": "Total HTTP requests.", "unit": ""}]
    one = client.get("/api/v1/metadata", params={"metric": "http_requests_total"}).json()["data"]
    assert list(one) == ["http_requests_total"]
    # `up` is synthesised by the scrape, not exported: Prometheus has no metadata for it
    assert client.get("/api/v1/metadata", params={"metric": "up"}).json()["data"] == {}
    info = client.get("/api/v1/status/buildinfo").json()["data"]
    assert info["version"].startswith("2.53")
    assert client.get("/-/ready").text == "Prometheus Server is Ready.\n"
    assert client.get("/-/healthy").status_code == 200


def test_alerts_and_rules_endpoints(setup: tuple[Twin, TSDB, TestClient, int]) -> None:
    _twin, _tsdb, client, _now = setup
    admin = client.get("/api/v1/alerts", headers=ADMIN).json()["data"]["alerts"]
    assert sorted(a["labels"]["alertname"] for a in admin) == ["Errors", "LoadgenBusy"]
    agent = client.get("/api/v1/alerts").json()["data"]["alerts"]
    assert [a["labels"]["alertname"] for a in agent] == ["Errors"]
    errors = agent[0]
    assert errors["state"] == "firing" and errors["annotations"] == {"summary": "geo fails"}
    assert set(errors) == {"labels", "annotations", "state", "activeAt", "value"}
    rules = client.get("/api/v1/rules").json()["data"]["groups"]
    assert rules[0]["name"] == "demo"
    loadgen_rule = rules[0]["rules"][1]
    assert loadgen_rule["state"] == "inactive" and loadgen_rule["alerts"] == []
    only = client.get("/api/v1/rules", params={"type": "record"}).json()
    assert only["data"]["groups"] == []


@pytest.mark.parametrize(("path", "params", "code", "error_type", "needle"), [
    ("/api/v1/query", {"query": "sum(("}, 400, "bad_data", 'invalid parameter "query"'),
    ("/api/v1/query", {}, 400, "bad_data", 'invalid parameter "query"'),
    ("/api/v1/query", {"query": "up", "time": "yesterday"}, 400, "bad_data",
     'invalid parameter "time": cannot parse "yesterday" to a valid timestamp'),
    ("/api/v1/query_range", {"query": "up", "start": "10", "end": "5", "step": "1"}, 400, "bad_data",
     "end timestamp must not be before start time"),
    ("/api/v1/query_range", {"query": "up", "start": "0", "end": "100", "step": "0"}, 400, "bad_data",
     "zero or negative query resolution step widths are not accepted"),
    ("/api/v1/query_range", {"query": "up", "start": "0", "end": "100000", "step": "1"}, 400, "bad_data",
     "exceeded maximum resolution of 11,000 points"),
    ("/api/v1/query_range", {"query": "up", "start": "0", "end": "10", "step": "1x"}, 400, "bad_data",
     'cannot parse "1x" to a valid duration'),
    ("/api/v1/series", {}, 400, "bad_data", "no match[] parameter provided"),
    ("/api/v1/series", {"match[]": "{"}, 400, "bad_data", 'invalid parameter "match[]"'),
    ("/api/v1/label/1bad/values", {}, 400, "bad_data", 'invalid label name: "1bad"'),
    ("/api/v1/rules", {"type": "nope"}, 400, "bad_data", 'invalid parameter "type"'),
])
def test_errors(setup: tuple[Twin, TSDB, TestClient, int], path: str, params: dict[str, str], code: int,
                error_type: str, needle: str) -> None:
    _twin, _tsdb, client, _now = setup
    response = client.get(path, params=params)
    assert response.status_code == code
    body = response.json()
    assert body["status"] == "error" and body["errorType"] == error_type
    assert needle in body["error"]


def test_execution_error_is_422(setup: tuple[Twin, TSDB, TestClient, int]) -> None:
    _twin, _tsdb, client, _now = setup
    # Two series with identical label sets after dropping __name__ on one side of a match.
    response = client.get("/api/v1/query", params={"query": 'http_requests_total / on (namespace) up'},
                          headers=ADMIN)
    assert response.status_code in (200, 422)
    if response.status_code == 422:
        assert response.json()["errorType"] == "execution"


QUERY_ATOMS = ["up", "http_requests_total", "rate(", "sum by (pod) (", ")", "[5m]", "{", "}", '"x"',
               "job=", "=~", "+", "/", " or ", "histogram_quantile(0.9,", "offset 1m", "@ 1", ",", "1e9",
               "topk(2,", "label_replace(", "-", "!", "'", "\\", "[1m:15s]", "bool", "on(", "ignoring(x)"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(QUERY_ATOMS), max_size=8).map("".join)),
       st.sampled_from(["/api/v1/query", "/api/v1/query_range", "/api/v1/series", "/api/v1/labels"]),
       st.one_of(st.none(), st.text(max_size=12), st.sampled_from(["0", "-1", "1e30", "nan", "Inf", "15s"])))
def test_fuzz_never_500(setup: tuple[Twin, TSDB, TestClient, int], query: str, path: str, extra: Any) -> None:
    _twin, _tsdb, client, _now = setup
    params: dict[str, str] = {"query": query, "match[]": query}
    if extra is not None:
        params.update({"time": extra, "start": extra, "end": "1767603600", "step": extra})
    response = client.get(path, params=params)
    assert response.status_code < 500, (query, response.text)
    body = response.json()
    assert body["status"] in ("success", "error")
    if body["status"] == "error":
        assert body["errorType"] in ("bad_data", "execution", "timeout", "canceled")


def test_real_twin_alert_visible_through_api() -> None:
    """Scraper → TSDB → rules → /api/v1/alerts and ALERTS via PromQL, on a live twin."""
    twin = Twin(seed=12)
    twin.apply(CRASHY)
    twin.advance(240)
    client = TestClient(create_prometheus_app(twin, tokens=TOKENS))
    alerts = client.get("/api/v1/alerts").json()["data"]["alerts"]
    crash = [a for a in alerts if a["labels"]["alertname"] == "KubePodCrashLooping"]
    assert crash and crash[0]["state"] == "firing"
    assert crash[0]["labels"]["pod"].startswith("crashy-")
    query = 'ALERTS{alertname="KubePodCrashLooping", alertstate="firing"}'
    result = client.get("/api/v1/query", params={"query": query}).json()["data"]["result"]
    assert result[0]["metric"]["namespace"] == "default"
    restarts = client.get("/api/v1/query", params={
        "query": 'sum(kube_pod_container_status_restarts_total{namespace="default"})'}).json()
    assert float(restarts["data"]["result"][0]["value"][1]) >= 2


CRASHY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: crashy, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: crashy}}
  template:
    metadata: {labels: {app: crashy}}
    spec:
      containers:
      - name: main
        image: busybox:1.36
        command: ["sh", "-c", "echo starting; exit 1"]
"""
