"""The network half of the exec userland: nslookup, dig, getent, ping, curl, wget, nc, ps, df,
ip, ss/netstat, run in-process the way `kubectl exec` runs them, against a live twin.

End-to-end tests go through the real data plane (`twin.services.dataplane` or D1's router);
formatting tests for failure kinds the cluster cannot easily produce use a stub data plane.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.node.images import catalogue_of, lookup
from sregym.twin.userland.context import exec_context, run_exec

APP = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: geo, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: geo}}
  template:
    metadata: {labels: {app: geo}}
    spec:
      containers: [{name: geo, image: nginx:1.27, ports: [{containerPort: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: geo, namespace: default}
spec: {selector: {app: geo}, ports: [{port: 8083, targetPort: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: bb, namespace: default, labels: {app: client}}
spec:
  containers: [{name: c, image: "busybox:1.36", command: [sleep, "3600"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: deb, namespace: default, labels: {app: client}}
spec:
  containers: [{name: c, image: "docker.io/sre/nginx-nettools:1"}]
"""

# nginx (Debian) with the network packages installed (dnsutils, iputils-ping, iproute2, net-tools,
# netcat-openbsd, wget), like the debug builds SREs make: plain Debian and nginx ship none of
# these, and exec finds only what the image has.
_NGINX = lookup("nginx:1.27")[0]
assert _NGINX is not None
NETTOOLS = replace(_NGINX, repository="docker.io/sre/nginx-nettools", tags=("1",), extras={
    "add_binaries": ("dig", "nslookup", "host", "ping", "nc", "ip", "ss", "netstat", "wget", "curl")})


@pytest.fixture
def twin() -> Twin:
    twin = Twin(seed=11)
    catalogue_of(twin).register(NETTOOLS)
    twin.apply(APP)
    twin.advance(30)
    return twin


def run(twin: Twin, pod: str, *argv: str) -> tuple[str, str, int]:
    obj = twin.store.peek("Pod", "default", pod)
    assert obj is not None
    result = run_exec(exec_context(twin, obj, "c"), list(argv))
    return result.stdout, result.stderr, result.exit_code


def geo_ip(twin: Twin) -> str:
    return twin.get("Service", "default", "geo")["spec"]["clusterIP"]


# ------------------------------------------------------------------------------------ DNS tools
def test_nslookup_success_and_nxdomain_in_both_flavours(twin: Twin) -> None:
    ip = geo_ip(twin)
    out, _, code = run(twin, "deb", "nslookup", "geo")
    assert code == 0
    assert out == (f"Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\n"
                   f"Name:\tgeo.default.svc.cluster.local\nAddress: {ip}\n\n")
    out, _, code = run(twin, "bb", "nslookup", "geo")
    assert code == 0 and "Address:\t10.96.0.10:53\n" in out
    out, _, code = run(twin, "deb", "nslookup", "gep")
    assert code == 1 and "** server can't find gep: NXDOMAIN\n" in out


def test_nslookup_times_out_when_coredns_is_gone(twin: Twin) -> None:
    twin.patch("Deployment", "kube-system", "coredns", {"spec": {"replicas": 0}})
    twin.advance(40)
    out, _, code = run(twin, "bb", "nslookup", "geo")
    assert code == 1 and out == ";; connection timed out; no servers could be reached\n\n"
    _, err, code = run(twin, "deb", "curl", "-sS", "http://geo:8083/")
    assert code == 6 and err == "curl: (6) Could not resolve host: geo\n"
    out, _, code = run(twin, "deb", "dig", "+short", "geo.default.svc.cluster.local")
    assert code == 9 and "communications error to 10.96.0.10#53: timed out" in out


def test_dig_getent_and_reverse_lookup(twin: Twin) -> None:
    ip = geo_ip(twin)
    out, _, code = run(twin, "deb", "dig", "+short", "geo.default.svc.cluster.local")
    assert (out, code) == (f"{ip}\n", 0)
    out, _, code = run(twin, "deb", "dig", "+short", "geo")  # dig does not use the search list
    assert (out, code) == ("", 0)
    out, _, code = run(twin, "deb", "dig", "geo.default.svc.cluster.local")
    assert "status: NOERROR" in out and f"geo.default.svc.cluster.local.\t30\tIN\tA\t{ip}" in out
    out, _, code = run(twin, "deb", "getent", "hosts", "geo")
    assert (out, code) == (f"{ip:<15} geo.default.svc.cluster.local\n", 0)
    assert run(twin, "deb", "getent", "hosts", "nope")[2] == 2
    out, _, code = run(twin, "deb", "nslookup", ip)
    assert code == 0 and "name = geo.default.svc.cluster.local.\n" in out


