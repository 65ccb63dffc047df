"""frontend-proxy as the demo's Envoy: access-log records (the OpenTelemetry access logger's, in
the log backend) in envoy.tmpl.yaml's format with the response flags of what happened upstream,
and the admin interface's stats (ENVOY_ADMIN_PORT)."""

from __future__ import annotations

import json
import re

import pytest

from sregym.apps import deploy_app
from sregym.apps.astronomy_shop.envoy_config import ACCESS_LOG_FORMAT
from sregym.twin import Twin
from sregym.twin.telemetry.promql import Engine

pytestmark = pytest.mark.xdist_group("astro_envoy")  # one twin; the faults come last, in order
NS = "astronomy-shop"


def _pattern(fmt: str) -> tuple[re.Pattern[str], dict[str, str]]:
    """The format string with every %OPERATOR% a capture group (group name -> operator)."""
    out, names = "", {}
    for i, part in enumerate(re.split(r"(%[A-Z_()?:\-]+%)", fmt.rstrip("\n"))):
        if part.startswith("%") and part.endswith("%") and len(part) > 2:
            name = f"g{i}"
            names[name] = part.strip("%")
            out += rf"(?P<{name}>[^ \"]*)" if part != "%START_TIME%" else rf"(?P<{name}>[^\]]+)"
        else:
            out += re.escape(part)
    return re.compile(out + "$"), names


LINE, NAMES = _pattern(ACCESS_LOG_FORMAT)


def _parse(line: str) -> dict[str, str] | None:
    found = LINE.match(line)
    if found is None:
        return None
    return {NAMES[k]: v for k, v in found.groupdict().items()}


@pytest.fixture(scope="module")
def shop() -> Twin:
    twin = Twin(seed=5)
    deploy_app(twin, NS)
    twin.advance(90)
    return twin


def _proxy(twin: Twin) -> dict:
    return next(p for p in twin.store.scan("Pod", NS) if p["metadata"]["name"].startswith("frontend-proxy-"))


def _access(twin: Twin, since: float) -> list[dict[str, str]]:
    """The access log records the proxy exported (bodies parsed by the format); none on stdout."""
    pod = _proxy(twin)["metadata"]["name"]
    from sregym.twin.telemetry.otlp_logs import otlp_logs

    bodies = [r.body for res, records in otlp_logs(twin).resources() if res.get("k8s.pod.name") == pod
              for r in records if r.at >= since]
    assert "HTTP/1.1\"" not in twin.logs(NS, pod, "frontend-proxy")
    parsed = [_parse(body) for body in bodies]
    assert all(p is not None for p in parsed)
    return [p for p in parsed if p is not None]


def _to_frontend(lines: list[dict[str, str]]) -> list[dict[str, str]]:
    return [p for p in lines if p["UPSTREAM_CLUSTER"] in ("frontend", "-")
            and not p["REQ(X-ENVOY-ORIGINAL-PATH?:PATH)"].startswith(("/images/", "/flagservice/"))]


def _admin(twin: Twin, path: str) -> str:
    ip = _proxy(twin)["status"]["podIP"]
    res = twin.services.dataplane.http_request(None, f"http://{ip}:10000{path}")
    assert res.error is None and res.status == 200, res
    return res.body


def _metric(text: str, name: str, cluster: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and f'envoy_cluster_name="{cluster}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_access_log_lines_follow_the_template(shop: Twin) -> None:
    lines = _access(shop, shop.clock.now - 60)
    assert len(lines) > 50
    ok = [p for p in lines if p["RESPONSE_CODE"] == "200"]
    assert ok and all(p["RESPONSE_FLAGS"] == "-" and p["RESPONSE_CODE_DETAILS"] == "via_upstream" for p in ok)
    sample = ok[0]
    assert sample["UPSTREAM_CLUSTER"] == "frontend" and sample["PROTOCOL"] == "HTTP/1.1"
    assert sample["REQ(:AUTHORITY)"] == "frontend-proxy:8080"  # LOCUST_HOST
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", sample["START_TIME"])
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                        sample["REQ(X-REQUEST-ID)"])
    frontend_ip = shop.get("Service", NS, "frontend")["spec"]["clusterIP"]
    assert sample["UPSTREAM_HOST"] == f"{frontend_ip}:8080"
    assert {p["REQ(X-ENVOY-ORIGINAL-PATH?:PATH)"].split("/")[1] for p in lines} >= {"api"}


