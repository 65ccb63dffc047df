"""Hotel Reservation through the wire: the real kubectl, `kubectl exec` userland, Chaos Mesh
visibility and the Prometheus API against a served twin running the app.

Every check goes through an interface an on-call engineer (or a fault injector) would use on a
real cluster: faults are `kubectl` writes by the admin credential, observations are
`kubectl exec/logs/get` by the agent credential and HTTP calls to the Prometheus API. Direct twin
access (`hr.call`) is used only to deploy, to install Chaos Mesh, and to read the data plane's
entry statistics (the load generator's view, which the agent never sees).

Tests that need request traffic wait for the app's load generator (`entry_stats(...).rps > 0`
after deploy); without it they fail with a message that says so.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sregym.apps import deploy_app, get_app
from sregym.twin import Twin
from sregym.twin.api.kubeconfig import make_tokens, token_for, write_kubeconfig
from sregym.twin.api.serve import TwinServer
from sregym.twin.node.images import ImageSpec, catalogue_of

# The API harness lives in tests/twin/api/conftest.py; test directories are not packages.
_spec = importlib.util.spec_from_file_location(
    "sregym_api_conftest_hr_wire", Path(__file__).parents[1] / "twin" / "api" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_api)
KubeHarness = _api.KubeHarness

NS = "hotel-reservation"
APP = "hotel-reservation"
FRONTEND_CONTAINER = "hotel-reserv-frontend"


class HrHarness(KubeHarness):  # type: ignore[misc, valid-type]
    """A served twin (Kubernetes API + Prometheus API, manual clock) plus HR-specific helpers."""

    def __init__(self, *args: Any, prometheus_url: str) -> None:
        super().__init__(*args)
        self.prometheus_url = prometheus_url

    # ---------------------------------------------------------------- cluster views
    def pod(self, service: str, *, user: str = "agent") -> dict[str, Any]:
        """The live (not terminating) pod of an HR service, as the agent lists it."""
        items = json.loads(self.ok("get", "pods", "-n", NS, "-l", f"io.kompose.service={service}",
                                   "-o", "json", user=user))["items"]
        live = [p for p in items if not p["metadata"].get("deletionTimestamp")]
        assert live, f"no live pod for {service}"
        return sorted(live, key=lambda p: p["metadata"]["creationTimestamp"])[-1]

    def exec_frontend(self, *cmd: str) -> Any:
        name = self.pod("frontend")["metadata"]["name"]
        return self.kubectl("exec", "-n", NS, name, "-c", FRONTEND_CONTAINER, "--", *cmd)

    def admin_apply(self, manifest: str | dict[str, Any]) -> str:
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        return self.ok("apply", "-f", "-", user="admin", input=text)

    # ---------------------------------------------------------------- traffic
    def entry_rps(self, window_s: float = 30.0) -> float:
        return float(self.call(lambda: self.twin.services.dataplane.entry_stats(window_s).rps))

    def wait_for_traffic(self, budget_s: float = 120.0) -> None:
        """Advance until the load generator drives the frontend (it starts with the app)."""
        waited = 0.0
        while self.entry_rps() <= 0 and waited < budget_s:
            self.advance(10)
            waited += 10
        assert self.entry_rps() > 0, (
            "Hotel Reservation gets no traffic: the wrk2 load generator is not wired into the data "
            f"plane (entry_stats(30).rps == 0 after {budget_s:.0f} s)")

    # ---------------------------------------------------------------- Prometheus API
    def prom(self, path: str, *, user: str = "agent", **params: str) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token_for(self.tokens, user)}"}
        response = httpx.get(self.prometheus_url + path, params=params, headers=headers, timeout=30)
        body = response.json()
        assert response.status_code == 200 and body["status"] == "success", body
        return body["data"]

    def query(self, expr: str, *, user: str = "agent") -> list[dict[str, Any]]:
        data = self.prom("/api/v1/query", user=user, query=expr)
        assert data["resultType"] == "vector", data
        return data["result"]


@pytest.fixture
def hr(tmp_path: Path) -> Iterator[HrHarness]:
    """A fresh twin (seed 7) served like `sregym twin up` in manual clock mode, HR not yet deployed."""
    twin = Twin(seed=7)
    tokens = make_tokens()
    server = TwinServer(twin, tokens=tokens, port=0, speed=0, shutdown_grace=0.2,
                        observability_ports={"prometheus": 0}).start_in_thread()
    assert server.tls is not None
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url, tokens, ca_pem=server.tls.ca_pem)
    harness = HrHarness(twin, server, kubeconfig, tmp_path,
                        prometheus_url=server.observability_urls()["prometheus"])
    try:
        yield harness
    finally:
        server.stop()


def _with_debug_tools(twin: Twin) -> None:
    """The stock Hotel Reservation image (golang:1.21, bookworm) has curl but no nslookup or ping;
    this twin's build of it adds them (`apt-get install dnsutils iputils-ping`), as a team would to
    debug from inside the frontend."""
    catalogue_of(twin).register(ImageSpec(repository="docker.io/yinfangchen/hotelreservation", tags=("latest",),
                                          extras={"add_binaries": ["nslookup", "dig", "ping"]}))
    # mongo:4.4 ships the legacy `mongo` shell; the team's build adds mongosh next to it.
    catalogue_of(twin).register(ImageSpec(repository="docker.io/library/mongo", tags=("4.4.6",),
                                          extras={"add_binaries": ["mongosh"]}))


def _deploy(hr: HrHarness, settle_s: float = 90) -> None:
    hr.call(deploy_app, hr.twin, APP)
    hr.call(_with_debug_tools, hr.twin)
    hr.advance(settle_s)


# ====================================================================== exec: curl / nslookup

DENY_GEO_INGRESS = """
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-geo-ingress, namespace: hotel-reservation}
spec:
  podSelector: {matchLabels: {io.kompose.service: geo}}
  policyTypes: [Ingress]