def test_ping_pod_ip_answers_cluster_ip_does_not(twin: Twin) -> None:
    geo_pod = next(p for p in twin.store.scan("Pod", "default") if p["metadata"]["labels"].get("app") == "geo")
    pod_ip = geo_pod["status"]["podIP"]
    out, _, code = run(twin, "bb", "ping", "-c", "3", pod_ip)
    assert code == 0 and out.startswith(f"PING {pod_ip} ({pod_ip}): 56 data bytes\n64 bytes from {pod_ip}: seq=0 ")
    assert "3 packets transmitted, 3 packets received, 0% packet loss" in out
    out, _, code = run(twin, "deb", "ping", "-c", "2", "geo")
    assert code == 1 and "2 packets transmitted, 0 received, 100% packet loss" in out
    _, err, code = run(twin, "bb", "ping", "-c", "1", "nope")
    assert (err, code) == ("ping: bad address 'nope'\n", 1)
    _, err, code = run(twin, "deb", "ping", "-c", "1", "nope")
    assert (err, code) == ("ping: nope: Name or service not known\n", 2)


def test_ping_blocked_by_network_policy(twin: Twin) -> None:
    geo_pod = next(p for p in twin.store.scan("Pod", "default") if p["metadata"]["labels"].get("app") == "geo")
    twin.apply({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": "geo-deny", "namespace": "default"},
                "spec": {"podSelector": {"matchLabels": {"app": "geo"}}}})
    out, _, code = run(twin, "bb", "ping", "-c", "2", geo_pod["status"]["podIP"])
    assert code == 1 and "100% packet loss" in out


# ------------------------------------------------------------------------- connections, e2e
def test_curl_wget_nc_success(twin: Twin) -> None:
    out, err, code = run(twin, "deb", "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://geo:8083/")
    assert (out, err, code) == ("200", "", 0)
    out, _, code = run(twin, "bb", "wget", "-qO-", "http://geo:8083/")
    assert code == 0 and out
    _, err, code = run(twin, "deb", "nc", "-zv", "geo", "8083")
    assert (err, code) == (f"Connection to geo ({geo_ip(twin)}) 8083 port [tcp/*] succeeded!\n", 0)
    _, err, code = run(twin, "bb", "nc", "-zv", "geo", "8083")
    assert (err, code) == (f"geo ({geo_ip(twin)}:8083) open\n", 0)


def test_selector_matching_nothing_refuses_fast(twin: Twin) -> None:
    twin.patch("Service", "default", "geo", {"spec": {"selector": {"app": "geo-v2"}}})
    twin.advance(2)
    _, err, code = run(twin, "deb", "curl", "-sS", "http://geo:8083/")
    assert code == 7
    assert err.startswith("curl: (7) Failed to connect to geo port 8083 after ")
    assert err.endswith(" ms: Couldn't connect to server\n")
    _, err, code = run(twin, "deb", "nc", "-zv", "geo", "8083")
    assert (err, code) == (f"nc: connect to geo ({geo_ip(twin)}) port 8083 (tcp) failed: Connection refused\n", 1)
    _, err, code = run(twin, "bb", "wget", "-qO-", "http://geo:8083/")
    assert (err, code) == (f"wget: can't connect to remote host ({geo_ip(twin)}): Connection refused\n", 1)


def test_network_policy_deny_times_out(twin: Twin) -> None:
    twin.apply({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": "geo-deny", "namespace": "default"},
                "spec": {"podSelector": {"matchLabels": {"app": "geo"}}}})
    _, err, code = run(twin, "deb", "curl", "-sS", "--connect-timeout", "5", "http://geo:8083/")
    assert code == 28
    assert err.startswith("curl: (28) Failed to connect to geo port 8083 after 500")
    assert err.endswith(" ms: Timeout was reached\n")
    _, err, code = run(twin, "deb", "nc", "-zv", "-w", "2", "geo", "8083")
    assert code == 1 and "port 8083 (tcp) timed out: Operation now in progress" in err
    _, err, code = run(twin, "bb", "wget", "-T", "3", "-qO-", "http://geo:8083/")
    assert (err, code) == ("wget: download timed out\n", 1)


# ------------------------------------------------------------------- formatting, stub plane
@dataclass
class StubConnect:
    ok: bool
    error: str | None = None
    latency_ms: float = 1.0
    dst_ip: str = ""
    dst_pod: dict[str, Any] | None = None
    message: str = ""


@dataclass
class StubHttp:
    status: int = 0
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    latency_ms: float = 2.0


class StubPlane:
    def __init__(self, conn: StubConnect, http: StubHttp) -> None:
        self.conn, self.http = conn, http
        self.requests: list[tuple[str, str, dict[str, str]]] = []

    def connect(self, src_pod: Any, host: str, port: int, *, protocol: str = "TCP") -> StubConnect:
        return self.conn

    def http_request(self, src_pod: Any, url: str, method: str = "GET", headers: Any = None,
                     body: Any = None) -> StubHttp:
        self.requests.append((method, url, dict(headers or {})))
        return self.http


