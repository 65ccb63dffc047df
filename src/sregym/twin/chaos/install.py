"""The Chaos Mesh installation (Helm chart v2.7.2 defaults) and the images it runs.

`install_chaos_mesh(twin)` creates what `helm install chaos-mesh chaos-mesh/chaos-mesh -n
chaos-mesh --version 2.7.2` leaves in a kind cluster with containerd: the `chaos-mesh` namespace
(hidden from the agent credential), the controller manager Deployment, the chaos-daemon
DaemonSet, the dashboard and the DNS server used by DNSChaos, their ServiceAccount and Services.
It is idempotent, so fault injectors and `twin up` can both call it. The experiments themselves
are executed by `ChaosController` whether or not these pods run, as the real CRDs would be only
if the manager runs; fault injectors should install first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.node.images import ImageSpec, register_image, serve
from sregym.twin.node.shell import Invocation, Program

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

NAMESPACE = "chaos-mesh"
VERSION = "v2.7.2"
REGISTRY = "ghcr.io/chaos-mesh"
MIB = 1 << 20


def _component(name: str, ports: tuple[int, ...], memory_mb: float, logs: tuple[str, ...]) -> Any:
    def run(call: Invocation) -> Program:
        return (yield from serve(call, ports=ports, http_paths=None, startup_seconds=1.0,
                                 memory_mb=memory_mb, cpu_cores=0.005, logs=list(logs)))

    run.__name__ = name
    return run


def _json_log(level: str, logger: str, msg: str) -> str:
    return f'{{"level":"{level}","ts":"2026-01-05T09:00:00.000Z","logger":"{logger}","msg":"{msg}"}}'


_MANAGER = _component("chaos-controller-manager", (10080, 10081, 9443), 60, (
    _json_log("info", "setup", "Starting manager"),
    _json_log("info", "controller-runtime.metrics", "Metrics server is starting to listen"),
    _json_log("info", "controller-runtime.webhook", "Starting webhook server"),
))
_DAEMON = _component("chaos-daemon", (31767, 31766), 40, (
    _json_log("info", "chaos-daemon", "Starting grpc endpoint"),
    _json_log("info", "chaos-daemon", "Starting http endpoint"),
))
_DASHBOARD = _component("chaos-dashboard", (2333, 2334), 50, (
    _json_log("info", "chaos-dashboard", "Starting chaos-dashboard"),
))
_DNS = _component("chaos-coredns", (53, 9288), 20, (".:53", "CoreDNS-1.7.0", "linux/amd64, go1.15.2"))
_PAUSE = _component("pause", (), 0.3, ())

for _spec in (
    ImageSpec(f"{REGISTRY}/chaos-mesh", (VERSION, "v2.7.1", "v2.7.0", "v2.6.3", "latest"), size_mb=89.4,
              shell="ash", entrypoint=("/usr/local/bin/chaos-controller-manager",),
              commands={"chaos-controller-manager": _MANAGER}),
    ImageSpec(f"{REGISTRY}/chaos-daemon", (VERSION, "v2.7.1", "v2.7.0", "v2.6.3", "latest"), size_mb=215.9,
              shell="bash", entrypoint=("/usr/local/bin/chaos-daemon",), commands={"chaos-daemon": _DAEMON}),
    ImageSpec(f"{REGISTRY}/chaos-dashboard", (VERSION, "v2.7.1", "v2.7.0", "v2.6.3", "latest"), size_mb=98.2,
              shell="ash", entrypoint=("/usr/local/bin/chaos-dashboard",),
              commands={"chaos-dashboard": _DASHBOARD}),
    ImageSpec(f"{REGISTRY}/chaos-coredns", ("v0.2.6", "v0.2.5"), size_mb=42.1, shell="",
              entrypoint=("/coredns",), commands={"coredns": _DNS}),
    # The image pod-failure swaps in (Chaos Mesh's default `podFailurePauseImage`).
    ImageSpec("gcr.io/google-containers/pause", ("latest", "3.2", "3.1"), size_mb=0.68, shell="",
              entrypoint=("/pause",), commands={"pause": _PAUSE}),
):
    register_image(_spec)


def _labels(component: str) -> dict[str, str]:
    return {"app.kubernetes.io/component": component, "app.kubernetes.io/instance": "chaos-mesh",
            "app.kubernetes.io/name": "chaos-mesh", "app.kubernetes.io/part-of": "chaos-mesh",
            "app.kubernetes.io/version": VERSION.lstrip("v")}


def _selector(component: str) -> dict[str, str]:
    return {"app.kubernetes.io/component": component, "app.kubernetes.io/instance": "chaos-mesh",
            "app.kubernetes.io/name": "chaos-mesh"}


def _deployment(name: str, component: str, image: str, command: list[str], ports: list[tuple[str, int]],
                replicas: int, env: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": _labels(component)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": _selector(component)},
            "template": {
                "metadata": {"labels": _labels(component)},
                "spec": {
                    "serviceAccountName": "chaos-controller-manager",
                    "priorityClassName": "",
                    "containers": [{
                        "name": component, "image": image, "imagePullPolicy": "IfNotPresent",
                        "command": command, "env": env or [],
                        "resources": {"requests": {"cpu": "25m", "memory": "256Mi"}},
                        "ports": [{"name": p, "containerPort": n, "protocol": "TCP"} for p, n in ports],
                    }],
                },
            },
        },
    }


def manifests() -> list[dict[str, Any]]:
    """Every object of the installation, in apply order."""
    manager_env = [{"name": "NAMESPACE", "value": NAMESPACE},
                   {"name": "TEMPLATE_NAMESPACE", "value": NAMESPACE},
                   {"name": "ALLOW_HOST_NETWORK_TESTING", "value": "false"},
                   {"name": "TARGET_NAMESPACE", "value": NAMESPACE},
                   {"name": "CLUSTER_SCOPED", "value": "true"},
                   {"name": "POD_FAILURE_PAUSE_IMAGE", "value": "gcr.io/google-containers/pause:latest"},
                   {"name": "CHAOS_DAEMON_SERVICE_PORT", "value": "31767"},
                   {"name": "LEADER_ELECT", "value": "true"}]
    daemon = {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "chaos-daemon", "namespace": NAMESPACE, "labels": _labels("chaos-daemon")},
        "spec": {
            "selector": {"matchLabels": _selector("chaos-daemon")},
            "template": {
                "metadata": {"labels": _labels("chaos-daemon")},
                "spec": {
                    "serviceAccountName": "chaos-daemon",
                    "hostIPC": True, "hostPID": True,
                    "containers": [{
                        "name": "chaos-daemon", "image": f"{REGISTRY}/chaos-daemon:{VERSION}",
                        "imagePullPolicy": "IfNotPresent",
                        "command": ["/usr/local/bin/chaos-daemon", "--runtime", "containerd",
                                    "--http-port", "31766", "--grpc-port", "31767", "--pprof",
                                    "--ca", "/etc/chaos-daemon/cert/ca.crt",
                                    "--cert", "/etc/chaos-daemon/cert/tls.crt",
                                    "--key", "/etc/chaos-daemon/cert/tls.key"],
                        "env": [{"name": "TZ", "value": "UTC"}],
                        "securityContext": {"privileged": True,
                                            "capabilities": {"add": ["SYS_PTRACE"]}},
                        "ports": [{"name": "grpc", "containerPort": 31767, "protocol": "TCP"},
                                  {"name": "http", "containerPort": 31766, "protocol": "TCP"}],
                    }],
                },
            },
        },
    }

    def service(name: str, component: str, ports: list[tuple[str, int, int]], *, headless: bool = False) -> dict[str, Any]:
        spec: dict[str, Any] = {"type": "ClusterIP", "selector": _selector(component),
                                "ports": [{"name": p, "port": port, "targetPort": target, "protocol": "TCP"}
                                          for p, port, target in ports]}
        if headless:
            spec["clusterIP"] = "None"
        return {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": NAMESPACE, "labels": _labels(component)}, "spec": spec}

    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": NAMESPACE, "labels": {"kubernetes.io/metadata.name": NAMESPACE}}},
        *({"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": sa, "namespace": NAMESPACE, "labels": _labels(sa)}}
          for sa in ("chaos-controller-manager", "chaos-daemon", "chaos-dashboard", "chaos-dns-server")),
        _deployment("chaos-controller-manager", "controller-manager", f"{REGISTRY}/chaos-mesh:{VERSION}",
                    ["chaos-controller-manager"], [("webhook", 9443), ("http", 10080), ("pprof", 10081)],
                    3, manager_env),
        daemon,
        _deployment("chaos-dashboard", "chaos-dashboard", f"{REGISTRY}/chaos-dashboard:{VERSION}",
                    ["/usr/local/bin/chaos-dashboard"], [("http", 2333), ("metric", 2334)], 1),
        _deployment("chaos-dns-server", "chaos-dns-server", f"{REGISTRY}/chaos-coredns:v0.2.6",
                    ["/coredns", "-conf", "/etc/coredns/Corefile", "-dns.port", "53"],
                    [("dns", 53), ("metrics", 9288)], 1),
        service("chaos-mesh-controller-manager", "controller-manager",
                [("webhook", 443, 9443), ("http", 10080, 10080), ("pprof", 10081, 10081)]),
        service("chaos-daemon", "chaos-daemon", [("grpc", 31767, 31767), ("http", 31766, 31766)], headless=True),
        service("chaos-dashboard", "chaos-dashboard", [("http", 2333, 2333), ("metric", 2334, 2334)]),
        service("chaos-mesh-dns-server", "chaos-dns-server", [("dns", 53, 53), ("metrics", 9288, 9288)]),
    ]


def install_chaos_mesh(twin: Twin) -> list[dict[str, Any]]:
    """Create the installation; objects that already exist are left alone. Returns the created."""
    created = []
    for obj in manifests():
        kind = twin.store.kind_of(obj)
        meta = obj["metadata"]
        if twin.store.peek(kind, meta.get("namespace") if kind.namespaced else None, meta["name"]) is not None:
            continue
        try:
            created.append(twin.store.create(obj))
        except ApiError:
            continue
    return created
