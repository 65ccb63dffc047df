"""`kubectl top` (metrics.k8s.io) and `kubectl auth can-i|whoami` against the twin."""

from __future__ import annotations

import json

import pytest

from sregym.twin.node.resource_metrics import cpu_quantity, memory_quantity

MANIFEST = """
apiVersion: v1
kind: Namespace
metadata: {name: chaos-mesh}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  nodeName: kind-worker
  containers:
  - {name: nginx, image: "nginx:1.27", resources: {limits: {memory: 256Mi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: chaos-controller, namespace: chaos-mesh}
spec:
  nodeName: kind-worker2
  containers:
  - {name: c, image: busybox:1.36, command: ["sleep", "3600"]}
"""


@pytest.fixture
def cluster(kube):  # type: ignore[no-untyped-def]
    kube.call(kube.twin.apply, MANIFEST)

    def usage(namespace: str, pod: str, container: str, _instance: object) -> tuple[float, int]:
        # The data plane's share of usage: 250m CPU and 64Mi for the web pod.
        return (0.25, 64 * 2**20) if (namespace, pod) == ("default", "web") else (0.0, 0)

    kube.call(lambda: kube.twin.services.runtime.add_usage_hook(usage))
    kube.advance(40)
    return kube


def test_quantities_are_serialised_like_resource_quantity() -> None:
    assert cpu_quantity(0) == "0"
    assert cpu_quantity(0.25) == "250m"
    assert cpu_quantity(0.001234567) == "1234567n"
    assert cpu_quantity(2) == "2"
    assert memory_quantity(64 * 2**20) == "64Mi"
    assert memory_quantity(2916 * 1024 + 100) == "2916Ki"
    assert memory_quantity(0) == "0"


def test_top_pods_shows_runtime_usage(cluster) -> None:  # type: ignore[no-untyped-def]
    out = cluster.ok("top", "pods")
    header, *rows = out.splitlines()
    assert header.split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    web = next(r.split() for r in rows if r.startswith("web "))
    # The image's own idle figures plus the 250m/64Mi the hook adds.
    assert web[1].endswith("m") and int(web[1][:-1]) >= 250
    assert web[2].endswith("Mi") and int(web[2][:-2]) >= 64
    labelled = cluster.ok("top", "pods", "-l", "app=web").splitlines()
    assert len(labelled) == 2
    containers = cluster.ok("top", "pods", "web", "--containers").splitlines()
    assert containers[1].split()[:3] == ["web", "nginx", web[1]]


def test_top_hides_benchmark_namespaces_from_the_agent(cluster) -> None:  # type: ignore[no-untyped-def]
    agent = cluster.ok("top", "pods", "-A")
    assert "chaos-controller" not in agent and "coredns" in agent
    admin = cluster.ok("top", "pods", "-A", user="admin")
    assert "chaos-controller" in admin
    refused = cluster.kubectl("top", "pods", "-n", "chaos-mesh")  # as for an absent namespace
    assert (refused.returncode, refused.stderr) == (0, "No resources found in chaos-mesh namespace.\n")


def test_top_nodes(cluster) -> None:  # type: ignore[no-untyped-def]
    out = cluster.ok("top", "nodes")
    header, *rows = out.splitlines()
    assert header.split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    names = [r.split()[0] for r in rows]
    assert names == ["kind-control-plane", "kind-worker", "kind-worker2", "kind-worker3"]
    worker = next(r.split() for r in rows if r.startswith("kind-worker "))
    idle = next(r.split() for r in rows if r.startswith("kind-worker3 "))
    # The worker running the busy pod uses at least its 250m more than an idle worker.
    assert int(worker[1][:-1]) - int(idle[1][:-1]) >= 250


def test_metrics_api_objects(cluster) -> None:  # type: ignore[no-untyped-def]
    raw = cluster.ok("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web")
    item = json.loads(raw)
    assert item["kind"] == "PodMetrics" and item["window"] == "15s"
    assert item["timestamp"] == "2026-01-05T09:00:30Z"
    assert item["containers"][0]["name"] == "nginx"
    runtime = cluster.twin.services.runtime
    cpu, memory = cluster.call(runtime.container_usage, "default", "web", "nginx")
    assert cpu >= 0.25
    assert item["containers"][0]["usage"] == {"cpu": cpu_quantity(cpu), "memory": memory_quantity(memory)}
    missing = cluster.kubectl("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope")
    assert missing.returncode == 1
    assert 'podmetrics.metrics.k8s.io "default/nope" not found' in missing.stderr
    nodes = json.loads(cluster.ok("get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"))
    assert nodes["kind"] == "NodeMetricsList" and len(nodes["items"]) == 4


def test_metrics_wait_for_a_first_scrape(kube) -> None:  # type: ignore[no-untyped-def]
    kube.call(kube.twin.apply, MANIFEST)
    kube.advance(3)
    listed = json.loads(kube.ok("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"))
    assert listed["items"] == []


def test_auth_can_i(cluster) -> None:  # type: ignore[no-untyped-def]
    # A hidden namespace is answered like an absent one: RBAC alone decides.
    hidden = cluster.kubectl("auth", "can-i", "list", "pods", "-n", "chaos-mesh")
    assert (hidden.returncode, hidden.stdout) == (0, "yes\n")
    assert cluster.kubectl("auth", "can-i", "delete", "events", "-n", "chaos-mesh").stdout == "no\n"
    allowed = cluster.kubectl("auth", "can-i", "list", "pods", "-n", "chaos-mesh", user="admin")
    assert (allowed.returncode, allowed.stdout) == (0, "yes\n")
    assert cluster.ok("auth", "can-i", "patch", "deployments", "-n", "default") == "yes\n"
    assert cluster.kubectl("auth", "can-i", "delete", "nodes").stdout.startswith("no")
    chaos = cluster.kubectl("auth", "can-i", "list", "podchaos.chaos-mesh.org")
    made_up = cluster.kubectl("auth", "can-i", "list", "podchaos.widgets.example.com")
    assert chaos.returncode == made_up.returncode
    assert cluster.ok("auth", "can-i", "get", "/healthz") == "yes\n"
    rules = cluster.ok("auth", "can-i", "--list", "-n", "default")
    assert "pods/exec" in rules and "selfsubjectaccessreviews.authorization.k8s.io" in rules
    hidden_rules = cluster.ok("auth", "can-i", "--list", "-n", "chaos-mesh")
    assert hidden_rules == rules
    admin_rules = cluster.ok("auth", "can-i", "--list", user="admin")
    assert "*.*" in admin_rules


def test_auth_whoami(cluster) -> None:  # type: ignore[no-untyped-def]
    agent = cluster.ok("auth", "whoami").splitlines()
    assert agent[0].split() == ["ATTRIBUTE", "VALUE"]
    assert agent[1].split() == ["Username", "agent"]
    admin = cluster.ok("auth", "whoami", "-o", "json", user="admin")
    info = json.loads(admin)["status"]["userInfo"]
    assert info["username"] == "admin" and "system:masters" in info["groups"]
