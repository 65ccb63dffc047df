"""A synthetic microservice app for tests and benchmarks: N services in a layered call graph.

Layer 0 is an HTTP `gateway` (port from its mounted `config.json`); every other service is a gRPC
server (port from env `PORT`) calling `fanout` services of the next layer, with addresses from
env (`DOWNSTREAM_<i>_ADDR`) and the caller's timeout/retry policy from env (`CLIENT_TIMEOUT`,
`CLIENT_RETRIES`), so faults and fixes are ordinary Kubernetes writes. Optionally the last layer
reads through a memcached → MongoDB cache-aside path. All services run the image
`ghcr.io/sregym/synthetic-service:1.0`; each service is its own binary (the container command
names it), registered as a data-plane program.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.programs import program_image
from sregym.twin.dataplane.spec import (
    Call,
    Dependency,
    LogFormat,
    MemoryModel,
    Operation,
    ProgramSpec,
    RequiredSetting,
    RetryPolicy,
    Setting,
    Startup,
    register_program,
)
from sregym.twin.dataplane.workload import RequestMix, WorkloadSpec

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

IMAGE_REPOSITORY = "ghcr.io/sregym/synthetic-service"
IMAGE = f"{IMAGE_REPOSITORY}:1.0"
CONFIG_PATH = "/etc/synthetic/config.json"
GRPC_PORT = 9000
HTTP_PORT = 8080


@dataclass
class SyntheticApp:
    name: str
    namespace: str
    services: list[str]
    manifests: list[dict[str, Any]]
    programs: list[ProgramSpec]
    workload: WorkloadSpec
    edges: dict[str, list[str]] = field(default_factory=dict)

    def deploy(self, twin: Twin, *, workload: bool = True) -> None:
        """Register programs, push the image to this twin's registry, apply the manifests, start
        the workload."""
        from sregym.twin.node.images import catalogue_of

        for spec in self.programs:
            register_program(spec)
        catalogue_of(twin).register(program_image(IMAGE_REPOSITORY, ("1.0", "latest"), [p.name for p in self.programs],
                                                  size_mb=18.2, shell="ash",
                                                  description="sregym synthetic microservice"))
        twin.apply(self.manifests)
        if workload:
            twin.services.dataplane.add_workload(self.workload)


def _grpc_op(service: str) -> str:
    cap = service.replace("-", " ").title().replace(" ", "")
    return f"/{service.replace('-', '')}.{cap}/Handle"


def synthetic_app(name: str = "synth", *, namespace: str | None = None, layers: tuple[int, ...] = (1, 2),
                  fanout: int = 1, replicas: int = 1, cpu_ms: float = 5.0, gateway_cpu_ms: float = 1.0,
                  cpu_limit: str | None = "1", memory_limit: str | None = "256Mi", timeout: str = "1s",
                  retries: int = 0, rps: float = 100.0, with_store: bool = False,
                  leak_mib_per_min: float = 0.0, per_inflight_mib: float = 0.05, cpu_request: str = "100m",
                  overrides: dict[str, dict[str, Any]] | None = None) -> SyntheticApp:
    """Build the app. `layers[0]` must be 1 (the gateway). `overrides[service]` may set
    `cpu_ms`, `cpu_limit`, `timeout`, `retries`, `replicas` per service."""
    namespace = namespace or name
    overrides = overrides or {}
    names: list[list[str]] = []
    for depth, width in enumerate(layers):
        if depth == 0:
            names.append(["gateway"])
        else:
            names.append([f"svc-{depth}-{i}" for i in range(width)])
    edges: dict[str, list[str]] = {}
    for depth, layer in enumerate(names[:-1]):
        following = names[depth + 1]
        for index, service in enumerate(layer):
            # Every service of the next layer gets a caller; `fanout` adds more callees each.
            own = [following[j] for j in range(len(following)) if j % len(layer) == index]
            extra = [following[(index * fanout + j) % len(following)] for j in range(fanout)]
            edges[service] = list(dict.fromkeys(own + extra))
    for service in names[-1]:
        edges.setdefault(service, [])
    prefix = f"{name}-"
    programs: list[ProgramSpec] = []
    manifests: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}]
    leaves = set(names[-1])
    if with_store:
        manifests += _store_manifests(namespace)
    for depth, layer in enumerate(names):
        for service in layer:
            opts = overrides.get(service, {})
            binary = prefix + service
            deps, calls, env = [], [], []
            for j, target in enumerate(edges[service]):
                dep = f"downstream-{j}"
                deps.append(Dependency(name=dep, kind="grpc", address=Setting(env=f"DOWNSTREAM_{j}_ADDR"),
                                       policy=RetryPolicy(timeout=Setting(env="CLIENT_TIMEOUT", default="1s"),
                                                          retries=Setting(env="CLIENT_RETRIES", default="0")),
                                       error_log="request to " + target + " failed: {error}"))
                calls.append(Call(dependency=dep, operation=_grpc_op(target)))
                env.append({"name": f"DOWNSTREAM_{j}_ADDR", "value": f"{target}:{GRPC_PORT}"})
            if with_store and service in leaves:
                deps += [Dependency(name="cache", kind="memcached", address=Setting(env="MEMCACHED_ADDR"),
                                    hit_ratio=0.8, policy=RetryPolicy(timeout=Setting(default="100ms"))),
                         Dependency(name="db", kind="mongodb", address=Setting(env="MONGO_URI"),
                                    policy=RetryPolicy(timeout=Setting(default="2s")),
                                    error_log="mongo query failed: {error}")]
                calls += [Call(dependency="cache", operation="get", id="cache", optional=True),
                          Call(dependency="db", operation="find", collection="items", when="miss:cache"),
                          Call(dependency="cache", operation="set", when="miss:cache", optional=True)]
                env += [{"name": "MEMCACHED_ADDR", "value": "memcached:11211"},
                        {"name": "MONGO_URI", "value": "mongodb://mongodb:27017/items"}]
            env += [{"name": "CLIENT_TIMEOUT", "value": str(opts.get("timeout", timeout))},
                    {"name": "CLIENT_RETRIES", "value": str(opts.get("retries", retries))}]
            gateway = depth == 0
            op = Operation(name="/api" if gateway else _grpc_op(service), method="GET",
                           cpu_ms=float(opts.get("cpu_ms", gateway_cpu_ms if gateway else cpu_ms)), calls=tuple(calls))
            caller = f"cmd/{service}/main.go"
            programs.append(ProgramSpec(
                name=binary, service_name=service, protocol="http" if gateway else "grpc",
                port=Setting(config="port") if gateway else Setting(env="PORT", flag="--port"),
                config_file=CONFIG_PATH if gateway else None, operations=(op,), dependencies=tuple(deps),
                memory=MemoryModel(base_mib=24, per_inflight_mib=per_inflight_mib,
                                   leak_mib_per_min=Setting(env="LEAK_MIB_PER_MIN", default=str(leak_mib_per_min))),
                startup=Startup(seconds=1.0, logs=(f"Starting {service}...",),
                                ready_logs=(f"{service} listening on :{{port}}",),
                                required=(RequiredSetting(setting=Setting(config="port") if gateway
                                                          else Setting(env="PORT", flag="--port"),
                                                          message=f"{service}: listen port not configured",
                                                          exit_code=1),)),
                log=LogFormat(style="zerolog", main_caller=f"{caller}:42",
                              handler_caller=f"services/{service}/server.go:88"),
                http_paths=("/api", "/healthz") if gateway else ()))
            manifests += _service_manifests(service, binary, namespace, gateway, env,
                                            replicas=int(opts.get("replicas", replicas)),
                                            cpu_limit=opts.get("cpu_limit", cpu_limit), memory_limit=memory_limit,
                                            cpu_request=cpu_request)
    workload = WorkloadSpec(name=name, target=f"http://gateway.{namespace}.svc.cluster.local:{HTTP_PORT}",
                            rps=rps, mix=(RequestMix(operation="/api"),))
    return SyntheticApp(name, namespace, [s for layer in names for s in layer], manifests, programs, workload, edges)


def _service_manifests(service: str, binary: str, namespace: str, gateway: bool, env: list[dict[str, str]], *,
                       replicas: int, cpu_limit: str | None, memory_limit: str | None,
                       cpu_request: str = "100m") -> list[dict[str, Any]]:
    port = HTTP_PORT if gateway else GRPC_PORT
    resources: dict[str, Any] = {"requests": {"cpu": cpu_request, "memory": "32Mi"}}
    limits = {k: v for k, v in (("cpu", cpu_limit), ("memory", memory_limit)) if v}
    if limits:
        resources["limits"] = limits
    container: dict[str, Any] = {
        "name": service, "image": IMAGE, "command": [f"/usr/local/bin/{binary}"],
        "ports": [{"name": "http" if gateway else "grpc", "containerPort": port}],
        "env": ([] if gateway else [{"name": "PORT", "value": str(port)}]) + env,
        "resources": resources,
        "readinessProbe": {"tcpSocket": {"port": port}, "periodSeconds": 5},
    }
    out: list[dict[str, Any]] = []
    volumes: list[dict[str, Any]] = []
    if gateway:
        out.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gateway-config", "namespace": namespace},
                    "data": {"config.json": json.dumps({"port": str(HTTP_PORT)}, indent=2)}})
        container["volumeMounts"] = [{"name": "config", "mountPath": "/etc/synthetic"}]
        volumes = [{"name": "config", "configMap": {"name": "gateway-config"}}]
    labels = {"app": service}
    out.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": service, "namespace": namespace,
                                                                           "labels": labels},
                "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels},
                                      "spec": {"containers": [container], **({"volumes": volumes} if volumes else {})}}}})
    out.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": service, "namespace": namespace},
                "spec": {"selector": labels, "ports": [{"name": "http" if gateway else "grpc", "port": port,
                                                        "targetPort": port}]}})
    return out


def _store_manifests(namespace: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, image, port in (("memcached", "memcached:1.6", 11211), ("mongodb", "mongo:4.4.6", 27017)):
        labels = {"app": name}
        out.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
                    "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                             "template": {"metadata": {"labels": labels},
                                          "spec": {"containers": [{"name": name, "image": image,
                                                                   "ports": [{"containerPort": port}]}]}}}})
        out.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
                    "spec": {"selector": labels, "ports": [{"port": port, "targetPort": port}]}})
    return out


__all__ = ["IMAGE", "SyntheticApp", "synthetic_app"]