"""


def _assert_resolves(hr: HrHarness, cluster_ip: str) -> None:
    result = hr.exec_frontend("nslookup", "geo")
    assert result.returncode == 0, result.stderr
    assert "Server:\t\t10.96.0.10" in result.stdout
    assert "Name:\tgeo.hotel-reservation.svc.cluster.local" in result.stdout
    assert f"Address: {cluster_ip}" in result.stdout


def _assert_geo_answers(hr: HrHarness) -> None:
    # geo speaks gRPC (HTTP/2 only): grpc-go writes its SETTINGS frame as soon as a connection
    # opens, then hangs up on the HTTP/1.1 request; curl reads binary where a status line belongs.
    result = hr.exec_frontend("curl", "-sS", "--connect-timeout", "3", "http://geo:8083/")
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "curl: (1) Received HTTP/0.9 when not allowed" in result.stderr
    probe = hr.exec_frontend("nc", "-zv", "geo", "8083")
    assert probe.returncode == 0 and "succeeded!" in probe.stderr, probe.stderr


def test_curl_and_nslookup_from_frontend_reflect_the_fault_state(hr: HrHarness) -> None:
    # Deploy the way a user would: the app's images in this twin's registry, then its manifests
    # through `kubectl apply`.
    hr.call(get_app(APP).push_images, hr.twin)
    hr.call(_with_debug_tools, hr.twin)
    applied = hr.ok("apply", "-f", "-", user="admin", input=get_app(APP).manifests())
    assert "deployment.apps/geo created" in applied
    hr.advance(90)
    cluster_ip = hr.ok("get", "svc", "geo", "-n", NS, "-o", "jsonpath={.spec.clusterIP}")
    assert re.fullmatch(r"10\.\d+\.\d+\.\d+", cluster_ip)

    # Healthy.
    _assert_resolves(hr, cluster_ip)
    _assert_geo_answers(hr)

    # Wrong targetPort: endpoints stay, every connection is refused fast; DNS is unaffected.
    hr.ok("patch", "svc", "geo", "-n", NS, "--type", "json", "-p",
          '[{"op": "replace", "path": "/spec/ports/0/targetPort", "value": 9999}]', user="admin")
    hr.advance(5)
    endpoints = hr.ok("get", "endpoints", "geo", "-n", NS, "-o", "jsonpath={.subsets[0].ports[0].port}")
    assert endpoints == "9999"
    refused = hr.exec_frontend("curl", "-sS", "--connect-timeout", "3", "http://geo:8083/")
    assert refused.returncode == 7
    assert re.search(r"curl: \(7\) Failed to connect to geo port 8083 after \d ms: Couldn't connect to server",
                     refused.stderr), refused.stderr
    nc = hr.exec_frontend("nc", "-zv", "geo", "8083")
    assert nc.returncode == 1 and "Connection refused" in nc.stderr, nc.stderr
    _assert_resolves(hr, cluster_ip)
    hr.ok("patch", "svc", "geo", "-n", NS, "--type", "json", "-p",
          '[{"op": "replace", "path": "/spec/ports/0/targetPort", "value": 8083}]', user="admin")
    hr.advance(5)
    _assert_geo_answers(hr)

    # NetworkPolicy denying ingress to geo: SYNs are dropped, the client times out.
    hr.admin_apply(DENY_GEO_INGRESS)
    hr.advance(5)
    timed_out = hr.exec_frontend("curl", "-sS", "--connect-timeout", "3", "http://geo:8083/")
    assert timed_out.returncode == 28, (timed_out.returncode, timed_out.stderr)
    assert "curl: (28) Failed to connect to geo port 8083 after 3001 ms: Timeout was reached" in timed_out.stderr
    _assert_resolves(hr, cluster_ip)
    hr.ok("delete", "networkpolicy", "deny-geo-ingress", "-n", NS, user="admin")
    hr.advance(5)
    _assert_geo_answers(hr)

    # CoreDNS scaled to zero: every lookup times out, cluster-wide.
    hr.ok("scale", "deployment", "coredns", "-n", "kube-system", "--replicas=0", user="admin")
    hr.advance(40)
    assert hr.ok("get", "endpoints", "kube-dns", "-n", "kube-system", "-o", "jsonpath={.subsets}") == ""
    lookup = hr.exec_frontend("nslookup", "geo")
    assert lookup.returncode == 1
    assert ";; connection timed out; no servers could be reached" in lookup.stdout
    unresolved = hr.exec_frontend("curl", "-sS", "-m", "5", "http://geo:8083/")
    assert unresolved.returncode == 28
    assert "curl: (28) Resolving timed out after 5000 milliseconds" in unresolved.stderr
    hr.ok("scale", "deployment", "coredns", "-n", "kube-system", "--replicas=2", user="admin")
    hr.advance(40)
    _assert_resolves(hr, cluster_ip)
    _assert_geo_answers(hr)


# ====================================================================== exec: mongosh

def _span_rate(hr: HrHarness, service: str, status: str) -> float:
    expr = (f'sum(rate(traces_span_metrics_calls_total{{service_name="{service}",'
            f'span_kind="SPAN_KIND_SERVER",status_code="{status}"}}[1m]))')
    result = hr.query(expr)
    return float(result[0]["value"][1]) if result else 0.0


def test_revoking_the_geo_role_with_mongosh_makes_geo_fail(hr: HrHarness) -> None:
    _deploy(hr, 60)
    hr.wait_for_traffic()
    hr.advance(90)
    healthy = hr.call(lambda: hr.twin.services.dataplane.entry_stats(30))
    assert healthy.success_ratio >= 0.995
    geo_pod = hr.pod("geo")["metadata"]["name"]
    assert _span_rate(hr, "geo", "STATUS_CODE_ERROR") == 0.0
    assert _span_rate(hr, "geo", "STATUS_CODE_UNSET") > 0
    assert "not authorized" not in hr.ok("logs", "-n", NS, geo_pod)

    mongo_pod = hr.pod("mongodb-geo")["metadata"]["name"]
    roles = hr.kubectl("exec", "-n", NS, mongo_pod, "--", "mongosh", "admin", "-u", "root", "-p", "root",
                       "--quiet", "--eval", "db.getUser('admin').roles")
    assert roles.returncode == 0 and "geo-db" in roles.stdout, roles.stdout + roles.stderr
    revoke = hr.kubectl("exec", "-n", NS, mongo_pod, "--", "mongosh", "admin", "-u", "root", "-p", "root",
                        "--quiet", "--eval", "db.revokeRolesFromUser('admin', [{role: 'readWrite', db: 'geo-db'}])")
    assert revoke.returncode == 0 and revoke.stdout.strip() == "{ ok: 1 }", revoke.stdout + revoke.stderr
    hr.advance(90)

    # Nothing restarted: the running geo process now fails every query it makes.
    assert hr.pod("geo")["metadata"]["name"] == geo_pod
    logs = hr.ok("logs", "-n", NS, geo_pod, "--tail", "50")
    assert "not authorized on geo-db to execute command" in logs
    assert _span_rate(hr, "geo", "STATUS_CODE_ERROR") > 0
    assert _span_rate(hr, "geo", "STATUS_CODE_UNSET") == 0.0
    # ... and the failure shows at the caller (search) and the entry point.
    assert _span_rate(hr, "search", "STATUS_CODE_ERROR") > 0
    stats = hr.call(lambda: hr.twin.services.dataplane.entry_stats(30))
    assert stats.success_ratio < 0.9


# ====================================================================== chaos visibility

GEO_DELAY = {
    "apiVersion": "chaos-mesh.org/v1alpha1", "kind": "NetworkChaos",
    "metadata": {"name": "geo-delay", "namespace": "chaos-mesh"},
    "spec": {"action": "delay", "mode": "all",
             "selector": {"namespaces": [NS], "labelSelectors": {"io.kompose.service": "geo"}},
             "delay": {"latency": "200ms", "jitter": "0ms"}},
}


def _connect_seconds(hr: HrHarness) -> float:
    result = hr.exec_frontend("curl", "-sS", "-o", "/dev/null", "-w", "%{time_connect}\n", "http://geo:8083/")
    return float(result.stdout.strip())


def test_network_chaos_on_geo_acts_but_is_invisible_to_the_agent(hr: HrHarness) -> None:
    from sregym.twin.chaos import install_chaos_mesh

    hr.call(install_chaos_mesh, hr.twin)
    _deploy(hr)
    assert _connect_seconds(hr) < 0.01
    hr.admin_apply(GEO_DELAY)
    hr.advance(5)
    # The experiment runs (admin view) and its effect is what the agent observes.
    chaos = json.loads(hr.ok("get", "networkchaos", "geo-delay", "-n", "chaos-mesh", "-o", "json", user="admin"))
    assert chaos["status"]["experiment"]["desiredPhase"] == "Run"
    assert 0.2 <= _connect_seconds(hr) < 0.25

    # The agent credential sees Chaos Mesh's kinds (an add-on every problem shows) but not the
    # benchmark's experiment, the hidden namespace or its pods.
    listed = hr.kubectl("get", "networkchaos", "-A")
    assert listed.returncode == 0 and "geo-delay" not in listed.stdout + listed.stderr
    assert listed.stderr == "No resources found\n"
    assert "chaos-mesh.org" in hr.ok("api-resources")
    pods = hr.ok("get", "pods", "-A")
    assert "chaos" not in pods and "wrk2" not in pods and "sregym-system" not in pods
    assert "hotel-reservation" in pods
    namespaces = hr.ok("get", "ns", "-o", "name")
    assert "namespace/chaos-mesh" not in namespaces and "namespace/sregym-system" not in namespaces
    hidden = hr.kubectl("get", "pods", "-n", "chaos-mesh")
    assert hidden.returncode == 0 and "chaos-controller-manager" not in hidden.stdout
    assert hidden.stderr == "No resources found in chaos-mesh namespace.\n"
    events = hr.ok("get", "events", "-A")
    assert "geo-delay" not in events and "chaos-mesh" not in events
    # Nothing on geo itself betrays the injection.
    geo = hr.ok("get", "pod", hr.pod("geo")["metadata"]["name"], "-n", NS, "-o", "yaml")
    assert "chaos" not in geo.lower()

    # Deleting the CR (admin) ends the experiment. Chaos Mesh holds it with a finalizer until the
    # effect is recovered, which needs the (manual) clock to move: do not wait in kubectl.
    hr.ok("delete", "networkchaos", "geo-delay", "-n", "chaos-mesh", "--wait=false", user="admin")
    hr.advance(5)
    assert _connect_seconds(hr) < 0.01


def test_ping_rtt_includes_the_network_chaos_delay(hr: HrHarness) -> None:
    """netem adds the full delay (jitter 0) to every reply geo sends: no RTT may be below it."""
    from sregym.twin.chaos import install_chaos_mesh

    hr.call(install_chaos_mesh, hr.twin)
    _deploy(hr)
    hr.admin_apply(GEO_DELAY)
    hr.advance(5)
    geo_ip = hr.pod("geo")["status"]["podIP"]
    result = hr.exec_frontend("ping", "-c", "3", geo_ip)
    assert result.returncode == 0, result.stderr
    rtts = [float(m) for m in re.findall(r"time=([\d.]+) ms", result.stdout)]
    assert len(rtts) == 3
    assert min(rtts) >= 200.0, result.stdout


# ====================================================================== alerts through the API

def _crash_alerts(hr: HrHarness) -> list[dict[str, Any]]:
    return [a for a in hr.prom("/api/v1/alerts")["alerts"] if a["labels"]["alertname"] == "KubePodCrashLooping"]


def test_crashlooping_geo_fires_kube_pod_crash_looping_and_resolves_after_the_fix(hr: HrHarness) -> None:
    _deploy(hr, 60)
    assert _crash_alerts(hr) == []
    # The fault: a typo in geo's command (the binary does not exist in the image).
    hr.ok("patch", "deployment", "geo", "-n", NS, "--type", "json", "-p",
          '[{"op": "replace", "path": "/spec/template/spec/containers/0/command", "value": ["geo-server"]}]',
          user="admin")
    states: list[str] = []
    for _ in range(30):
        hr.advance(15)
        current = [a["state"] for a in _crash_alerts(hr)]
        states.extend(s for s in current if not states or states[-1] != s)
        if "firing" in current:
            break
    assert states[:2] == ["pending", "firing"], states

    (alert,) = _crash_alerts(hr)
    crashing = [p for p in json.loads(hr.ok("get", "pods", "-n", NS, "-l", "io.kompose.service=geo",
                                            "-o", "json"))["items"]
                if p["status"]["containerStatuses"][0]["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff"]
    assert len(crashing) == 1
    labels = alert["labels"]
    assert labels["namespace"] == NS and labels["pod"] == crashing[0]["metadata"]["name"]
    assert labels["container"] == "hotel-reserv-geo" and labels["severity"] == "warning"
    assert labels["job"] == "kube-state-metrics" and labels["reason"] == "CrashLoopBackOff"
    assert 'reason: "CrashLoopBackOff"' in alert["annotations"]["description"]
    last = crashing[0]["status"]["containerStatuses"][0]["lastState"]["terminated"]
    assert last["reason"] == "StartError" and 'exec: "geo-server": executable file not found' in last["message"]
    # The same alert as a series, and in the rules endpoint.
    series = hr.query('ALERTS{alertname="KubePodCrashLooping", alertstate="firing"}')
    assert [s["metric"]["pod"] for s in series] == [labels["pod"]]
    rules = hr.prom("/api/v1/rules", type="alert")
    rule = next(r for g in rules["groups"] for r in g["rules"] if r["name"] == "KubePodCrashLooping")
    assert rule["state"] == "firing"

    # The fix, as the agent would make it: roll back. The alert resolves.
    hr.ok("rollout", "undo", "deployment/geo", "-n", NS)
    for _ in range(40):
        hr.advance(15)
        if not _crash_alerts(hr):
            break
    assert _crash_alerts(hr) == []
    assert hr.query('ALERTS{alertname="KubePodCrashLooping"}') == []
    geo = hr.pod("geo")
    assert geo["spec"]["containers"][0]["command"] == ["geo"]
    assert geo["status"]["containerStatuses"][0]["ready"] is True
