"""Apps as problems need them: objects to apply through a `Cluster`, entry point and SLO.

Problems name an app. Apps of the application catalogue (`sregym.apps`, e.g. Hotel Reservation)
are used from there; small built-in apps for the framework's own problems register here with
`register_app`. Deployment goes through `Cluster.apply`, so it works over the wire too.

`load_generators` names the workloads that send the app its traffic ("Kind/namespace/name"):
the mitigation oracle holds them to their healthy baseline, so stopping the traffic is never a
fix. A catalogue app's generators are the Deployments of its manifests that carry the data
plane's `sregym.io/app` annotation (how the data plane attributes their traffic to the app).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from sregym.twin.machinery.yamldocs import load_documents


@dataclass(frozen=True)
class ProblemApp:
    name: str
    namespace: str
    objects: Callable[[], list[dict[str, Any]]]
    entry_service: str = ""
    entry_port: int = 0
    slo_success_ratio: float = 0.99
    slo_p95_ms: float = 1000.0
    slo_window_s: float = 60.0
    load_generators: tuple[str, ...] = ()


_APPS: dict[str, ProblemApp] = {}


def register_app(app: ProblemApp) -> ProblemApp:
    _APPS[app.name] = app
    return app


def resolve_app(name: str) -> ProblemApp:
    """A built-in problem app, or an app of the `sregym.apps` catalogue."""
    if name in _APPS:
        return _APPS[name]
    from sregym.apps import get_app

    spec = get_app(name)
    target = urlsplit(spec.workload.target if "://" in spec.workload.target else f"http://{spec.workload.target}")
    host = (target.hostname or spec.slo.entry_service).split(".")[0]
    return ProblemApp(
        name=spec.name, namespace=spec.namespace,
        objects=lambda: load_documents(spec.manifests()),
        entry_service=host, entry_port=target.port or 80,
        slo_success_ratio=spec.slo.success_ratio, slo_p95_ms=spec.slo.p95_latency_ms,
        slo_window_s=spec.slo.window_s, load_generators=_load_generators(spec.name))


@cache
def _load_generators(app: str) -> tuple[str, ...]:
    """The catalogue app's load generators: its Deployments annotated with the app's name."""
    from sregym.apps import get_app
    from sregym.twin.dataplane.loadgen import APP_ANNOTATION

    objects = load_documents(get_app(app).manifests())
    return tuple(f"{o['kind']}/{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}"
                 for o in objects if o.get("kind") == "Deployment"
                 and ((o["metadata"].get("annotations") or {}).get(APP_ANNOTATION) == app))
