"""`kubectl get --raw` on the API server's own endpoints and on the proxy subresources.

Health: `/healthz`, `/livez`, `/readyz` answer `ok`; `?verbose` lists the 1.32 checks and ends
`<endpoint> check passed`; `?exclude=` marks a check excluded; `/readyz/<check>` is one check
(admin only: the agent's role, like system:public-info-viewer, grants the bare paths).
`/metrics` is the apiserver's exposition, driven by the requests served, for the admin only.
Proxies: Service, pod and node `proxy` reach the emulated listener or fail with the API server's
own Status (`no endpoints available for service`, `error trying to reach service: ...`).
"""

from __future__ import annotations

import json
import re
import ssl
import urllib.error
import urllib.request

import pytest

from support.kube import KubeHarness

NS = "hotel-reservation"
SVC = f"/api/v1/namespaces/{NS}/services"
QUERY = "inDate=2015-04-09&outDate=2015-04-10&lat=37.7749&lon=-122.4194"  # what the frontend requires
PODS = f"/api/v1/namespaces/{NS}/pods"


def _pod(cluster: KubeHarness, prefix: str) -> str:
    names = cluster.ok("get", "pods", "-n", NS, "-o", "name").split()
    return next(n.split("/", 1)[1] for n in names if n.split("/", 1)[1].startswith(prefix + "-"))


def _raw(cluster: KubeHarness, path: str, user: str = "agent") -> tuple[int, str, str]:
    result = cluster.kubectl("get", "--raw", path, user=user)
    return result.returncode, result.stdout, result.stderr.strip()


# ----------------------------------------------------------------------------------- health
@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/readyz?exclude=etcd"])
def test_health_plain(cluster: KubeHarness, path: str) -> None:
    assert _raw(cluster, path) == (0, "ok", "")


@pytest.mark.parametrize(("endpoint", "first", "extra", "absent"), [
    ("readyz", "[+]ping ok", ["[+]etcd-readiness ok", "[+]informer-sync ok", "[+]shutdown ok"], []),
    ("livez", "[+]ping ok", [], ["[+]shutdown ok", "[+]informer-sync ok"]),
    ("healthz", "[+]ping ok", [], ["[+]shutdown ok", "[+]etcd-readiness ok"]),
])
def test_health_verbose_check_list(cluster: KubeHarness, endpoint: str, first: str, extra: list[str],
                                   absent: list[str]) -> None:
    code, out, _ = _raw(cluster, f"/{endpoint}?verbose")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == first and lines[1] == "[+]log ok" and lines[2] == "[+]etcd ok"
    assert lines[-1] == f"{endpoint} check passed"
    for line in ["[+]poststarthook/rbac/bootstrap-roles ok", "[+]autoregister-completion ok",
                 "[+]poststarthook/start-apiserver-admission-initializer ok",
                 "[+]poststarthook/apiservice-openapiv3-controller ok", *extra]:
        assert line in lines
    for line in absent:
        assert line not in lines
    assert all(re.fullmatch(r"\[\+\][a-z0-9/-]+ ok", line) for line in lines[:-1])


def test_health_exclude(cluster: KubeHarness) -> None:
    _, out, _ = _raw(cluster, "/livez?verbose&exclude=etcd&exclude=no-such-check")
    lines = out.splitlines()
    assert "[+]etcd excluded: ok" in lines
    assert lines[-2] == 'warn: some health checks cannot be excluded: no matches for "no-such-check"'
    assert lines[-1] == "livez check passed"


@pytest.mark.parametrize(("path", "user", "expected"), [
    ("/readyz/etcd", "admin", (0, "ok", "")),
    ("/livez/ping", "admin", (0, "ok", "")),
    ("/healthz/poststarthook/rbac/bootstrap-roles", "admin", (0, "ok", "")),
    ("/readyz/no-such-check", "admin",
     (1, "", "Error from server (NotFound): the server could not find the requested resource")),
    ("/readyz/etcd", "agent",
     (1, "", 'Error from server (Forbidden): forbidden: User "agent" cannot get path "/readyz/etcd"')),
    ("/metrics", "agent",
     (1, "", 'Error from server (Forbidden): forbidden: User "agent" cannot get path "/metrics"')),
])
def test_single_checks_and_authorization(cluster: KubeHarness, path: str, user: str,
                                         expected: tuple[int, str, str]) -> None:
    assert _raw(cluster, path, user) == expected


@pytest.mark.parametrize(("user", "answer"), [("agent", "no"), ("admin", "yes")])
def test_can_i_get_metrics(cluster: KubeHarness, user: str, answer: str) -> None:
    result = cluster.kubectl("auth", "can-i", "get", "/metrics", user=user)
    assert result.stdout.strip() == answer


def test_anonymous_health_but_not_metrics(cluster: KubeHarness) -> None:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(cluster.url + "/readyz", context=ctx, timeout=20) as resp:
        assert resp.read() == b"ok"
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(cluster.url + "/metrics", context=ctx, timeout=20)
    status = json.loads(err.value.read())
    assert err.value.code == 403
    assert status["reason"] == "Forbidden"
    assert status["message"] == 'forbidden: User "system:anonymous" cannot get path "/metrics"'