def test_curl_http_error_fail_verbose_and_write_out(twin: Twin) -> None:
    plane = StubPlane(StubConnect(True, dst_ip="10.244.1.9"),
                      StubHttp(503, "upstream connect error\n", {"Content-Type": "text/plain"}))
    twin.services.dataplane = plane
    out, _, code = run(twin, "deb", "curl", "-s", "http://geo:8083/search?x=1")
    assert (out, code) == ("upstream connect error\n", 0)
    method, url, headers = plane.requests[-1]
    assert method == "GET" and url.endswith(":8083/search?x=1") and headers["Host"] == "geo:8083"
    out, err, code = run(twin, "deb", "curl", "-sSf", "http://geo:8083/")
    assert (out, err, code) == ("", "curl: (22) The requested URL returned error: 503\n", 22)
    out, _, code = run(twin, "deb", "curl", "-s", "-w", "%{http_code} %{remote_ip}\\n", "-o", "/dev/null",
                       "http://geo:8083/")
    assert (out, code) == (f"503 {geo_ip(twin)}\n", 0)
    _, err, code = run(twin, "deb", "curl", "-sv", "-X", "POST", "-d", "a=1", "http://geo:8083/r")
    assert f"*   Trying {geo_ip(twin)}:8083...\n* Connected to geo ({geo_ip(twin)}) port 8083\n" in err
    assert "> POST /r HTTP/1.1\n> Host: geo:8083\n" in err and "< HTTP/1.1 503 Service Unavailable\n" in err
    out, _, code = run(twin, "deb", "curl", "-sI", "http://geo:8083/")
    assert out.startswith("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n")
    _, err, code = run(twin, "bb", "wget", "-qO-", "http://geo:8083/")
    assert (err, code) == ("wget: server returned error: HTTP/1.1 503 Service Unavailable\n", 1)
    _, err, code = run(twin, "deb", "wget", "-O-", "http://geo:8083/")
    assert code == 8 and "ERROR 503: Service Unavailable." in err


def test_curl_reset_and_progress_meter(twin: Twin) -> None:
    twin.services.dataplane = StubPlane(StubConnect(True, dst_ip="10.244.1.9"), StubHttp(0, error="reset"))
    _, err, code = run(twin, "deb", "curl", "http://geo:8083/")
    assert code == 56
    assert err.startswith("  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n")
    assert err.endswith("curl: (56) Recv failure: Connection reset by peer\n")
    _, err, code = run(twin, "deb", "curl", "-s", "http://geo:8083/")
    assert (err, code) == ("", 56)  # -s hides the error without -S


def test_curl_timeout_without_limits_waits_for_the_kernel(twin: Twin) -> None:
    twin.services.dataplane = StubPlane(StubConnect(False, "timeout", 130_000.0), StubHttp())
    _, err, code = run(twin, "deb", "curl", "-sS", "http://geo:8083/")
    assert code == 7 and "after 130001 ms: Couldn't connect to server" in err
    _, err, code = run(twin, "deb", "curl", "-sS", "-m", "2", "http://geo:8083/")
    assert (err, code) == ("curl: (28) Connection timed out after 2001 milliseconds\n", 28)


# ----------------------------------------------------------------------------- process tools
def test_ps_ss_netstat_ip_df(twin: Twin) -> None:
    out, _, code = run(twin, "deb", "ps", "aux")
    assert code == 0 and out.startswith("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n")
    assert "nginx -g daemon off;" in out.splitlines()[1]
    out, _, _ = run(twin, "bb", "ps")
    assert out.splitlines()[0] == "PID   USER     TIME  COMMAND" and "sleep 3600" in out
    out, _, _ = run(twin, "deb", "ss", "-tlnp")
    assert "0.0.0.0:80" in out and 'users:(("nginx",pid=1' in out
    _, err, code = run(twin, "bb", "ss", "-tlnp")  # BusyBox has no ss applet
    assert code == 127 and 'exec: "ss": executable file not found in $PATH' in err
    out, _, _ = run(twin, "deb", "netstat", "-tlnp")
    assert "0.0.0.0:80" in out and "LISTEN      1/nginx" in out
    pod_ip = twin.get("Pod", "default", "deb")["status"]["podIP"]
    out, _, _ = run(twin, "deb", "ip", "addr")
    assert f"    inet {pod_ip}/24 brd " in out and "2: eth0@if" in out
    out, _, code = run(twin, "deb", "df", "-h")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "Filesystem      Size  Used Avail Use% Mounted on"
    assert lines[1].startswith("overlay          98G ") and lines[1].endswith(" /")
    out, _, _ = run(twin, "bb", "df", "-h")
    assert out.splitlines()[0] == "Filesystem                Size      Used Available Use% Mounted on"
