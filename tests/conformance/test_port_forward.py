"""`kubectl port-forward` against the twin, as an SRE uses it: a real kubectl 1.32 process forwards
local ports over the WebSocket-tunnelled SPDY session, and curl/urllib on localhost reach the
pod's emulated listener.

Expected output is what kubectl 1.32 prints against a real cluster: `Forwarding from
127.0.0.1:P -> R`, `Handling connection for P`, and for a port nothing listens on the kubelet's
containerd error relayed through the error stream, then `error: lost connection to pod`.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from sregym.twin.api.kubeconfig import context_name
from support.kube import KUBECTL, KubeHarness

NS = "hotel-reservation"
HOTELS = "/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=37.7749&lon=-122.4194"
FORWARDING = re.compile(r"^Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)$", re.M)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Forward:
    """A running `kubectl port-forward` and the local ports it announced."""

    def __init__(self, proc: subprocess.Popen[str], ports: dict[int, int]) -> None:
        self.proc = proc
        self.ports = ports  # remote -> local
        self.stdout = ""
        self.stderr = ""

    def local(self, remote: int) -> int:
        return self.ports[remote]

    def finish(self, timeout: float = 20) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        out, err = self.proc.communicate(timeout=timeout)
        self.stdout += out
        self.stderr += err
        return int(self.proc.returncode)


@contextmanager
def port_forward(cluster: KubeHarness, target: str, *specs: str, expect: int) -> Iterator[Forward]:
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "HOME": str(cluster.cache_dir)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    cmd = [KUBECTL, "--context", context_name("agent"), "-n", NS, "port-forward", target, *specs]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    lines: list[str] = []
    ports: dict[int, int] = {}
    deadline = time.monotonic() + 30
    while len(ports) < expect and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = FORWARDING.match(line.strip())
        if m:
            ports[int(m.group(2))] = int(m.group(1))
    fwd = Forward(proc, ports)
    fwd.stdout = "".join(lines)
    try:
        assert len(ports) == expect, f"kubectl port-forward did not start: {fwd.stdout}{proc.stderr.read() if proc.poll() is not None else ''}"  # type: ignore[union-attr]
        yield fwd
    finally:
        if proc.poll() is None:
            fwd.finish()


def _curl(port: int, path: str = "/", *extra: str) -> subprocess.CompletedProcess[str]:
    """curl's output (text mode: CRLF line ends read as LF)."""
    return subprocess.run(["curl", "-sS", "-i", "--max-time", "20", *extra, f"http://127.0.0.1:{port}{path}"],
                          capture_output=True, text=True, timeout=30, check=False)


def _pod(cluster: KubeHarness, prefix: str) -> str:
    names = cluster.ok("get", "pods", "-n", NS, "-o", "name").split()
    return next(n.split("/", 1)[1] for n in names if n.split("/", 1)[1].startswith(prefix + "-"))


@pytest.mark.parametrize("target", ["pod", "deploy/frontend", "svc/frontend"])
def test_forward_reaches_the_frontend(cluster: KubeHarness, target: str) -> None:
    if target == "pod":
        target = "pod/" + _pod(cluster, "frontend")
    local = _free_port()
    with port_forward(cluster, target, f"{local}:5000", expect=1) as fwd:
        assert fwd.local(5000) == local
        with urllib.request.urlopen(f"http://127.0.0.1:{local}{HOTELS}", timeout=20) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"  # Go sniffs its JSON
            body = json.loads(resp.read())
        assert body["type"] == "FeatureCollection"
        code = fwd.finish()
    assert f"Forwarding from 127.0.0.1:{local} -> 5000\n" in fwd.stdout
    assert f"Handling connection for {local}\n" in fwd.stdout
    assert "error" not in fwd.stderr.lower(), fwd.stderr
    assert code in (0, -15, 143)


def test_random_local_port_and_curl_status_line(cluster: KubeHarness) -> None:
    """`:REMOTE` lets kubectl choose the local port; curl sees the app's real HTTP answers."""
    with port_forward(cluster, "deploy/frontend", ":5000", expect=1) as fwd:
        local = fwd.local(5000)
        ok = _curl(local, HOTELS)
        missing = _curl(local, "/no-such-path")
        head = _curl(local, HOTELS, "-I")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("HTTP/1.1 200 OK\n")
    assert "Content-Type: text/plain; charset=utf-8\n" in ok.stdout
    assert missing.stdout.startswith("HTTP/1.1 404 Not Found\n")
    assert missing.stdout.endswith("\n\n404 page not found\n")
    assert "X-Content-Type-Options: nosniff\n" in missing.stdout
    assert head.stdout.startswith("HTTP/1.1 200 OK\n") and head.stdout.endswith("\n\n")


