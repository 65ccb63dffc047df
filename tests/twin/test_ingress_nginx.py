"""ingress-nginx in the twin, seen with the real kubectl: the chart's objects, the Ingress
(`get`, `describe`), the controller's reloads and access log (`logs`), requests from a pod
through the controller's Service (`exec ... curl`: the backend's answer, nginx's 404 and 503
pages), the users' traffic entering through it, and a TLS host whose certificate expires."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sregym.cluster.twin import TwinCluster
from sregym.problems.catalog.hotel_reservation.ingress import HOST, INGRESS, TLS_SECRET
from sregym.problems.registry import PROBLEMS
from sregym.problems.run import ProblemRun
from support.kube import serve_twin

pytestmark = pytest.mark.xdist_group("ingress_nginx")
NS = "hotel-reservation"
CONTROLLER = "ingress-nginx-controller.ingress-nginx"
# ingress-nginx's default log-format-upstream
ACCESS = re.compile(r'^(?P<addr>[\d.]+) - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] "(?P<method>[A-Z]+) '
                    r'(?P<path>\S+) HTTP/1\.1" (?P<status>\d{3}) \d+ "-" "[^"]*" \d+ \d+\.\d{3} '
                    r'\[(?P<upstream>[^\]]*)\] \[\] (?P<upstream_addr>\S+) \S+ \S+ \S+ [0-9a-f]{32}$')


@pytest.fixture(scope="module")
def site() -> tuple[TwinCluster, ProblemRun]:
    """Hotel Reservation with its users entering through ingress-nginx (the misroute problem's
    environment), not yet broken."""
    cluster = TwinCluster.new(3)
    run = ProblemRun(PROBLEMS.get("hotel-reservation/ingress-misroute-v1"), cluster, seed=3, noise="none")
    run.deploy()
    run.advance(30)
    run.record_baseline()  # sets the environment up first
    return cluster, run


def _access(text: str) -> list[dict[str, str]]:
    return [m.groupdict() for line in text.splitlines() if (m := ACCESS.match(line))]


def test_the_chart_objects_and_the_ingress_through_kubectl(site: tuple[TwinCluster, ProblemRun], tmp_path: Path) -> None:
    cluster, _ = site
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        pods = harness.ok("get", "pods", "-n", "ingress-nginx", "-l", "app.kubernetes.io/component=controller")
        assert re.search(r"ingress-nginx-controller-\S+\s+1/1\s+Running", pods)
        assert "k8s.io/ingress-nginx" in harness.ok("get", "ingressclass", "nginx")
        listing = harness.ok("get", "ingress", "-n", NS)
        assert re.search(rf"{INGRESS}\s+nginx\s+{re.escape(HOST)}\s+\S*\s*80\b", listing), listing
        described = harness.ok("describe", "ingress", INGRESS, "-n", NS)
        assert "/recommendations" in described and "frontend:5000" in described
        assert "Scheduled for sync" in described
        image = harness.ok("get", "deploy", "ingress-nginx-controller", "-n", "ingress-nginx", "-o",
                           "jsonpath={.spec.template.spec.containers[0].image}")
        assert image.startswith("registry.k8s.io/ingress-nginx/controller:v1.")
    finally:
        harness.server.stop()


def test_users_go_through_the_controller_and_it_logs_each_request(site: tuple[TwinCluster, ProblemRun],
                                                                   tmp_path: Path) -> None:
    cluster, _ = site
    stats = cluster.twin.services.dataplane.entry_stats(60)
    assert stats.rps > 50 and stats.success_ratio > 0.99
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        logs = harness.ok("logs", "deploy/ingress-nginx-controller", "-n", "ingress-nginx",
                          user="admin")
    finally:
        harness.server.stop()
    assert '"Backend successfully reloaded"' in logs
    assert f'"Found valid IngressClass" ingress="{NS}/{INGRESS}" ingressclass="nginx"' in logs
    lines = _access(logs)
    assert len(lines) > 100
    assert {line["path"] for line in lines} >= {"/hotels", "/recommendations"}
    assert all(line["upstream"] == "hotel-reservation-frontend-5000" and line["status"] == "200" for line in lines)
    frontend_ip = cluster.list("Pod", NS, label_selector="io.kompose.service=frontend")[0]["status"]["podIP"]
    assert {line["upstream_addr"] for line in lines} == {f"{frontend_ip}:5000"}


def _curl(harness, path: str, host: str = HOST) -> str:
    return harness.ok("exec", "-n", NS, "deploy/search", "--", "curl", "-s", "-i", "-H", f"Host: {host}",
                      f"http://{CONTROLLER}{path}", user="admin")


def test_a_request_from_a_pod_is_routed_by_the_rules(site: tuple[TwinCluster, ProblemRun], tmp_path: Path) -> None:
    cluster, _ = site
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        ok = _curl(harness, "/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=38.0235&lon=-122.095")
        assert (ok.startswith("HTTP/1.1 200") and "hotelId" in ok) or "features" in ok, ok
        missing = _curl(harness, "/admin")
        assert missing.startswith("HTTP/1.1 404") and "<center><h1>404 Not Found</h1></center>" in missing
        assert "<hr><center>nginx</center>" in missing
        other_host = _curl(harness, "/hotels", host="elsewhere.example.com")
        assert other_host.startswith("HTTP/1.1 404")
    finally:
        harness.server.stop()


def test_a_changed_rule_reloads_and_a_backend_without_endpoints_is_503(site: tuple[TwinCluster, ProblemRun],
                                                                        tmp_path: Path) -> None:
    cluster, _run = site
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        harness.ok("scale", "deploy/frontend", "-n", NS, "--replicas=0", user="admin")
        harness.advance(40)
        down = _curl(harness, "/hotels")
        assert down.startswith("HTTP/1.1 503") and "503 Service Temporarily Unavailable" in down
        logs = harness.ok("logs", "deploy/ingress-nginx-controller", "-n", "ingress-nginx", "--since=60s",
                          user="admin")
        assert f'Service "{NS}/frontend" does not have any active Endpoint.' in logs
        harness.ok("scale", "deploy/frontend", "-n", NS, "--replicas=1", user="admin")
        harness.ok("patch", "ingress", INGRESS, "-n", NS, "--type=json", "-p",
                   '[{"op":"replace","path":"/spec/rules/0/http/paths/1/path","value":"/recs"}]', user="admin")
        harness.advance(60)
        logs = harness.ok("logs", "deploy/ingress-nginx-controller", "-n", "ingress-nginx", "--since=30s",
                          user="admin")
        statuses = {(line["path"], line["status"], line["upstream"]) for line in _access(logs)}
        assert ("/recommendations", "404", "upstream-default-backend") in statuses
        assert ("/hotels", "200", "hotel-reservation-frontend-5000") in statuses
        events = harness.ok("get", "events", "-n", "ingress-nginx", "--field-selector", "reason=RELOAD")
        assert "NGINX reload triggered due to a change in configuration" in events
    finally:
        harness.server.stop()
    assert cluster.twin.services.dataplane.entry_stats(20).success_ratio < 0.7  # 39 % are recommendations


def test_an_expired_certificate_fails_every_handshake_until_it_is_renewed(tmp_path: Path) -> None:
    cluster = TwinCluster.new(4)
    run = ProblemRun(PROBLEMS.get("hotel-reservation/expired-ingress-tls-v1"), cluster, seed=4, noise="none")
    run.deploy()
    run.advance(30)
    run.record_baseline()
    engine = cluster.twin.services.dataplane
    assert next(iter(engine.workloads.values())).spec.target.startswith("https://")
    assert engine.entry_stats(30).success_ratio > 0.99
    harness = serve_twin(cluster.twin, tmp_path)
    https = ("exec", "-n", NS, "deploy/search", "--", "curl", "-sS", "-i", "-H", f"Host: {HOST}",
             f"https://{CONTROLLER}/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=38.0235&lon=-122.095")
    try:
        assert harness.ok(*https, user="admin").startswith("HTTP/1.1 200")
        harness.call(run.inject)
        harness.advance(60)
        assert engine.entry_stats(30).success_ratio == 0.0  # every client rejects the certificate
        failed = harness.kubectl(*https, user="admin")
        assert failed.returncode == 60, failed
        assert "SSL certificate problem: certificate has expired" in failed.stderr
        served = harness.ok("get", "secret", TLS_SECRET, "-n", NS, "-o", "jsonpath={.data.tls\\.crt}", user="admin")
        quiet = _access(harness.ok("logs", "deploy/ingress-nginx-controller", "-n", "ingress-nginx", "--since=20s",
                                   user="admin"))
        assert quiet == []  # no request got past the handshake
        harness.call(run.apply_gold)
        harness.advance(60)
        assert harness.ok("get", "secret", TLS_SECRET, "-n", NS, "-o", "jsonpath={.data.tls\\.crt}",
                          user="admin") != served
        assert harness.ok(*https, user="admin").startswith("HTTP/1.1 200")
        logs = harness.ok("logs", "deploy/ingress-nginx-controller", "-n", "ingress-nginx", "--since=70s",
                          user="admin")
        assert '"Backend successfully reloaded"' in logs and _access(logs)
    finally:
        harness.server.stop()
    assert engine.entry_stats(30).success_ratio > 0.99