# ---------------------------------------------------------------------------------- metrics
def _sample(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', line.split("} ", 1)[0]))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} {labels} not exposed")


def test_metrics_exposition_counts_served_requests(cluster: KubeHarness) -> None:
    before = cluster.ok("get", "--raw", "/metrics", user="admin")
    for _ in range(3):
        cluster.ok("get", "deployments", "-n", NS)
    after = cluster.ok("get", "--raw", "/metrics", user="admin")
    labels = {"verb": "LIST", "group": "apps", "version": "v1", "resource": "deployments",
              "scope": "namespace", "code": "200", "component": "apiserver"}
    try:
        start = _sample(before, "apiserver_request_total", **labels)
    except AssertionError:
        start = 0.0
    assert _sample(after, "apiserver_request_total", **labels) == start + 3
    for family, kind in [("apiserver_request_total", "counter"),
                         ("apiserver_request_duration_seconds", "histogram"),
                         ("etcd_request_duration_seconds", "histogram"),
                         ("apiserver_storage_objects", "gauge"), ("kubernetes_build_info", "gauge")]:
        assert f"# TYPE {family} {kind}\n" in after
        assert re.search(rf"^# HELP {family} \[(STABLE|ALPHA)\] ", after, re.M)
    assert re.search(r'^apiserver_request_duration_seconds_bucket\{component="apiserver",dry_run="",'
                     r'group="apps",resource="deployments",scope="namespace",subresource="",verb="LIST",'
                     r'version="v1",le="\+Inf"\} \d+$', after, re.M)
    assert _sample(after, "etcd_request_duration_seconds_count", operation="listWithCount",
                   type="deployments.apps") >= 3
    pods = len(cluster.ok("get", "pods", "-A", "--no-headers").splitlines())
    assert _sample(after, "apiserver_storage_objects", resource="pods") >= pods


def test_metrics_verbs_and_scopes(cluster: KubeHarness) -> None:
    pod = _pod(cluster, "frontend")
    cluster.ok("get", "pod", pod, "-n", NS)
    cluster.ok("get", "nodes")
    cluster.kubectl("get", "pod", "no-such-pod", "-n", NS)
    text = cluster.ok("get", "--raw", "/metrics", user="admin")
    assert _sample(text, "apiserver_request_total", verb="GET", resource="pods", scope="resource",
                   code="200") >= 1
    assert _sample(text, "apiserver_request_total", verb="LIST", resource="nodes", scope="cluster",
                   code="200") >= 1
    assert _sample(text, "apiserver_request_total", verb="GET", resource="pods", scope="resource",
                   code="404") >= 1


# ------------------------------------------------------------------------------------ proxy
@pytest.mark.parametrize(("path", "expected"), [
    (f"{SVC}/frontend:5000/proxy/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=37.7749&lon=-122.4194",
     (0, "FeatureCollection")),
    (f"{SVC}/http:frontend:5000/proxy/recommendations?require=rate&lat=37.7749&lon=-122.4194",
     (0, "FeatureCollection")),
    (f"{SVC}/frontend:5000/proxy/no-such-path",
     (1, "Error from server (NotFound): the server could not find the requested resource")),
    (f"{SVC}/frontend:9/proxy/",
     (1, 'Error from server (ServiceUnavailable): no service port 9 found for service "frontend"')),
    (f"{SVC}/frontend/proxy/",
     (1, 'Error from server (ServiceUnavailable): no endpoints available for service "frontend"')),
    (f"{SVC}/no-such-svc/proxy/",
     (1, 'Error from server (NotFound): services "no-such-svc" not found')),
    (f"{SVC}/a:b:c:d/proxy/",
     (1, 'Error from server (BadRequest): invalid service request "a:b:c:d"')),
])
def test_service_proxy(cluster: KubeHarness, path: str, expected: tuple[int, str]) -> None:
    code, out, err = _raw(cluster, path)
    assert code == expected[0], err
    if code == 0:
        assert json.loads(out)["type"] == expected[1]
    else:
        assert err == expected[1]


def test_service_without_ready_endpoints(cluster: KubeHarness) -> None:
    cluster.ok("create", "service", "clusterip", "proxy-empty", "--tcp=80:8080", "-n", NS,
               user="admin")
    cluster.advance(2)  # the endpoints controller writes the (empty) Endpoints object
    try:
        code, _, err = _raw(cluster, f"{SVC}/proxy-empty:80/proxy/")
    finally:
        cluster.ok("delete", "service", "proxy-empty", "-n", NS, user="admin")
    assert (code, err) == (1, 'Error from server (ServiceUnavailable): no endpoints available for '
                              'service "proxy-empty"')


def test_pod_proxy(cluster: KubeHarness) -> None:
    pod = _pod(cluster, "frontend")
    ip = cluster.ok("get", "pod", pod, "-n", NS, "-o", "jsonpath={.status.podIP}")
    query = "inDate=2015-04-09&outDate=2015-04-10&lat=37.7749&lon=-122.4194"
    code, out, _ = _raw(cluster, f"{PODS}/{pod}:5000/proxy/hotels?{query}")
    assert code == 0 and json.loads(out)["type"] == "FeatureCollection"
    code, out, _ = _raw(cluster, f"{PODS}/{pod}/proxy/hotels?{query}")  # the first container port
    assert code == 0 and json.loads(out)["type"] == "FeatureCollection"
    assert _raw(cluster, f"{PODS}/{pod}:9999/proxy/") == (
        1, "", "Error from server (ServiceUnavailable): error trying to reach service: dial tcp "
               f"{ip}:9999: connect: connection refused")
    assert _raw(cluster, f"{PODS}/no-such-pod:80/proxy/") == (
        1, "", 'Error from server (NotFound): pods "no-such-pod" not found')


def test_node_proxy(cluster: KubeHarness) -> None:
    nodes = [n.split("/", 1)[1] for n in cluster.ok("get", "nodes", "-o", "name").split()]
    node = nodes[-1]
    assert _raw(cluster, f"/api/v1/nodes/{node}/proxy/healthz") == (0, "ok", "")
    code, out, _ = _raw(cluster, f"/api/v1/nodes/{node}/proxy/pods")
    listed = json.loads(out)
    assert code == 0 and listed["kind"] == "PodList"
    assert {p["spec"]["nodeName"] for p in listed["items"]} == {node}
    code, out, _ = _raw(cluster, f"/api/v1/nodes/{node}/proxy/metrics/resource")
    assert code == 0
    assert "# TYPE container_cpu_usage_seconds_total counter\n" in out
    assert re.search(r"^node_memory_working_set_bytes \d+ \d+$", out, re.M)
    assert out.rstrip().endswith("scrape_error 0")
    code, out, _ = _raw(cluster, f"/api/v1/nodes/{node}/proxy/stats/summary")
    summary = json.loads(out)
    assert code == 0 and summary["node"]["nodeName"] == node
    assert set(summary["node"]["memory"]) >= {"time", "availableBytes", "usageBytes", "workingSetBytes"}
    assert {p["podRef"]["name"] for p in summary["pods"]} == {p["metadata"]["name"] for p in listed["items"]}
    assert all(set(p) >= {"podRef", "startTime", "containers", "cpu", "memory"} for p in summary["pods"])
    assert _raw(cluster, f"/api/v1/nodes/{node}/proxy/no-such-endpoint") == (
        1, "", "Error from server (NotFound): the server could not find the requested resource")
    assert _raw(cluster, "/api/v1/nodes/no-such-node/proxy/healthz") == (
        1, "", 'Error from server (NotFound): nodes "no-such-node" not found')


def test_kubectl_proxy_reaches_service_proxy_and_health(cluster: KubeHarness) -> None:
    """`kubectl proxy` serves the API on localhost; the Service proxy path works through it."""
    import os
    import subprocess

    from sregym.twin.api.kubeconfig import context_name
    from support.kube import KUBECTL

    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "HOME": str(cluster.cache_dir)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    proc = subprocess.Popen([KUBECTL, "--context", context_name("agent"), "proxy", "--port=0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.fullmatch(r"Starting to serve on 127\.0\.0\.1:(\d+)\n", line)
        assert m, line
        base = f"http://127.0.0.1:{m.group(1)}"
        with urllib.request.urlopen(f"{base}{SVC}/frontend:5000/proxy/hotels?{QUERY}", timeout=20) as resp:
            assert json.loads(resp.read())["type"] == "FeatureCollection"
        with urllib.request.urlopen(f"{base}/readyz", timeout=20) as resp:
            assert resp.read() == b"ok"
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{base}{SVC}/frontend/proxy/", timeout=20)
        assert err.value.code == 503
        assert json.loads(err.value.read())["message"] == 'no endpoints available for service "frontend"'
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_proxy_blocked_by_network_policy(cluster: KubeHarness) -> None:
    """The API server dials the pod from the control-plane node: a deny-all ingress policy drops it."""
    policy = json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"name": "proxy-deny", "namespace": NS},
                         "spec": {"podSelector": {"matchLabels": {"io.kompose.service": "frontend"}},
                                  "policyTypes": ["Ingress"]}})
    pod = _pod(cluster, "frontend")
    ip = cluster.ok("get", "pod", pod, "-n", NS, "-o", "jsonpath={.status.podIP}")
    cluster.ok("apply", "-f", "-", input=policy, user="admin")
    try:
        blocked = _raw(cluster, f"{PODS}/{pod}:5000/proxy/hotels?{QUERY}")
    finally:
        cluster.ok("delete", "networkpolicy", "proxy-deny", "-n", NS, user="admin")
    assert blocked == (1, "", "Error from server (ServiceUnavailable): error trying to reach service: "
                              f"dial tcp {ip}:5000: i/o timeout")
    assert _raw(cluster, f"{PODS}/{pod}:5000/proxy/hotels?{QUERY}")[0] == 0
