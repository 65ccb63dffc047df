"""The Loki API and LogQL over log lines written straight into the twin's LogStore."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from sregym.twin import Twin
from sregym.twin.api.kubeconfig import make_tokens, token_for
from sregym.twin.api.loki import create_loki_app
from sregym.twin.node.logs import log_store

TOKENS = make_tokens()
ADMIN = {"Authorization": f"Bearer {token_for(TOKENS, 'admin')}"}


def _pod(ns: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}


@pytest.fixture(scope="module")
def env() -> tuple[Twin, TestClient, float]:
    twin = Twin(seed=9)
    for ns in ("hotel", "sregym-system"):
        if twin.try_get("Namespace", None, ns) is None:
            twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    twin.create(_pod("hotel", "geo-7d9f", {"io.kompose.service": "geo"}))
    twin.create(_pod("hotel", "frontend-5c4b", {"app.kubernetes.io/name": "frontend"}))
    twin.create(_pod("sregym-system", "loadgen-0", {"app": "loadgen"}))
    store = log_store(twin)
    client = TestClient(create_loki_app(twin, tokens=TOKENS))
    t0 = twin.clock.now - 300
    store.open("c-geo-0", {"namespace": "hotel", "pod": "geo-7d9f", "container": "main", "node": "kind-worker",
                           "restart": 0})
    store.open("c-geo-1", {"namespace": "hotel", "pod": "geo-7d9f", "container": "main", "node": "kind-worker",
                           "restart": 1})
    store.open("c-fe", {"namespace": "hotel", "pod": "frontend-5c4b", "container": "main",
                        "node": "kind-worker2", "restart": 0})
    store.open("c-lg", {"namespace": "sregym-system", "pod": "loadgen-0", "container": "main",
                        "node": "kind-worker3", "restart": 0})
    for i in range(10):
        store.append("c-geo-0", t0 + i, "stdout", f'level=info msg="served nearby" latency_ms={10 + i}')
    store.append("c-geo-0", t0 + 10, "stderr", 'level=error msg="not authorized on geo-db to execute command"')
    store.append("c-geo-1", t0 + 100, "stdout", 'level=info msg="restarted" latency_ms=5')
    for i in range(6):
        status = 500 if i % 3 == 0 else 200
        store.append("c-fe", t0 + 20 * i, "stdout",
                     json.dumps({"level": "error" if status == 500 else "info", "status": status,
                                 "msg": "GET /hotels", "http": {"method": "GET"}}))
    store.append("c-fe", t0 + 200, "stdout", "not json at all")
    store.append("c-lg", t0 + 50, "stdout", "loadgen: 1200 rps")
    store.node_append("kind-worker", "kernel", t0 + 30, "nf_conntrack: table full, dropping packet")
    store.node_append("kind-worker", "kubelet", t0 + 40, 'E0105 "Error syncing pod, skipping"')
    return twin, client, t0


def _range(client: TestClient, query: str, t0: float, **extra: Any) -> dict[str, Any]:
    params = {"query": query, "start": str(int((t0 - 1) * 1e9)), "end": str(int((t0 + 400) * 1e9)), **extra}
    response = client.get("/loki/api/v1/query_range", params={k: str(v) for k, v in params.items()}, headers=extra.pop(
        "headers", None) if "headers" in extra else None)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "success"
    return body["data"]


def test_stream_labels_and_shapes(env: tuple[Twin, TestClient, float]) -> None:
    _twin, client, t0 = env
    data = _range(client, '{namespace="hotel", app="geo"}', t0)
    assert data["resultType"] == "streams"
    assert set(data["stats"]) >= {"summary", "querier", "ingester"}
    (stream,) = data["result"]  # both container restarts share one stream
    assert stream["stream"] == {"namespace": "hotel", "pod": "geo-7d9f", "container": "main", "app": "geo",
                                "node": "kind-worker", "job": "hotel/main"}
    values = stream["values"]
    assert len(values) == 12
    assert values[0][1] == 'level=info msg="restarted" latency_ms=5'  # backward: newest first
    assert values[0][0] == str(round((t0 + 100) * 1e9))
    assert all(isinstance(ts, str) for ts, _line in values)
    forward = _range(client, '{app="geo"}', t0, direction="forward", limit=2)["result"][0]["values"]
    assert [v[1] for v in forward] == ['level=info msg="served nearby" latency_ms=10',
                                       'level=info msg="served nearby" latency_ms=11']


def test_line_filters(env: tuple[Twin, TestClient, float]) -> None:
    _twin, client, t0 = env
    errors = _range(client, '{app="geo"} |= "error" != "debug"', t0)["result"][0]["values"]
    assert [v[1] for v in errors] == ['level=error msg="not authorized on geo-db to execute command"']
    regex = _range(client, '{app="geo"} |~ "latency_ms=1[5-9]"', t0)["result"][0]["values"]
    assert len(regex) == 5
    none = _range(client, '{app="geo"} !~ "level=(info|error)"', t0)
    assert none["result"] == []


def test_logfmt_json_and_label_filters(env: tuple[Twin, TestClient, float]) -> None:
    _twin, client, t0 = env
    slow = _range(client, '{app="geo"} | logfmt | latency_ms >= 17 and level="info"', t0)["result"]
    assert sum(len(s["values"]) for s in slow) == 3
    assert slow[0]["stream"]["latency_ms"] in {"17", "18", "19"}
    assert slow[0]["stream"]["msg"] == "served nearby"
    failing = _range(client, '{app="frontend"} | json | status >= 500', t0)["result"]
    # As in Loki, a numeric filter lets lines through that already carry a parser error.
    assert sum(len(s["values"]) for s in failing) == 3
    assert [s["stream"].get("__error__") for s in failing].count("JSONParserErr") == 1
    clean = _range(client, '{app="frontend"} | json | __error__="" | status >= 500', t0)["result"]
    assert sum(len(s["values"]) for s in clean) == 2
    assert clean[0]["stream"]["http_method"] == "GET"
    broken = _range(client, '{app="frontend"} | json | __error__="JSONParserErr"', t0)["result"]
    assert [v[1] for s in broken for v in s["values"]] == ["not json at all"]
    formatted = _range(client, '{app="frontend"} | json | level="error" | line_format "{{.status}} {{.msg}}"',
                       t0)["result"]
    assert {v[1] for s in formatted for v in s["values"]} == {"500 GET /hotels"}


def test_metric_queries(env: tuple[Twin, TestClient, float]) -> None:
    twin, client, t0 = env
    now = twin.clock.now
    body = client.get("/loki/api/v1/query", params={
        "query": 'sum by (app) (count_over_time({namespace="hotel"}[10m]))', "time": str(int(now))}).json()
    assert body["data"]["resultType"] == "vector"
    counts = {r["metric"]["app"]: r["value"][1] for r in body["data"]["result"]}
    assert counts == {"geo": "12", "frontend": "7"}
    assert body["data"]["result"][0]["value"][0] == int(now)
    rate = client.get("/loki/api/v1/query", params={
        "query": 'rate({app="frontend"} |= "error" [5m])', "time": str(int(now))}).json()["data"]["result"]
    # Windows are (t - range, t]: the error line written exactly 300 s ago is outside.
    assert rate[0]["value"][1] == str(1 / 300)
    wider = client.get("/loki/api/v1/query", params={
        "query": 'rate({app="frontend"} |= "error" [10m])', "time": str(int(now))}).json()["data"]["result"]
    assert wider[0]["value"][1] == str(2 / 600)
    top = client.get("/loki/api/v1/query", params={
        "query": 'topk(1, sum by (pod) (bytes_over_time({namespace="hotel"}[10m])))',
        "time": str(int(now))}).json()["data"]["result"]
    assert len(top) == 1 and top[0]["metric"] == {"pod": "geo-7d9f"}
    matrix = _range(client, 'sum(count_over_time({app="geo"}[1m]))', t0, step="60")
    assert matrix["resultType"] == "matrix"
    points = matrix["result"][0]["values"]
    assert all(isinstance(p[1], str) for p in points)
    assert sum(float(p[1]) for p in points) == 12  # 1m windows stepped by 1m partition the lines


def test_node_logs_labels_series(env: tuple[Twin, TestClient, float]) -> None:
    _twin, client, t0 = env
    kernel = _range(client, '{node="kind-worker", source="kernel"}', t0)["result"]
    assert kernel[0]["stream"] == {"node": "kind-worker", "source": "kernel"}
    assert kernel[0]["values"][0][1] == "nf_conntrack: table full, dropping packet"
    labels = client.get("/loki/api/v1/labels").json()
    assert labels["status"] == "success"
    assert {"app", "container", "job", "namespace", "node", "pod", "source"} <= set(labels["data"])
    sources = client.get("/loki/api/v1/label/source/values").json()["data"]
    assert sources == ["kernel", "kubelet"]
    series = client.get("/loki/api/v1/series", params={"match[]": '{app="frontend"}'}).json()["data"]
    assert series == [{"app": "frontend", "container": "main", "job": "hotel/main", "namespace": "hotel",
                       "node": "kind-worker2", "pod": "frontend-5c4b"}]
    assert client.get("/ready").text == "ready\n"


def test_agent_cannot_see_hidden_namespaces(env: tuple[Twin, TestClient, float]) -> None:
    _twin, client, t0 = env
    namespaces = client.get("/loki/api/v1/label/namespace/values").json()["data"]
    assert "sregym-system" not in namespaces
    admin_ns = client.get("/loki/api/v1/label/namespace/values", headers=ADMIN).json()["data"]
    assert "sregym-system" in admin_ns
    hidden = _range(client, '{namespace=~".+"} |= "loadgen"', t0)["result"]
    assert hidden == []
    params = {"query": '{namespace=~".+"} |= "loadgen"', "start": str(int((t0 - 1) * 1e9))}
    admin = client.get("/loki/api/v1/query_range", params=params, headers=ADMIN).json()["data"]["result"]
    assert admin[0]["stream"]["namespace"] == "sregym-system"
    count = client.get("/loki/api/v1/query", params={"query": 'sum(count_over_time({job=~".+"}[1h]))'}).json()
    admin_count = client.get("/loki/api/v1/query", params={"query": 'sum(count_over_time({job=~".+"}[1h]))'},
                             headers=ADMIN).json()
    assert float(admin_count["data"]["result"][0]["value"][1]) == \
        float(count["data"]["result"][0]["value"][1]) + 1


@pytest.mark.parametrize(("params", "needle"), [
    ({"query": '{app="geo"'}, "parse error at line 1, col 11"),
    ({"query": '{app=~".*"}'}, "queries require at least one regexp or equality matcher"),
    ({"query": ""}, "parse error"),
    ({"query": '{app="geo"}', "end": "soon"}, "could not parse 'end' parameter"),
    ({"query": '{app="geo"}', "limit": "9999"}, "max entries limit per query exceeded"),
    ({"query": '{app="geo"}', "direction": "sideways"}, "invalid direction"),
    ({"query": 'rate({app="geo"})'}, "parse error"),
    ({"query": '{app="geo"} |~ "("'}, "error parsing regexp"),
])
def test_errors_are_plain_text_400(env: tuple[Twin, TestClient, float], params: dict[str, str],
                                   needle: str) -> None:
    _twin, client, _t0 = env
    response = client.get("/loki/api/v1/query_range", params=params)
    assert response.status_code == 400
    assert needle in response.text


def test_instant_log_query_is_rejected_like_loki_3(env: tuple[Twin, TestClient, float]) -> None:
    _twin, client, _t0 = env
    response = client.get("/loki/api/v1/query", params={"query": '{app="geo"}'})
    assert response.status_code == 400
    assert "log queries are not supported as an instant query type" in response.text


def test_pipeline_error_in_metric_query(env: tuple[Twin, TestClient, float]) -> None:
    _twin, client, _t0 = env
    response = client.get("/loki/api/v1/query", params={"query": 'count_over_time({app="frontend"} | json [1h])'})
    assert response.status_code == 400 and "pipeline error: 'JSONParserErr'" in response.text
    fine = client.get("/loki/api/v1/query", params={
        "query": 'sum(count_over_time({app="frontend"} | json | __error__="" [1h]))'})
    assert fine.json()["data"]["result"][0]["value"][1] == "6"


ATOMS = ['{app="geo"}', "{", "}", "|=", '"x"', "|", "json", "logfmt", "count_over_time(", "[5m]", ")", "sum by (app) (",
         "rate(", "level", ">", "5", "=~", "!~", "line_format", "`{{.a}}`", " or ", " and ", "topk(2,", ",", "(", "/"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(ATOMS), max_size=9).map("".join)),
       st.sampled_from(["/loki/api/v1/query_range", "/loki/api/v1/query", "/loki/api/v1/series",
                        "/loki/api/v1/labels"]),
       st.one_of(st.none(), st.text(max_size=10), st.sampled_from(["0", "-5", "1e30", "1.5", "99999999999999999999"])))
def test_fuzz_never_500(env: tuple[Twin, TestClient, float], query: str, path: str, extra: str | None) -> None:
    _twin, client, _t0 = env
    params = {"query": query, "match[]": query}
    if extra is not None:
        params.update({"start": extra, "step": extra, "limit": extra, "time": extra})
    response = client.get(path, params=params)
    assert response.status_code < 500, (query, response.text)
