"""The Jaeger query API and the OTLP export over spans added to the twin's TraceStore."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from sregym.twin import Twin
from sregym.twin.api.jaeger import create_jaeger_app
from sregym.twin.api.kubeconfig import make_tokens, token_for
from sregym.twin.telemetry.otlp import export
from sregym.twin.telemetry.traces import Span, TraceStore

TOKENS = make_tokens()
ADMIN = {"Authorization": f"Bearer {token_for(TOKENS, 'admin')}"}


def _trace(store: TraceStore, n: int, start_us: int, *, fail_geo: bool) -> str:
    """loadgen → frontend (server) → frontend client calls → search → geo / rate."""
    tid = f"{n + 1:032x}"
    ids = iter(f"{n * 100 + k + 1:016x}" for k in range(10))
    proc = {"hostname": "frontend-5c4b", "ip": "10.244.1.7", "k8s.namespace.name": "hotel"}

    def span(parent: str, service: str, op: str, kind: str, offset: int, dur: int, **kw: Any) -> str:
        sid = next(ids)
        store.add(Span(tid, sid, parent, service, op, kind, start_us + offset, dur,
                       process_tags={**proc, "hostname": f"{service}-pod"} if service != "sregym-loadgen"
                       else {"k8s.namespace.name": "sregym-system"}, **kw))
        return sid

    root = span("", "sregym-loadgen", "GET /hotels", "client", 0, 50_000)
    fe = span(root, "frontend", "HTTP GET /hotels", "server", 100, 48_000, tags={"http.method": "GET"},
              status_code=500 if fail_geo else 200, error=fail_geo)
    call = span(fe, "frontend", "/search.Search/Nearby", "client", 200, 40_000)
    search = span(call, "search", "/search.Search/Nearby", "server", 300, 39_000)
    geo_call = span(search, "search", "/geo.Geo/Nearby", "client", 400, 30_000)
    span(geo_call, "geo", "/geo.Geo/Nearby", "server", 500, 29_000 if not fail_geo else 1_000,
         error=fail_geo, status_code=14 if fail_geo else 0,
         message="connection refused" if fail_geo else "")
    rate_call = span(search, "search", "/rate.Rate/GetRates", "client", 31_000, 5_000)
    span(rate_call, "rate", "/rate.Rate/GetRates", "server", 31_100, 4_800)
    return tid


@pytest.fixture(scope="module")
def env() -> tuple[Twin, TestClient, list[str], int]:
    twin = Twin(seed=4, bootstrap=False)
    store = twin.services.traces
    assert store is not None
    now_us = round(twin.clock.now * 1e6)
    tids = [_trace(store, n, now_us - 600_000_000 + n * 60_000_000, fail_geo=n % 2 == 1) for n in range(6)]
    return twin, TestClient(create_jaeger_app(twin, tokens=TOKENS)), tids, now_us


def test_services_and_operations(env: tuple[Twin, TestClient, list[str], int]) -> None:
    _twin, client, _tids, _now = env
    body = client.get("/api/services").json()
    assert body == {"data": ["frontend", "geo", "rate", "search"], "total": 4, "limit": 0, "offset": 0,
                    "errors": None}
    admin = client.get("/api/services", headers=ADMIN).json()["data"]
    assert "sregym-loadgen" in admin
    ops = client.get("/api/services/search/operations").json()["data"]
    assert ops == ["/geo.Geo/Nearby", "/rate.Rate/GetRates", "/search.Search/Nearby"]
    typed = client.get("/api/operations", params={"service": "search", "spanKind": "server"}).json()["data"]
    assert typed == [{"name": "/search.Search/Nearby", "spanKind": "server"}]


def test_trace_by_id_shape(env: tuple[Twin, TestClient, list[str], int]) -> None:
    _twin, client, tids, _now = env
    body = client.get(f"/api/traces/{tids[1]}").json()
    assert body["errors"] is None and body["total"] == 1
    trace = body["data"][0]
    assert trace["traceID"] == tids[1]
    spans = trace["spans"]
    assert len(spans) == 7  # the load generator's root span is left out for the agent
    by_op = {(trace["processes"][s["processID"]]["serviceName"], s["operationName"]): s for s in spans}
    frontend = by_op[("frontend", "HTTP GET /hotels")]
    assert frontend["references"] == []  # its hidden parent is dropped: it is the root now
    geo = by_op[("geo", "/geo.Geo/Nearby")]
    assert geo["references"][0]["refType"] == "CHILD_OF"
    assert set(geo) >= {"traceID", "spanID", "operationName", "references", "startTime", "duration", "tags",
                        "logs", "processID", "warnings", "flags"}
    tags = {t["key"]: t for t in geo["tags"]}
    assert tags["error"] == {"key": "error", "type": "bool", "value": True}
    assert tags["span.kind"]["value"] == "server"
    assert tags["otel.status_description"]["value"] == "connection refused"
    assert tags["rpc.grpc.status_code"] == {"key": "rpc.grpc.status_code", "type": "int64", "value": 14}
    assert {t["key"] for t in trace["processes"]["p1"]["tags"]} >= {"hostname", "ip"}
    admin = client.get(f"/api/traces/{tids[1]}", headers=ADMIN).json()["data"][0]
    assert len(admin["spans"]) == 8
    missing = client.get(f"/api/traces/{'f' * 32}")
    assert missing.status_code == 404
    assert missing.json()["errors"] == [{"code": 404, "msg": "trace not found"}]


def test_trace_search(env: tuple[Twin, TestClient, list[str], int]) -> None:
    _twin, client, tids, now = env
    everything = client.get("/api/traces", params={"service": "geo"}).json()["data"]
    assert [t["traceID"] for t in everything] == list(reversed(tids))  # newest first
    failing = client.get("/api/traces", params={"service": "geo", "tags": json.dumps({"error": "true"})}).json()
    assert sorted(t["traceID"] for t in failing["data"]) == [tids[1], tids[3], tids[5]]
    slow = client.get("/api/traces", params={"service": "geo", "minDuration": "20ms"}).json()["data"]
    assert sorted(t["traceID"] for t in slow) == [tids[0], tids[2], tids[4]]
    fast = client.get("/api/traces", params={"service": "geo", "maxDuration": "2ms"}).json()["data"]
    assert len(fast) == 3
    limited = client.get("/api/traces", params={"service": "geo", "limit": "2"}).json()["data"]
    assert [t["traceID"] for t in limited] == [tids[5], tids[4]]
    window = client.get("/api/traces", params={"service": "rate", "operation": "/rate.Rate/GetRates",
                                               "start": str(now - 400_000_000), "end": str(now)}).json()["data"]
    assert [t["traceID"] for t in window] == [tids[5], tids[4]]
    lookback = client.get("/api/traces", params={"service": "rate", "lookback": "6m30s"}).json()["data"]
    assert [t["traceID"] for t in lookback] == [tids[5], tids[4]]
    by_tag = client.get("/api/traces", params={"service": "frontend", "tag": "http.status_code:500"}).json()
    assert sorted(t["traceID"] for t in by_tag["data"]) == [tids[1], tids[3], tids[5]]


def test_dependencies_reproduce_call_graph(env: tuple[Twin, TestClient, list[str], int]) -> None:
    _twin, client, _tids, now = env
    end_ms = now // 1000
    deps = client.get("/api/dependencies", params={"endTs": str(end_ms), "lookback": "3600000"}).json()
    assert deps["errors"] is None
    assert deps["data"] == [{"parent": "frontend", "child": "search", "callCount": 6},
                            {"parent": "search", "child": "geo", "callCount": 6},
                            {"parent": "search", "child": "rate", "callCount": 6}]
    admin = client.get("/api/dependencies", params={"endTs": str(end_ms), "lookback": "3600000"},
                       headers=ADMIN).json()["data"]
    assert {"parent": "sregym-loadgen", "child": "frontend", "callCount": 6} in admin
    recent = client.get("/api/dependencies", params={"endTs": str(end_ms), "lookback": "370000"}).json()["data"]
    assert {d["callCount"] for d in recent} == {2}


def test_otlp_export(env: tuple[Twin, TestClient, list[str], int]) -> None:
    twin, _client, tids, _now = env
    store = twin.services.traces
    doc = export(store.trace(tids[1]))
    resources = doc["resourceSpans"]
    services = [next(a["value"]["stringValue"] for a in r["resource"]["attributes"] if a["key"] == "service.name")
                for r in resources]
    assert services == ["sregym-loadgen", "frontend", "search", "geo", "rate"]
    geo = resources[3]["scopeSpans"][0]["spans"][0]
    assert geo["traceId"] == tids[1] and len(geo["spanId"]) == 16
    assert geo["kind"] == 2 and geo["status"] == {"code": 2, "message": "connection refused"}
    assert int(geo["endTimeUnixNano"]) - int(geo["startTimeUnixNano"]) == 1_000_000
    assert {"key": "rpc.grpc.status_code", "value": {"intValue": "14"}} in geo["attributes"]
    json.dumps(doc)  # serialisable as is


@pytest.mark.parametrize(("path", "params", "code", "needle"), [
    ("/api/traces", {}, 400, "parameter 'service' is required"),
    ("/api/traces", {"service": "geo", "minDuration": "fast"}, 400, "cannot not parse minDuration"),
    ("/api/traces", {"service": "geo", "tags": "{not json"}, 400, "malformed 'tags' parameter"),
    ("/api/traces", {"service": "geo", "start": "abc"}, 400, "unable to parse param 'start'"),
    ("/api/traces", {"service": "geo", "minDuration": "2s", "maxDuration": "1s"}, 400, "maxDuration"),
    ("/api/traces/zzz", {}, 400, "invalid syntax"),
    ("/api/dependencies", {"endTs": "x"}, 400, "unable to parse param 'endTs'"),
    ("/api/operations", {}, 400, "parameter 'service' is required"),
])
def test_errors(env: tuple[Twin, TestClient, list[str], int], path: str, params: dict[str, str], code: int,
                needle: str) -> None:
    _twin, client, _tids, _now = env
    response = client.get(path, params=params)
    assert response.status_code == code
    body = response.json()
    assert body["data"] is None and needle in body["errors"][0]["msg"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["/api/traces", "/api/dependencies", "/api/operations", "/api/services/geo/operations"]),
       st.dictionaries(st.sampled_from(["service", "operation", "tags", "tag", "minDuration", "maxDuration",
                                        "start", "end", "lookback", "limit", "endTs", "traceID"]),
                       st.one_of(st.text(max_size=15), st.sampled_from(["geo", "1h", "-1", "{}", "[]", "1e99"])),
                       max_size=5))
def test_fuzz_never_500(env: tuple[Twin, TestClient, list[str], int], path: str, params: dict[str, str]) -> None:
    _twin, client, _tids, _now = env
    response = client.get(path, params=params)
    assert response.status_code < 500, (params, response.text)
    assert set(response.json()) == {"data", "total", "limit", "offset", "errors"}
