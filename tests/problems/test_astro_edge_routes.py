"""The edge route-timeout problem (`edge_routes.py`) on a served twin: real `kubectl
port-forward` to frontend-proxy, real HTTP through it, the access log through Loki's HTTP API.

After injection a checkout through the proxy gets Envoy's own 504 `upstream request timeout`,
browsing still answers 200, the access log records `504 UT` on the frontend cluster and the
admin stats count `upstream_rq_timeout`; the checkout SLO check fails (noop). A ConfigMap without
the short timeout changes nothing until frontend-proxy restarts (Envoy reads its file at start);
after `kubectl rollout restart` checkouts succeed again. The default template enforces no such
timeout. The check protocol (gold passes, noop fails, same seed same run) runs in the
registry-wide batch."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from tests.support.kube import KUBECTL, KubeHarness, serve_twin
from tests.support.problem_runs import deployed

from sregym.apps.astronomy_shop.programs import PREFIX
from sregym.problems.catalog.astronomy_shop.edge_filter import image_template
from sregym.problems.catalog.astronomy_shop.edge_routes import CONFIGMAP, SHORT_TIMEOUT, template_with_timeout
from sregym.problems.run import ProblemRun
from sregym.twin.api.kubeconfig import context_name
from sregym.twin.dataplane.envoy import ENVOY_CLIENT, LOADED_CONFIG, route_dependency
from sregym.twin.dataplane.envoy_bootstrap import envsubst, load_bootstrap
from sregym.twin.dataplane.errortexts import deadline_error
from sregym.twin.dataplane.programs import DependencyConfig
from sregym.twin.dataplane.spec import Call, Operation

PID = "astronomy-shop/edge-route-timeout-v1"
NS = "astronomy-shop"
ORDER = json.dumps({"userId": "u-1", "email": "someone@example.com", "address": {
    "streetAddress": "1600 Amphitheatre Parkway", "city": "Mountain View", "state": "CA", "country": "US",
    "zipCode": "94043"}, "userCurrency": "USD", "creditCard": {
    "creditCardNumber": "4432-8015-6152-0454", "creditCardCvv": 672, "creditCardExpirationYear": 2030,
    "creditCardExpirationMonth": 1}})
FORWARDING = re.compile(r"^Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)$")


@pytest.fixture(scope="module")
def incident() -> ProblemRun:
    _, run = deployed(PID, seed=5)
    run.inject()
    run.advance(run.problem.settle_s)
    return run


@pytest.fixture(scope="module")
def served(incident: ProblemRun, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeHarness]:
    harness = serve_twin(incident.cluster.twin, Path(tmp_path_factory.mktemp("edge-routes")), observability=True)
    try:
        yield harness
    finally:
        harness.server.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _forward(harness: KubeHarness) -> Iterator[tuple[int, int]]:
    """`kubectl port-forward svc/frontend-proxy` of the listener (8080) and the admin port (10000)."""
    env = {**os.environ, "KUBECONFIG": str(harness.kubeconfig), "HOME": str(harness.cache_dir)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    local, admin = _free_port(), _free_port()
    proc = subprocess.Popen([KUBECTL, "--context", context_name("agent"), "-n", NS, "port-forward",
                             "deploy/frontend-proxy", f"{local}:8080", f"{admin}:10000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        seen: set[int] = set()
        deadline = time.monotonic() + 30
        while len(seen) < 2 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            found = FORWARDING.match(line.strip())
            if found:
                seen.add(int(found.group(2)))
        assert seen == {8080, 10000}, proc.stderr.read() if proc.poll() is not None else "no forwarding"
        yield local, admin
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def _request(port: int, path: str, body: str | None = None) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method="POST" if body else "GET",
                                     data=body.encode() if body else None,
                                     headers={"Content-Type": "application/json"} if body else {})
    try:
        with urllib.request.urlopen(request, timeout=20) as resp:
            return resp.status, resp.read().decode(), {k.lower(): v for k, v in resp.headers.items()}
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), {k.lower(): v for k, v in err.headers.items()}


def _access_lines(harness: KubeHarness, text: str, since_s: float = 120.0) -> list[str]:
    """frontend-proxy's access-log records of the last `since_s` seconds that contain `text` (LogQL;
    the served query APIs take times on the client's clock)."""
    now = time.time()
    query = urllib.parse.urlencode({"query": f'{{service_name="frontend-proxy"}} |= `{text}`',
                                    "start": str(int((now - since_s) * 1e9)), "end": str(int((now + 1) * 1e9)),
                                    "limit": "5000"})
    request = urllib.request.Request(f"{harness.observability['loki']}/loki/api/v1/query_range?{query}",
                                     headers={"Authorization": f"Bearer {harness.token('agent')}"})
    with urllib.request.urlopen(request, timeout=20) as resp:
        streams = json.loads(resp.read())["data"]["result"]
    return [line for stream in streams for _ts, line in stream["values"]]


def _rq_timeouts(admin_port: int) -> float:
    status, text, _ = _request(admin_port, "/stats/prometheus")
    assert status == 200
    found = re.search(r'^envoy_cluster_upstream_rq_timeout\{envoy_cluster_name="frontend"\} (\S+)$', text, re.M)
    assert found, "no upstream_rq_timeout counter for the frontend cluster"
    return float(found.group(1))


