"""Connection outcomes through DNS, Service, endpoints and the listening process."""

from __future__ import annotations

import pytest

from sregym.twin.dataplane.synthetic import synthetic_app
from sregym.twin.twin import Twin


@pytest.fixture(scope="module")
def twin() -> Twin:
    twin = Twin(seed=3)
    synthetic_app("conn", layers=(1, 1), rps=10).deploy(twin)
    twin.advance(30)
    return twin


def _gateway(twin: Twin) -> dict:
    return twin.list("pods", "conn", label_selector="app=gateway")[0]


def test_healthy_connect_reaches_a_listening_pod(twin: Twin) -> None:
    result = twin.services.dataplane.connect(_gateway(twin), "svc-1-0", 9000)
    assert result.ok and result.error is None
    assert result.dst_pod["metadata"]["labels"]["app"] == "svc-1-0"
    assert result.target_port == 9000 and result.container == "svc-1-0"


def test_unknown_name_is_nxdomain(twin: Twin) -> None:
    result = twin.services.dataplane.connect(_gateway(twin), "nosuchsvc", 9000)
    assert result.error == "nxdomain"
    assert result.message == "dial tcp: lookup nosuchsvc on 10.96.0.10:53: no such host"


def test_port_not_in_service_times_out(twin: Twin) -> None:
    result = twin.services.dataplane.connect(_gateway(twin), "svc-1-0", 9999, connect_timeout_ms=3000)
    assert result.error == "timeout" and result.latency_ms == 3000
    assert result.message.endswith(":9999: i/o timeout")


def test_http_request_routes_into_the_program(twin: Twin) -> None:
    dp = twin.services.dataplane
    ok = dp.http_request(None, "http://gateway.conn:8080/api")
    assert ok.status == 200 and ok.error is None
    missing = dp.http_request(None, "http://gateway.conn:8080/nope")
    assert missing.status == 404 and missing.body == "404 page not found\n"
    grpc = dp.http_request(_gateway(twin), "http://svc-1-0:9000/")
    assert grpc.error == "http09"  # grpc-go writes its SETTINGS frame first: not an HTTP/1.x status line


def test_wrong_target_port_is_refused_fast() -> None:
    twin = Twin(seed=4)
    synthetic_app("tp", layers=(1, 1), rps=10).deploy(twin)
    twin.advance(20)
    twin.patch("Service", "tp", "svc-1-0", {"spec": {"ports": [{"name": "grpc", "port": 9000, "targetPort": 9001}]}})
    twin.advance(2)
    result = twin.services.dataplane.connect(_pod(twin, "tp"), "svc-1-0", 9000)
    assert result.error == "refused" and result.stage == "process"
    assert result.latency_ms < 5
    assert "connect: connection refused" in result.message


def test_selector_matching_nothing_is_refused_by_kube_proxy() -> None:
    twin = Twin(seed=5)
    synthetic_app("sel", layers=(1, 1), rps=10).deploy(twin)
    twin.advance(20)
    twin.patch("Service", "sel", "svc-1-0", {"spec": {"selector": {"app": "svc-1-O"}}})
    twin.advance(2)
    result = twin.services.dataplane.connect(_pod(twin, "sel"), "svc-1-0", 9000)
    assert result.error == "refused" and result.stage == "service"


def test_coredns_down_makes_lookups_time_out() -> None:
    twin = Twin(seed=6)
    synthetic_app("dns", layers=(1, 1), rps=10).deploy(twin)
    twin.advance(20)
    twin.patch("Deployment", "kube-system", "coredns", {"spec": {"replicas": 0}})
    twin.advance(40)
    result = twin.services.dataplane.connect(_pod(twin, "dns"), "svc-1-0", 9000)
    assert result.error == "timeout" and result.stage == "dns"
    assert "lookup svc-1-0" in result.message and "i/o timeout" in result.message


def _pod(twin: Twin, ns: str) -> dict:
    return twin.list("pods", ns, label_selector="app=gateway")[0]
