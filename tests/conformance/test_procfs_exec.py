"""`kubectl exec` into Hotel Reservation's frontend sees its processes and its own listeners as in a
real container: a StressChaos's stressors in `ps aux`, the frontend's 400 for a request missing
parameters over loopback, and a gRPC port answering HTTP/1.1 with HTTP/2 bytes."""

from __future__ import annotations

import re

import pytest

from support.kube import KubeHarness

NS = "hotel-reservation"


@pytest.fixture(scope="module")
def frontend(cluster: KubeHarness) -> str:
    """The frontend pod, with a CPU StressChaos injected into it (set up in-process)."""
    twin = cluster.twin

    def setup() -> str:
        pod = next(p for p in twin.list("pods", NS) if p["metadata"]["name"].startswith("frontend-"))
        if twin.store.peek("Namespace", None, "chaos-mesh") is None:
            twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "chaos-mesh"}})
        twin.create({"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "StressChaos",
                     "metadata": {"name": "frontend-cpu", "namespace": "chaos-mesh"},
                     "spec": {"mode": "all", "selector": {"pods": {NS: [pod["metadata"]["name"]]}},
                              "stressors": {"cpu": {"workers": 1, "load": 30}}}})
        return str(pod["metadata"]["name"])

    name = cluster.call(setup)
    cluster.advance(10)
    return name


def _exec(cluster: KubeHarness, pod: str, script: str) -> tuple[str, str, int]:
    with cluster.ticking():
        result = cluster.kubectl("exec", "-n", NS, pod, "--", "sh", "-c", script, input="", timeout=120)
    return result.stdout, result.stderr, result.returncode


def test_ps_aux_lists_the_stress_process(cluster: KubeHarness, frontend: str) -> None:
    out, err, code = _exec(cluster, frontend, "ps aux")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND"
    assert lines[1].split()[1] == "1" and lines[1].endswith(" frontend")
    assert any(line.endswith(" stress-ng --cpu 1 --cpu-load 30") for line in lines)
    assert any(line.endswith(" stress-ng-cpu") for line in lines)


def test_loopback_and_grpc_answers(cluster: KubeHarness, frontend: str) -> None:
    out, _, code = _exec(cluster, frontend, "curl -s -o /dev/null -w '%{http_code}' localhost:5000/hotels; "
                                            "echo; curl -s localhost:5000/hotels")
    assert code == 0 and out == "400\nPlease specify inDate/outDate params\n"
    _, err, code = _exec(cluster, frontend, "curl -sS http://geo:8083/")
    assert code == 1 and err.startswith("curl: (1) Received HTTP/0.9 when not allowed\n")
    _, err, code = _exec(cluster, frontend, "curl -sS localhost:5999")
    assert code == 7 and "Failed to connect to localhost port 5999 after 0 ms" in err


def test_ping_through_kubectl_shows_the_injected_loss(cluster: KubeHarness, frontend: str) -> None:
    """A BusyBox pod whose traffic a NetworkChaos drops 40% of: `ping` run through real kubectl
    reports the loss it saw, and only answered sequence numbers get a reply line."""
    twin = cluster.twin

    def setup() -> str:
        twin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pinger", "namespace": NS,
                                                                      "labels": {"app": "pinger"}},
                     "spec": {"containers": [{"name": "bb", "image": "busybox:1.36",
                                              "command": ["sleep", "3600"]}]}})
        twin.create({"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "NetworkChaos",
                     "metadata": {"name": "pinger-loss", "namespace": "chaos-mesh"},
                     "spec": {"action": "loss", "mode": "all", "selector": {"pods": {NS: ["pinger"]}},
                              "loss": {"loss": "40"}}})
        pod = twin.store.peek("Pod", NS, frontend)
        return str(pod["status"]["podIP"])

    target = cluster.call(setup)
    cluster.advance(20)
    with cluster.ticking():
        result = cluster.kubectl("exec", "-n", NS, "pinger", "--", "ping", "-c", "30", target, timeout=120)
    out = result.stdout
    summary = re.search(r"\n30 packets transmitted, (\d+) packets received, (\d+)% packet loss\n", out)
    assert summary is not None, (out, result.stderr)
    received, loss = int(summary.group(1)), int(summary.group(2))
    assert 0 < received < 30 and loss == (30 - received) * 100 // 30
    assert 20 <= loss <= 60  # 40% loss, drawn per packet
    assert len(re.findall(rf"^64 bytes from {re.escape(target)}: seq=\d+ ttl=\d+ time=[\d.]+ ms$", out, re.M)) \
        == received
