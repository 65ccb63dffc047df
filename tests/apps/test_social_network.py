"""Social Network (DeathStarBench) in the twin, through the interfaces an engineer uses: the real
kubectl against the served API, `kubectl exec ... curl` through nginx-thrift, `kubectl logs`, and
the Jaeger query API.

One served twin (seed 7) with the app deployed and settled is shared by the module so the suite
costs one deployment; the one test that breaks something (scaling a service to zero) runs last
and puts it back. Direct twin access is only for deploying and for the load generator's view of
the entry (`entry_stats`), which the agent never sees.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sregym.apps import deploy_app, get_app, list_apps
from sregym.apps.social_network import BASELINE, NAMESPACE, STORES
from sregym.apps.social_network.ports import THRIFT_SERVICES
from sregym.twin import Twin
from sregym.twin.dataplane.loadgen import mix_from_script
from support.kube import KubeHarness, serve_twin

pytestmark = pytest.mark.xdist_group("social_network")

APP = "social-network"
SETTLE_S = 150.0


@pytest.fixture(scope="module")
def sn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHarness]:
    harness = serve_twin(Twin(seed=7), Path(tmp_path_factory.mktemp("sn")), observability=True)
    try:
        harness.call(deploy_app, harness.twin, APP)
        harness.advance(SETTLE_S)
        yield harness
    finally:
        harness.server.stop()


def _json(sn: KubeHarness, *args: str) -> dict[str, Any]:
    return json.loads(sn.ok(*args, "-n", NAMESPACE, "-o", "json"))


def _pod(sn: KubeHarness, service: str) -> str:
    pods = _json(sn, "get", "pods", "-l", f"service={service}")["items"]
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert live, f"no live pod for {service}"
    return str(live[-1]["metadata"]["name"])


def _curl(sn: KubeHarness, *args: str) -> str:
    result = sn.kubectl("exec", "-n", NAMESPACE, _pod(sn, "nginx-thrift"), "--", "curl", "-sS", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


# ============================================================================ workloads
def test_every_workload_is_ready_in_kubectl(sn: KubeHarness) -> None:
    deployments = {d["metadata"]["name"]: d for d in _json(sn, "get", "deployments")["items"]}
    assert set(deployments) == set(BASELINE)
    for name in (*THRIFT_SERVICES, "nginx-thrift", "media-frontend", "jaeger", *STORES):
        status = deployments[name]["status"]
        assert status.get("readyReplicas") == 1, (name, status)
    pods = _json(sn, "get", "pods")["items"]
    assert len(pods) == len(BASELINE)
    assert all(c["ready"] and c["restartCount"] == 0 for p in pods for c in p["status"]["containerStatuses"])
    services = {s["metadata"]["name"]: s["spec"]["ports"] for s in _json(sn, "get", "services")["items"]}
    assert {p["port"] for p in services["compose-post-service"]} == {9090}
    assert [(p["port"], p["targetPort"]) for p in services["media-frontend"]] == [(8081, 8080)]
    assert {p["port"] for p in services["jaeger"]} >= {6831, 16686}


def test_images_commands_and_config_mounts_follow_the_chart(sn: KubeHarness) -> None:
    deployment = _json(sn, "get", "deployment", "user-service")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "docker.io/deathstarbench/social-network-microservices:latest"
    assert container["command"] == ["UserService"]
    assert {m["mountPath"] for m in container["volumeMounts"]} == {
        "/social-network-microservices/config/service-config.json",
        "/social-network-microservices/config/jaeger-config.yml"}
    nginx = _json(sn, "get", "deployment", "nginx-thrift")["spec"]["template"]["spec"]["containers"][0]
    assert nginx["image"] == "docker.io/yg397/openresty-thrift:xenial"
    assert {"name": "fqdn_suffix", "value": ".social-network.svc.cluster.local"} in nginx["env"]
    redis = _json(sn, "get", "deployment", "home-timeline-redis")["spec"]["template"]["spec"]["containers"][0]
    assert redis["image"] == "docker.io/library/redis:6.2.4"
    logs = sn.ok("logs", "-n", NAMESPACE, _pod(sn, "home-timeline-redis"))
    assert "Configuration loaded" in logs and "Ready to accept connections" in logs


def test_service_config_json_has_the_real_keys(sn: KubeHarness) -> None:
    data = _json(sn, "get", "configmap", "compose-post-service")["data"]
    config = json.loads(data["service-config.json"])
    for service in THRIFT_SERVICES:
        assert config[service]["addr"] == service and config[service]["port"] == 9090
    for store in STORES:
        assert config[store]["addr"] == store
    assert config["post-storage-memcached"]["port"] == 11211
    assert config["home-timeline-redis"] == {"addr": "home-timeline-redis", "port": 6379, "connections": 512,
                                             "timeout_ms": 10000, "keepalive_ms": 10000, "use_cluster": 0,
                                             "use_replica": 0}
    assert "localAgentHostPort: \"jaeger:6831\"" in data["jaeger-config.yml"]


# ============================================================================ traffic
def test_wrk2_mixed_workload_meets_the_slo_at_nginx_thrift(sn: KubeHarness) -> None:
    spec = get_app(APP)
    assert spec.load is not None and spec.slo.entry_service == "nginx-thrift"
    script = spec.load.script(spec.load)  # type: ignore[misc]
    mix = {m.operation: (m.method, round(m.weight, 6)) for m in mix_from_script(script)}
    assert mix == {"/wrk2-api/home-timeline/read": ("GET", 0.6), "/wrk2-api/user-timeline/read": ("GET", 0.3),
                   "/wrk2-api/post/compose": ("POST", 0.1)}
    stats = sn.call(lambda: sn.twin.services.dataplane.entry_stats(30.0, APP))
    assert stats.rps == pytest.approx(spec.load.rate, rel=0.05)
    assert stats.success_ratio >= spec.slo.success_ratio
    assert stats.p95_ms <= spec.slo.p95_latency_ms


def test_curl_through_nginx_thrift_composes_and_reads(sn: KubeHarness) -> None:
    body = "username=username_1&user_id=1&text=hello%20%40username_2&media_ids=%5B%5D&media_types=%5B%5D&post_type=0"
    composed = _curl(sn, "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-d", body,
                     "http://nginx-thrift:8080/wrk2-api/post/compose")
    assert composed == "200"
    read = _curl(sn, "-o", "/dev/null", "-w", "%{http_code}",
                 "http://nginx-thrift:8080/wrk2-api/home-timeline/read?user_id=1&start=0&stop=10")
    assert read == "200"


def test_jaeger_shows_the_compose_post_fan_out(sn: KubeHarness) -> None:
    base = sn.observability["jaeger"]
    headers = {"Authorization": f"Bearer {sn.token('agent')}"}
    services = httpx.get(f"{base}/api/services", headers=headers, timeout=30).json()["data"]
    assert {"nginx-web-server", "compose-post-service", "home-timeline-service", "social-graph-service"} <= \
        set(services)
    traces = httpx.get(f"{base}/api/traces", headers=headers, timeout=30,
                       params={"service": "compose-post-service", "operation": "ComposePost", "limit": "5"}).json()
    assert traces["data"], "no compose-post trace"
    trace = traces["data"][0]
    names = {(trace["processes"][s["processID"]]["serviceName"], s["operationName"]) for s in trace["spans"]}
    assert {("compose-post-service", op) for op in (
        "ComposePost", "ComposeUniqueId", "ComposeText", "ComposeMedia", "ComposeCreatorWithUserId", "StorePost",
        "WriteUserTimeline", "WriteHomeTimeline")} <= names
    assert {("text-service", "ComposeUrls"), ("text-service", "ComposeUserMentions"),
            ("home-timeline-service", "GetFollowers"), ("social-graph-service", "GetFollowers"),
            ("nginx-web-server", "HTTP POST /wrk2-api/post/compose")} <= names
    reads = httpx.get(f"{base}/api/traces", headers=headers, timeout=30,
                      params={"service": "home-timeline-service", "operation": "ReadHomeTimeline",
                              "limit": "1"}).json()["data"]
    assert reads, "no read-home-timeline trace"
    read_names = {(reads[0]["processes"][s["processID"]]["serviceName"], s["operationName"])
                  for s in reads[0]["spans"]}
    assert {("nginx-web-server", "HTTP GET /wrk2-api/home-timeline/read"), ("home-timeline-service", "ReadPosts"),
            ("post-storage-service", "ReadPosts")} <= read_names


def test_the_app_is_in_the_catalogue_for_twin_up() -> None:
    # `sregym twin up --app` accepts exactly the names of list_apps() and calls deploy_app.
    assert APP in list_apps()
    spec = get_app(APP)
    assert spec.namespace == NAMESPACE and spec.entry == ("nginx-thrift", 8080)
    assert "nginx-thrift" in spec.description and "service-config.json" in spec.description


# ============================================================================ failure (last)
def test_a_missing_thrift_peer_shows_as_ttransportexception_in_the_callers_logs(sn: KubeHarness) -> None:
    sn.ok("scale", "deployment", "user-service", "--replicas=0", "-n", NAMESPACE, user="admin")
    try:
        sn.advance(30)
        logs = sn.ok("logs", "-n", NAMESPACE, _pod(sn, "compose-post-service"), "--since=30s")
        assert "<error>: (ComposePostHandler.h:125:ComposePost) ComposeCreatorWithUserId to user-service failed: " \
               "TTransportException: TSocket::open() connect() <Host: user-service Port: 9090>: Connection refused" \
            in logs
        nginx = sn.ok("logs", "-n", NAMESPACE, _pod(sn, "nginx-thrift"), "--since=30s")
        assert "[error] 7#7: [lua] /wrk2-api/post/compose: ComposePost failure: ServiceException: TTransportException: " \
               "TSocket::open() connect() <Host: user-service Port: 9090>: Connection refused" in nginx
        stats = sn.call(lambda: sn.twin.services.dataplane.entry_stats(20.0, APP))
        assert 0.85 < stats.success_ratio < 0.95  # compose-post (10 %) fails, the reads do not
    finally:
        sn.ok("scale", "deployment", "user-service", "--replicas=1", "-n", NAMESPACE, user="admin")
        sn.advance(20)