def test_keep_alive_connection_serves_several_requests(cluster: KubeHarness) -> None:
    with port_forward(cluster, "svc/frontend", ":5000", expect=1) as fwd:
        conn = http.client.HTTPConnection("127.0.0.1", fwd.local(5000), timeout=20)
        statuses = []
        for path in (HOTELS, "/recommendations?require=rate&lat=38.0&lon=-122.0", "/missing"):
            conn.request("GET", path)
            resp = conn.getresponse()
            resp.read()
            statuses.append(resp.status)
        conn.close()
        fwd.finish()
    assert statuses == [200, 200, 404]
    assert fwd.stdout.count("Handling connection for") == 1


def test_port_nobody_listens_on_is_the_containerd_error(cluster: KubeHarness) -> None:
    pod = _pod(cluster, "frontend")
    good, bad = _free_port(), _free_port()
    with port_forward(cluster, f"pod/{pod}", f"{good}:5000", f"{bad}:9999", expect=2) as fwd:
        assert fwd.ports == {5000: good, 9999: bad}
        answer = _curl(bad)
        code = fwd.proc.wait(timeout=20)
        fwd.finish()
    assert answer.returncode == 52 and "Empty reply from server" in answer.stderr
    assert code == 1
    pattern = (rf'an error occurred forwarding {bad} -> 9999: error forwarding port 9999 to pod '
               r'([0-9a-f]{64}), uid : failed to execute portforward in network namespace '
               r'\\"/var/run/netns/cni-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\": '
               r'failed to connect to localhost:9999 inside namespace \\"\1\\", IPv4: dial tcp4 '
               r'127\.0\.0\.1:9999: connect: connection refused IPv6 dial tcp6 \[::1\]:9999: connect: '
               r'connection refused ')
    assert re.search(pattern, fwd.stderr), fwd.stderr
    assert fwd.stderr.rstrip().endswith("error: lost connection to pod")


def test_non_http_server_closes_the_connection(cluster: KubeHarness) -> None:
    """MongoDB does not speak HTTP: curl gets an empty reply, the forward itself stays up."""
    with port_forward(cluster, "svc/mongodb-geo", ":27017", expect=1) as fwd:
        first = _curl(fwd.local(27017))
        second = _curl(fwd.local(27017))
        alive = fwd.proc.poll() is None
        fwd.finish()
    assert first.returncode == 52 and "Empty reply from server" in first.stderr
    assert second.returncode == 52
    assert alive
    assert "an error occurred" not in fwd.stderr


@pytest.mark.parametrize(("args", "message"), [
    (("pod/no-such-pod", "8080:80"), 'Error from server (NotFound): pods "no-such-pod" not found'),
    (("svc/frontend", "8080:9999"), "error: Service frontend does not have a service port 9999"),
    (("deploy/no-such", "8080:80"),
     'Error from server (NotFound): deployments.apps "no-such" not found'),
])
def test_port_forward_errors(cluster: KubeHarness, args: tuple[str, ...], message: str) -> None:
    result = cluster.kubectl("-n", NS, "port-forward", *args, timeout=30)
    assert result.returncode == 1
    assert result.stderr.strip() == message


def test_python_client_portforward(cluster: KubeHarness) -> None:
    """The official Python client forwards over the `v4.channel.k8s.io` WebSocket protocol."""
    from kubernetes import client
    from kubernetes.stream import portforward

    api = client.CoreV1Api(cluster.client())
    pod = _pod(cluster, "frontend")
    pf = portforward(api.connect_get_namespaced_pod_portforward, pod, NS, ports="5000,9999")
    sock = pf.socket(5000)
    sock.setblocking(True)
    sock.settimeout(20)
    sock.sendall(b"GET /hotels HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    reply = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        reply += chunk
    sock.close()
    pf.socket(9999).close()
    # The frontend's search handler rejects a request without dates before calling anything.
    assert reply.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert reply.endswith(b"Please specify inDate/outDate params\n")
    error = pf.error(9999) or ""
    assert re.fullmatch(r"error forwarding port 9999 to pod [0-9a-f]{64}, uid : failed to execute "
                        r"portforward in network namespace .* connect: connection refused ", error), error


def test_pod_that_is_not_running(cluster: KubeHarness) -> None:
    manifest = json.dumps({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": "pf-pending", "namespace": NS},
                           "spec": {"nodeSelector": {"disk": "none-such"},
                                    "containers": [{"name": "c", "image": "nginx:1.27"}]}})
    cluster.ok("apply", "-f", "-", input=manifest, user="admin")
    try:
        cluster.advance(2)
        result = cluster.kubectl("-n", NS, "port-forward", "pod/pf-pending", "8080:80", timeout=30)
    finally:
        cluster.ok("delete", "pod", "pf-pending", "-n", NS, "--wait=false", user="admin")
    assert result.returncode == 1
    assert result.stderr.strip() == ("error: unable to forward port because pod is not running. "
                                     "Current status=Pending")
