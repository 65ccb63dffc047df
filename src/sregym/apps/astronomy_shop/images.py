"""The demo's images, pushed to each twin the app is deployed into.

All services share one repository (`ghcr.io/open-telemetry/demo`, tag `<version>-<service>`), so
one catalogue entry serves every tag: its main program looks at which tag the container runs and
starts that service's program; flagd-ui only starts and listens for now. The `<v>-kafka` tag is
another build (FROM apache/kafka, `src/kafka/Dockerfile`), pushed with its own image config: the
twin's Kafka broker with the demo's KRaft env. flagd is its own image (`ghcr.io/open-feature/flagd`,
binary `/flagd-build`). The `<v>-product-catalog` tag is pushed with its Dockerfile's config
(WORKDIR /usr/src/app, `ENTRYPOINT ["./product-catalog"]`), so a container `command` naming
another executable fails to start as containerd reports it (`exec: "<cmd>": executable file not
found in $PATH`); the other tags still start their service whatever the command. The
`<v>-frontend-proxy` tag renders and loads its Envoy template at start (`envoy_bootstrap.py`):
`/home/envoy/envoy.tmpl.yaml`, the image's own (`envoy.tmpl.yaml` here) unless a volume is
mounted over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from sregym.apps.astronomy_shop import loadgen
from sregym.apps.astronomy_shop.manifests import APP_VERSION, NAMESPACE, component_port, images
from sregym.apps.astronomy_shop.programs import PREFIX, astronomy_programs
from sregym.apps.loadgen import wrk2
from sregym.twin.dataplane.envoy_bootstrap import start_envoy
from sregym.twin.dataplane.locust import locust_command
from sregym.twin.dataplane.programs import program_command
from sregym.twin.datastores.kafka_image import DEMO_ENV, kafka_image
from sregym.twin.node.images import ImageSpec, serve
from sregym.twin.node.shell import Invocation, Program
from sregym.twin.node.shell.effects import Listen

DEMO_REPOSITORY = "ghcr.io/open-telemetry/demo"
# Components that only start and listen (ports) with their start-up lines.
_IDLE: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "flagd-ui": ((4000,), ("[info] Running FlagdUiWeb.Endpoint with Bandit 1.7.0 at :::4000 (http)",)),
}


def _component(call: Invocation) -> str:
    pod = call.ctx.pod or {}
    spec = pod.get("spec") or {}
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        if container.get("name") == call.ctx.container:
            tag = str(container.get("image", "")).rpartition(":")[2]
            return tag.partition("-")[2] if "-" in tag else ""
    return ""


@dataclass
class _Baked(Invocation):
    """An invocation that also reads the files the image was built with."""

    baked: dict[str, str] = field(default_factory=dict)

    def read_file(self, path: str) -> str | None:
        return self.baked.get(path) if path in self.baked else super().read_file(path)


def _load_generator(call: Invocation) -> Program:
    """The image's `locust --skip-log-setup`: Locust configured by the chart's LOCUST_* env vars,
    its web UI on LOCUST_WEB_PORT (8089), the test started at once (LOCUST_AUTOSTART)."""
    env = call.ctx.env
    target = f"http://frontend-proxy.{NAMESPACE}.svc.cluster.local:{component_port('frontend-proxy')}"
    argv = ["locust", "-f", env.get("LOCUST_LOCUSTFILE") or loadgen.LOCUSTFILE_PATH,
            "-u", env.get("LOCUST_USERS") or "1", "-r", env.get("LOCUST_SPAWN_RATE") or "1",
            "-H", env.get("LOCUST_HOST") or target]
    port = int(env.get("LOCUST_WEB_PORT") or "8089")
    call.write(f"Starting web interface at http://{env.get('LOCUST_WEB_HOST') or '0.0.0.0'}:{port}\n", "stderr")
    yield Listen(port, "TCP", http_paths=("/", "/stats/requests", "/stats/report"), handler="locust-web")
    baked = _Baked(argv=argv, ctx=call.ctx, shell=call.shell, stdin=call.stdin, pending=call.pending,
                   baked={loadgen.LOCUSTFILE_PATH: loadgen.locustfile(loadgen.workload(target))})
    return (yield from locust_command(baked))  # type: ignore[misc]


ENVOY_TEMPLATE = "/home/envoy/envoy.tmpl.yaml"  # the image's WORKDIR copy (src/frontend-proxy/Dockerfile)


@cache
def _baked_envoy_template() -> str:
    return resources.files(__package__).joinpath("envoy.tmpl.yaml").read_text()


def _frontend_proxy(call: Invocation) -> Program:
    """The image's `envsubst < envoy.tmpl.yaml > envoy.yaml && envoy -c envoy.yaml`: the template
    mounted over the image's (a ConfigMap) or the image's own, loaded once at start."""
    template = call.read_file(ENVOY_TEMPLATE)
    failed = start_envoy(call, template if template is not None else _baked_envoy_template())
    if failed is not None:
        return failed
    return (yield from program_command(PREFIX + "frontend-proxy")(call))


def _main(call: Invocation) -> Program:
    name = _component(call)
    if name == "load-generator":
        return (yield from _load_generator(call))
    if name == "frontend-proxy":
        return (yield from _frontend_proxy(call))
    if name in _IDLE:
        ports, logs = _IDLE[name]
        return (yield from serve(call, ports=ports, http_paths=None, startup_seconds=2.0, memory_mb=60.0,
                                 logs=list(logs)))
    return (yield from program_command(PREFIX + name)(call))


def _jvm_main(call: Invocation) -> Program:
    """ad's and fraud-detection's tags: the same start, in a JVM (JVMChaos can attach to it)."""
    return (yield from _main(call))


JVM_COMPONENTS = ("ad", "fraud-detection")  # src/ad is Java, src/fraud-detection Kotlin


def demo_images() -> tuple[ImageSpec, ...]:
    served = {p.service_name for p in astronomy_programs()} | set(_IDLE) | {"load-generator"}
    tags = tuple(sorted(f"{APP_VERSION}-{name}" for name in served if name != "flagd"))
    refs: dict[str, Any] = images()
    return (
        ImageSpec(DEMO_REPOSITORY, tags, size_mb=180.0, description="OpenTelemetry demo service",
                  shell="ash", extras={"main": _main}),
        kafka_image(DEMO_REPOSITORY, (f"{APP_VERSION}-kafka",), kafka_env=DEMO_ENV),
        ImageSpec(DEMO_REPOSITORY, tuple(f"{APP_VERSION}-{name}" for name in JVM_COMPONENTS), size_mb=180.0,
                  description="OpenTelemetry demo JVM service", shell="ash", extras={"main": _jvm_main, "jvm": True}),
        ImageSpec(DEMO_REPOSITORY, (f"{APP_VERSION}-product-catalog",), size_mb=40.0,
                  description="OpenTelemetry demo product-catalog (Go)", shell="ash",
                  entrypoint=("./product-catalog",), extras={"main": _main},
                  commands={"product-catalog": _main}),
        ImageSpec("ghcr.io/open-feature/flagd", (refs["flagd"].rpartition(":")[2],), size_mb=32.0, shell="",
                  entrypoint=("/flagd-build",), cmd=("start",),
                  commands={"/flagd-build": program_command(PREFIX + "flagd"),
                            "flagd-build": program_command(PREFIX + "flagd")}),
        ImageSpec("docker.io/valkey/valkey", (refs["valkey-cart"].rpartition(":")[2],)),
        ImageSpec("docker.io/library/postgres", (refs["postgresql"].rpartition(":")[2],)),
        ImageSpec("docker.io/otel/opentelemetry-collector-contrib", ("0.142.0",), size_mb=95.0, shell="",
                  ports=(4317, 4318, 13133, 14250, 14268, 9411), http_paths=(), memory_mb=60.0,
                  startup_logs=("info\tservice@v0.142.0/service.go:221\tStarting otelcol-contrib...",
                                "info\tservice@v0.142.0/service.go:244\tEverything is ready. Begin running and "
                                "processing data.")),
        ImageSpec("docker.io/jaegertracing/jaeger", ("2.14.1",), size_mb=40.0, shell="",
                  ports=(16686, 16685, 4317, 4318, 13133), http_paths=(), memory_mb=50.0,
                  startup_logs=("info\tservice@v0.142.0/service.go:221\tStarting jaeger...",)),
        *wrk2.images(),  # an HTTP client outside the app (the edge filter problem's crafted requests)
    )


__all__ = ["DEMO_REPOSITORY", "demo_images"]
