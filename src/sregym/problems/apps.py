"""Apps as problems need them: objects to apply through a `Cluster`, entry point and SLO.

Problems name an app. Apps of the application catalogue (`sregym.apps`, e.g. Hotel Reservation)
are used from there; small built-in apps for the framework's own problems register here with
`register_app`. Deployment goes through `Cluster.apply`, so it works over the wire too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sregym.twin.yamldocs import load_documents


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
        slo_window_s=spec.slo.window_s)