def test_checkout_gets_envoys_504_while_browsing_works(incident: ProblemRun, served: KubeHarness) -> None:
    with _forward(served) as (port, admin):
        status, body, headers = _request(port, "/api/checkout", ORDER)
        assert (status, body) == (504, "upstream request timeout")
        assert headers["server"] == "envoy"
        for path in ("/api/products", "/api/cart", "/api/products/OLJCESPC7Z"):
            status, _, headers = _request(port, path)
            assert status == 200, path
            assert headers["server"] == "envoy"
        before = _rq_timeouts(admin)
        assert before > 0
        served.advance(30)
        assert _rq_timeouts(admin) > before  # still rising
    # the last minute (the proxy restarted onto the mounted template before it)
    flagged = _access_lines(served, '"POST /api/checkout HTTP/1.1" 504 UT upstream_response_timeout', since_s=60)
    assert flagged and all(" frontend " in line for line in flagged)
    assert not _access_lines(served, '"POST /api/checkout HTTP/1.1" 200 ', since_s=60)
    assert _access_lines(served, '"GET /api/products HTTP/1.1" 200 - via_upstream', since_s=60)
    assert [r.name for r in incident.must_fix_now() if not r.passed] == ["service_error_free"]


def test_the_fix_lands_only_with_a_restart(incident: ProblemRun, served: KubeHarness) -> None:
    text = json.loads(served.ok("get", "configmap", CONFIGMAP, "-n", NS, "-o", "json"))["data"]["envoy.tmpl.yaml"]
    assert f"route: {{ cluster: frontend, timeout: {SHORT_TIMEOUT} }}" in text
    fixed = text.replace(f", timeout: {SHORT_TIMEOUT}", "")
    assert fixed == image_template()
    served.ok("patch", "configmap", CONFIGMAP, "-n", NS, "--type", "merge",
              "-p", json.dumps({"data": {"envoy.tmpl.yaml": fixed}}))
    served.advance(70)
    assert not all(r.passed for r in incident.must_fix_now())  # the running Envoy keeps its routes
    assert _access_lines(served, " 504 UT ", since_s=30)
    served.ok("rollout", "restart", "deployment/frontend-proxy", "-n", NS)
    served.advance(30)
    served.ok("rollout", "status", "deployment/frontend-proxy", "-n", NS, "--timeout=30s")
    with _forward(served) as (port, _admin):
        status, body, _ = _request(port, "/api/checkout", ORDER)
        assert status == 200, body
        assert json.loads(body)["shippingAddress"]["zipCode"] == 94043  # the POST body went through
    served.advance(70)
    assert all(r.passed for r in incident.must_fix_now())
    assert not _access_lines(served, " 504 UT ", since_s=50)
    assert _access_lines(served, '"POST /api/checkout HTTP/1.1" 200 - via_upstream', since_s=50)


def _proxy_with(template: str) -> SimpleNamespace:
    """A frontend-proxy process that loaded `template` at start (what `start_envoy` keeps)."""
    config = load_bootstrap(envsubst(template, {"ENVOY_PORT": "8080", "FRONTEND_HOST": "frontend",
                                                "FRONTEND_PORT": "8080"}))
    return SimpleNamespace(inst=SimpleNamespace(spec=SimpleNamespace(name=PREFIX + "frontend-proxy"),
                                                ctx=SimpleNamespace(extras={LOADED_CONFIG: config})))


def test_only_a_shorter_route_timeout_bounds_the_upstream_call() -> None:
    frontend = DependencyConfig(name="frontend", kind="http", host="frontend", port=8080, timeout_ms=15_000.0,
                                retries=0, backoff_ms=0.0)
    flagd = replace(frontend, name="flagd", kind="grpc", timeout_ms=5_000.0)
    checkout = Operation(name="/api/checkout", method="POST")
    flags = Operation(name="/flagservice/flagd.evaluation.v1.Service/ResolveAll", method="POST")
    stock = _proxy_with(image_template())
    # the demo's template (15 s default, `timeout: 0s` on /flagservice/) leaves every call as it was
    assert route_dependency(stock, checkout, frontend) is frontend  # type: ignore[arg-type]
    assert route_dependency(stock, flags, flagd) is flagd  # type: ignore[arg-type]
    short = _proxy_with(template_with_timeout(SHORT_TIMEOUT))
    bounded = route_dependency(short, checkout, frontend)  # type: ignore[arg-type]
    assert (bounded.timeout_ms, bounded.client) == (20.0, ENVOY_CLIENT)
    assert deadline_error(bounded, Call(dependency="frontend", operation="POST /api/checkout")) == \
        "upstream request timeout"
    assert route_dependency(short, flags, flagd) is flagd  # type: ignore[arg-type]  # its own route
    # a process that is not an Envoy keeps its own client's deadline
    other = SimpleNamespace(inst=SimpleNamespace(spec=SimpleNamespace(name=PREFIX + "frontend"),
                                                 ctx=short.inst.ctx))
    assert route_dependency(other, checkout, frontend) is frontend  # type: ignore[arg-type]