def test_admin_stats_count_the_requests(shop: Twin) -> None:
    prom = _admin(shop, "/stats/prometheus")
    assert "# TYPE envoy_cluster_upstream_rq_total counter" in prom
    assert _metric(prom, "envoy_cluster_upstream_rq_total", "frontend") > 100
    assert _metric(prom, "envoy_cluster_upstream_rq_xx", "frontend") == \
        _metric(prom, "envoy_cluster_upstream_rq_total", "frontend")
    assert _metric(prom, "envoy_cluster_membership_healthy", "frontend") == 1
    assert _metric(prom, "envoy_cluster_upstream_rq_total", "jaeger") == 0  # every cluster reports
    stats = _admin(shop, "/stats")
    assert re.search(r"^cluster\.frontend\.upstream_rq_total: \d+$", stats, re.M)
    clusters = _admin(shop, "/clusters")
    assert "frontend::observability_name::frontend" in clusters
    assert re.search(r"^frontend::[\d.]+:8080::health_flags::healthy$", clusters, re.M)
    assert _admin(shop, "/ready") == "LIVE\n"
    # The chart's Service exposes only 8080: the admin port is not behind it.
    ports = [p["port"] for p in shop.get("Service", NS, "frontend-proxy")["spec"]["ports"]]
    assert 10000 not in ports


def test_locust_stats_requests_match_the_traffic(shop: Twin) -> None:
    loadgen = next(p for p in shop.store.scan("Pod", NS) if p["metadata"]["name"].startswith("load-generator-"))
    res = shop.services.dataplane.http_request(None, f"http://{loadgen['status']['podIP']}:8089/stats/requests")
    assert res.status == 200 and res.headers["Content-Type"] == "application/json"
    body = json.loads(res.body)
    assert {"stats", "errors", "total_rps", "total_fail_per_sec", "fail_ratio", "state", "user_count",
            "current_response_time_percentiles"} <= set(body)
    assert body["state"] == "running" and body["user_count"] == 10  # LOCUST_USERS
    *entries, aggregated = body["stats"]
    assert aggregated["name"] == "Aggregated" and aggregated["method"] == ""
    assert aggregated["num_requests"] == sum(e["num_requests"] for e in entries) > 50
    assert {"num_requests", "num_failures", "avg_response_time", "min_response_time", "max_response_time",
            "median_response_time", "current_rps", "current_fail_per_sec", "avg_content_length"} <= set(entries[0])
    assert any(e["name"].startswith("/api/products/") for e in entries)
    served = sum(s.value for s in Engine(shop.services.tsdb).instant(
        'traces_span_metrics_calls_total{service_name="frontend-proxy", span_kind="SPAN_KIND_SERVER"}',
        int(shop.clock.now * 1000)).value)
    # frontend-proxy also serves the browser users, whose page loads Locust reports per task, not per request
    browser = shop.services.dataplane.workloads[next(n for n in shop.services.dataplane.workloads
                                                     if n.endswith("/browser"))]
    assert served > 0 and browser.users and aggregated["num_requests"] < served


def test_frontend_without_endpoints_is_uf_503(shop: Twin) -> None:
    shop.patch("Deployment", NS, "frontend", {"spec": {"replicas": 0}})
    shop.advance(40)
    since = shop.clock.now - 15
    lines = _to_frontend(_access(shop, since))  # the browsers' image requests go to image-provider
    assert lines and all(p["RESPONSE_CODE"] == "503" and p["RESPONSE_FLAGS"] == "UF" for p in lines)
    assert lines[0]["UPSTREAM_TRANSPORT_FAILURE_REASON"] == "delayed_connect_error:_Connection_refused"
    assert lines[0]["RESPONSE_CODE_DETAILS"].startswith("upstream_reset_before_response_started{")
    prom = _admin(shop, "/stats/prometheus")
    assert _metric(prom, "envoy_cluster_upstream_cx_connect_fail", "frontend") > 0
    assert 'envoy_cluster_upstream_rq{envoy_response_code="503",envoy_cluster_name="frontend"}' in prom
    assert _metric(prom, "envoy_cluster_membership_healthy", "frontend") == 1  # the ClusterIP still resolves


def test_frontend_service_gone_is_uh_503(shop: Twin) -> None:
    shop.delete("Service", NS, "frontend")
    shop.advance(20)
    lines = _to_frontend(_access(shop, shop.clock.now - 10))
    assert lines and all(p["RESPONSE_FLAGS"] == "UH" and p["RESPONSE_CODE"] == "503" for p in lines)
    loadgen = next(p for p in shop.store.scan("Pod", NS) if p["metadata"]["name"].startswith("load-generator-"))
    stats = json.loads(shop.services.dataplane.http_request(
        None, f"http://{loadgen['status']['podIP']}:8089/stats/requests").body)
    assert stats["fail_ratio"] > 0 and any("503 Server Error: Service Unavailable for url: http://frontend-proxy:8080/"
                                           in e["error"] for e in stats["errors"])
    assert lines[0]["UPSTREAM_HOST"] == "-" and lines[0]["RESPONSE_CODE_DETAILS"] == "no_healthy_upstream"
    prom = _admin(shop, "/stats/prometheus")
    assert _metric(prom, "envoy_cluster_membership_healthy", "frontend") == 0
    assert _metric(prom, "envoy_cluster_upstream_cx_none_healthy", "frontend") > 0
