"""The query APIs' budgets over HTTP, and a server that keeps answering while a query runs.

Prometheus' limits come back with its own errors and codes (11,000 points: 400 bad_data; too many
samples: 422 execution; timeout: 503 timeout), Loki's with its own (query length, series, 504 on
timeout). Queries evaluate on worker threads: while one client's query is held inside evaluation,
another client's `up` is answered, and a clock step waits for the running query to finish.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from sregym.twin import Twin
from sregym.twin.api import loki as loki_api
from sregym.twin.api.kubeconfig import make_tokens
from sregym.twin.api.query_gate import gate_for
from sregym.twin.api.serve import TwinServer
from sregym.twin.telemetry import logql
from sregym.twin.telemetry.promql import Engine
from sregym.twin.telemetry.tsdb import Matcher

LONG = "a" * 30 + "_" + "b" * 29


def _twin() -> Twin:
    twin = Twin(seed=21, bootstrap=False)
    tsdb = twin.services.tsdb
    assert tsdb is not None
    now_ms = round(twin.clock.now * 1000)
    for t in range(now_ms - 600_000, now_ms + 1, 15_000):
        tsdb.append({"__name__": "up", "job": "api", "instance": "10.0.0.1:80"}, t, 1)
        tsdb.append({"__name__": "slow_metric", "job": "api"}, t, 2)
        for i in range(300):
            tsdb.append({"__name__": f"{LONG}{i}", "job": "api"}, t, i)
    return twin


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[TwinServer, str]]:
    server = TwinServer(_twin(), tokens=make_tokens(), port=0, speed=0, tls=False, shutdown_grace=0.2,
                        observability_ports={"prometheus": 0, "loki": 0}).start_in_thread()
    try:
        yield server, server.observability_urls()["prometheus"]
    finally:
        server.stop()


def _query(url: str, path: str = "/api/v1/query", **params: Any) -> httpx.Response:
    return httpx.get(url + path, params=params, timeout=60)


def test_catastrophic_regex_over_http(served: tuple[TwinServer, str]) -> None:
    _server, url = served
    answer = _query(url, query=r'count({__name__=~"(\\w+)+x"}) or vector(0)')
    assert answer.status_code == 200
    assert answer.json()["data"]["result"][0]["value"][1] == "0"
    answer = _query(url, query=r'count({__name__=~"(\\w+)+b\\d+", job="api"})')
    assert answer.json()["data"]["result"][0]["value"][1] == "300"
    refused = _query(url, query='up{job=~"(?=api)"}')
    assert refused.status_code == 400
    assert refused.json() == {"status": "error", "errorType": "bad_data",
                              "error": 'invalid parameter "query": 1:4: parse error: error parsing '
                                       "regexp: invalid or unsupported Perl syntax: `(?=`"}


def test_prometheus_budget_errors(served: tuple[TwinServer, str]) -> None:
    _server, url = served
    points = _query(url, "/api/v1/query_range", query="up", start="0", end="11001", step="1")
    assert points.status_code == 400
    assert points.json()["error"] == ("exceeded maximum resolution of 11,000 points per timeseries. "
                                      "Try decreasing the query resolution (?step=XX)")
    samples = _query(url, query="max_over_time(up[1y:1s])")
    assert samples.status_code == 422
    assert samples.json() == {"status": "error", "errorType": "execution",
                              "error": "query processing would load too many samples into memory in "
                                       "query execution"}
    timeout = _query(url, query="sum(up)", timeout="0s")
    assert timeout.status_code == 503
    assert timeout.json() == {"status": "error", "errorType": "timeout",
                              "error": "query timed out in expression evaluation"}
    assert _query(url, query='sum(up{job="api"})', timeout="1m").json()["data"]["result"][0]["value"][1] == "1"


def test_server_answers_while_a_query_runs_and_the_clock_waits(
        served: tuple[TwinServer, str], monkeypatch: pytest.MonkeyPatch) -> None:
    server, url = served
    entered, release = threading.Event(), threading.Event()
    original = Engine.select

    def held_select(self: Engine, vs: Any) -> Any:
        if vs.name == "slow_metric":
            entered.set()
            assert release.wait(60)
        return original(self, vs)

    monkeypatch.setattr(Engine, "select", held_select)
    slow: dict[str, httpx.Response] = {}
    worker = threading.Thread(target=lambda: slow.setdefault("r", _query(url, query="slow_metric")))
    worker.start()
    try:
        assert entered.wait(60)
        up = _query(url, query="up")  # another client, while slow_metric is held mid-evaluation
        assert up.status_code == 200
        assert up.json()["data"]["result"][0]["value"][1] == "1"
        assert worker.is_alive() and "r" not in slow
        # A clock step requested now waits for the running query instead of racing it.
        before = server.twin.clock.now  # a plain read: `call` itself would wait for the query
        stepper = threading.Thread(target=server.advance, args=(30,))
        stepper.start()
        gate = gate_for(server.twin)
        for _ in range(30_000):
            if gate._writers_waiting:
                break
            threading.Event().wait(0.001)
        assert gate._writers_waiting == 1
        assert server.twin.clock.now == before
    finally:
        release.set()
        worker.join(60)
    stepper.join(60)
    assert slow["r"].status_code == 200
    assert slow["r"].json()["data"]["result"][0]["value"][1] == "2"
    assert server.call(lambda: server.twin.clock.now) == before + 30


def test_loki_limits() -> None:
    twin = Twin(seed=22, bootstrap=False)
    tokens = make_tokens()
    client = TestClient(loki_api.create_loki_app(twin, tokens=tokens, timeout_s=0))
    long = client.get("/loki/api/v1/query_range", params={"query": '{job="a"}', "start": "0",
                                                         "end": str(800 * 3600 * 10**9)})
    assert long.status_code == 400
    assert long.text == ("the query time range exceeds the limit (query length: 800h0m0s, limit: "
                         "721h0m0s)\n")
    timed_out = client.get("/loki/api/v1/query", params={"query": 'count_over_time({job="a"}[5m])'})
    assert timed_out.status_code == 504
    assert timed_out.text == loki_api.DEADLINE_EXCEEDED + "\n"
    limit = client.get("/loki/api/v1/query_range", params={"query": '{job="a"}', "limit": "5001"})
    assert limit.text == ("max entries limit per query exceeded, limit > max_entries_limit_per_query "
                          "(5001 > 5000)\n")


def test_loki_series_limit() -> None:
    def source(matchers: list[Matcher]) -> Iterator[tuple[dict[str, str], list[tuple[int, str]]]]:
        for i in range(loki_api.MAX_QUERY_SERIES + 1):
            yield {"job": "a", "pod": f"p{i}"}, [(10**9, "line")]

    expr = logql.parse('count_over_time({job="a"}[5m])')
    with pytest.raises(loki_api.LokiError, match=r"^maximum of series \(500\) reached for a single query$"):
        loki_api._eval(expr, source, 2 * 10**9, 2 * 10**9, 10**9, logql.QueryStats(), lambda: None)
