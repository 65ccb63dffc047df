"""The application catalogue: what can be deployed into a twin (or a real cluster) by name.

An app is plain data plus YAML: the namespace it lives in, the paragraph an on-call engineer is
told about it, its manifests exactly as a user would `kubectl apply -f` them, the open-loop
workload that drives it, and the SLOs its entry points are held to. Apps register with `@app`
and are discovered lazily from the `sregym.apps` package like every other registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

from sregym.registry import Registry

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


@dataclass(frozen=True)
class RequestClass:
    """One kind of request in a workload mix: share, method, path template, expected status."""

    name: str
    weight: float
    method: str
    path: str  # may hold {lat}/{lon}/{in_date}/{out_date}/{user}/{hotel} placeholders
    operation: str = ""  # the frontend operation (span name) it exercises


@dataclass(frozen=True)
class Workload:
    """An open-loop (wrk2-like) generator: constant arrival rate, exponential inter-arrivals."""

    target: str  # base URL as the generator reaches it (Service DNS name and port)
    rate: float  # requests per second
    mix: tuple[RequestClass, ...]
    connections: int = 100
    threads: int = 3
    distribution: str = "exp"


@dataclass(frozen=True)
class Slo:
    """Service-level objectives at the app's entry points (over a rolling window)."""

    success_ratio: float = 0.995
    p95_latency_ms: float = 500.0
    window_s: float = 60.0
    entry_service: str = "frontend"


@dataclass(frozen=True)
class AppSpec:
    name: str
    namespace: str
    description: str
    manifest_package: str  # package holding `manifests/*.yaml`
    workload: Workload
    slo: Slo = Slo()
    # Deployments (and StatefulSets) every healthy deployment has, with replicas.
    baseline: dict[str, int] = field(default_factory=dict)
    extra_manifests: Callable[[], str] | None = None

    def manifest_files(self) -> list[tuple[str, str]]:
        """(file name, YAML text) in apply order (files are named with an ordering prefix)."""
        root = resources.files(self.manifest_package).joinpath("manifests")
        files = sorted((p.name, p.read_text()) for p in root.iterdir() if p.name.endswith((".yaml", ".yml")))
        return files

    def manifests(self) -> str:
        """Every manifest as one multi-document YAML stream, app first, then the load generator."""
        docs = [text.strip() for _, text in self.manifest_files()]
        if self.extra_manifests is not None:
            docs.append(self.extra_manifests().strip())
        return "\n---\n".join(d.removeprefix("---").strip() for d in docs) + "\n"

    def deploy(self, twin: Twin) -> list[dict[str, Any]]:
        """Apply the manifests (namespace first) into a twin; returns the created objects."""
        return twin.apply(self.manifests())


APPS: Registry[AppSpec] = Registry("app", ("sregym.apps",))


def app(fn: Callable[[], AppSpec]) -> Callable[[], AppSpec]:
    """Decorator on a zero-argument function building an AppSpec: registers it by name."""
    spec = fn()
    APPS.register(spec.name, spec, replace=True)
    return fn


def get_app(name: str) -> AppSpec:
    return APPS.get(name)


def list_apps() -> list[str]:
    """Names of every registered application."""
    return APPS.names()


def deploy_app(twin: Twin, name: str) -> AppSpec:
    """What `sregym twin up --app <name>` does: apply the app and its workload generator."""
    spec = get_app(name)
    spec.deploy(twin)
    if spec.extra_manifests is not None:  # the app ships its load generator: declare its workload
        from sregym.twin.dataplane.loadgen import ensure_workload
        from sregym.twin.dataplane.workload import RequestMix

        mix = tuple(RequestMix(operation=m.operation or m.path.split("?", 1)[0], method=m.method, weight=m.weight)
                    for m in spec.workload.mix)
        ensure_workload(twin, spec.name, spec.workload.target, spec.workload.rate, mix)
    return spec
