"""Faults and checks of the Hotel Reservation network problems (Services, probes, DNS)."""

from __future__ import annotations

import pytest

from sregym.apps import get_app
from sregym.cluster.twin import TwinCluster
from sregym.faults.base import make_fault
from sregym.oracles.checks import CheckContext
from sregym.oracles.checks_network import deployment_reaches
from sregym.twin.node.probes import run_probe
from sregym.twin.node.runtime import ContainerInstance
from sregym.twin.node.shell import Listen

NS = "hotel-reservation"


@pytest.fixture(scope="module")
def hr() -> TwinCluster:
    cluster = TwinCluster.new(7)
    app = get_app("hotel-reservation")
    app.push_images(cluster)
    for obj in app.objects():
        cluster.apply(obj)
    cluster.advance(90)
    return cluster


def test_target_port_fault_refuses_and_recovers(hr: TwinCluster) -> None:
    fault = make_fault("set_service_target_port", {"namespace": NS, "name": "geo", "port": 8083, "target_port": 9999})
    before = hr.get("Service", NS, "geo")["spec"]
    state = fault.inject(hr)
    hr.advance(5)
    probe = hr.connect(NS, "geo", 8083)
    assert not probe.ok and probe.error == "refused"
    fault.recover(hr, state)
    hr.advance(5)
    assert hr.get("Service", NS, "geo")["spec"] == before
    assert hr.connect(NS, "geo", 8083).ok


def test_corefile_template_answers_nxdomain_then_recovers(hr: TwinCluster) -> None:
    fault = make_fault("corefile_template", {"names": [f"rate.{NS}.svc.cluster.local"]})
    original = hr.get("ConfigMap", "kube-system", "coredns")["data"]
    state = fault.inject(hr)
    assert "rcode NXDOMAIN" in hr.get("ConfigMap", "kube-system", "coredns")["data"]["Corefile"]
    hr.advance(5)
    assert hr.connect(NS, "rate", 8084).error == "nxdomain"
    assert hr.connect(NS, "geo", 8083).ok  # other names still resolve
    fault.recover(hr, state)
    hr.advance(5)
    assert hr.get("ConfigMap", "kube-system", "coredns")["data"] == original
    assert hr.connect(NS, "rate", 8084).ok


def test_dns_policy_none_breaks_only_that_workload(hr: TwinCluster) -> None:
    ctx = CheckContext(cluster=hr, namespace=NS)
    targets = [["mongodb-profile", 27017]]
    assert deployment_reaches(ctx, deployment="profile", targets=targets)[0]
    fault = make_fault("set_dns_policy", {"namespace": NS, "name": "profile", "dns_policy": "None",
                                          "dns_config": {"nameservers": ["8.8.8.8"]}})
    state = fault.inject(hr)
    hr.advance(60)
    ok, detail = deployment_reaches(ctx, deployment="profile", targets=targets)
    assert not ok and "mongodb-profile" in detail
    assert deployment_reaches(ctx, deployment="rate", targets=[["mongodb-rate", 27017]])[0]
    fault.recover(hr, state)
    hr.advance(60)
    assert deployment_reaches(ctx, deployment="profile", targets=targets)[0]


def test_probe_sees_server_latency() -> None:
    """The load hook: HTTP/gRPC probes time out when the server answers slower than
    timeoutSeconds; a TCP probe (answered by the kernel) does not."""
    instance = ContainerInstance.__new__(ContainerInstance)
    instance.listening = {(5000, "TCP"): Listen(5000, "TCP", http_paths=(), grpc_health=True)}
    container = {"name": "c", "ports": [{"containerPort": 5000}]}
    http = {"httpGet": {"path": "/", "port": 5000}, "timeoutSeconds": 1}
    assert run_probe(http, container, instance, "10.0.0.1", latency_ms=200.0) == (True, "")
    ok, detail = run_probe(http, container, instance, "10.0.0.1", latency_ms=1500.0)
    assert not ok and "context deadline exceeded (Client.Timeout exceeded while awaiting headers)" in detail
    grpc = {"grpc": {"port": 5000}, "timeoutSeconds": 2}
    assert run_probe(grpc, container, instance, "10.0.0.1", latency_ms=1500.0)[0]
    assert run_probe(grpc, container, instance, "10.0.0.1", latency_ms=2500.0) == (
        False, "timeout: health rpc did not complete within 2s")
    tcp = {"tcpSocket": {"port": 5000}, "timeoutSeconds": 1}
    assert run_probe(tcp, container, instance, "10.0.0.1", latency_ms=5000.0)[0]
