"""The application catalogue: what can be deployed into a twin (or a real cluster) by name.

An app is one folder `apps/<app>/` whose `AppSpec` holds everything about it: the namespace it
lives in, the paragraph an on-call engineer is told, its manifests (YAML files exactly as a user
would `kubectl apply -f` them, or a python `objects` builder), the data-plane programs its images
run and the images themselves (pushed to each twin the app is deployed into, never to a shared
registry), its load generator (open or closed loop), its entry point and SLOs, the ports of its
services (one table that programs, manifests' checks and problems read) and its healthy baseline.
Apps register with `@app` and are discovered lazily from the `sregym.apps` package like every
other registry; an app folder next to third-party problems is loaded with them
(`load_apps_dir`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import yaml

from sregym.apps.loadgen.model import ClosedLoop, OpenLoop, RequestClass, Workload
from sregym.registry import Registry, import_plugin_file

if TYPE_CHECKING:
    from sregym.twin.dataplane.spec import ProgramSpec
    from sregym.twin.node.images import ImageSpec
    from sregym.twin.twin import Twin


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
    description: str = ""
    # The manifests: `manifests/*.yaml` of a package, or of a directory, or a python builder.
    manifest_package: str = ""
    manifest_dir: str = ""
    objects_fn: Callable[[], list[dict[str, Any]]] | None = None
    load: OpenLoop | ClosedLoop | None = None
    slo: Slo = Slo()
    # Deployments (and StatefulSets) every healthy deployment has, with replicas.
    baseline: dict[str, int] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)  # service -> port, the app's one table
    images: tuple[ImageSpec, ...] = ()
    programs: Callable[[], Iterable[ProgramSpec]] | None = None
    # The entry point (default: the load generator's target host and port).
    entry_service: str = ""
    entry_port: int = 0
    # Workloads that send the app its traffic ("Kind/namespace/name"); default: the Deployments
    # of the manifests annotated with the app's name (how the data plane attributes traffic).
    load_generators: tuple[str, ...] | None = None

    # -------------------------------------------------------------- manifests
    def manifest_files(self) -> list[tuple[str, str]]:
        """(file name, YAML text) in apply order (files are named with an ordering prefix)."""
        if self.manifest_dir:
            root: Any = Path(self.manifest_dir)
        elif self.manifest_package:
            root = resources.files(self.manifest_package).joinpath("manifests")
        else:
            return []
        return sorted((p.name, p.read_text()) for p in root.iterdir() if p.name.endswith((".yaml", ".yml")))

    def manifests(self) -> str:
        """Every manifest as one multi-document YAML stream, app first, then the load generator."""
        if self.objects_fn is not None:
            docs = [yaml.safe_dump(o, sort_keys=False) for o in self.objects_fn()]
        else:
            docs = [text.strip() for _, text in self.manifest_files()]
        if self.load is not None:
            docs.append(self.load.manifests(self.name).strip())
        return "\n---\n".join(d.removeprefix("---").strip() for d in docs) + "\n"

    def objects(self) -> list[dict[str, Any]]:
        """The objects to apply, in order (what `manifests()` holds, parsed)."""
        from sregym.twin.machinery.yamldocs import load_documents

        if self.objects_fn is not None and self.load is None:
            return self.objects_fn()
        return load_documents(self.manifests())

    # ------------------------------------------------------------ entry point
    @property
    def entry(self) -> tuple[str, int]:
        """(Service, port) where users reach the app."""
        if self.entry_service:
            return self.entry_service, self.entry_port
        target = self.load.target if self.load is not None else ""
        parts = urlsplit(target if "://" in target else f"http://{target}")
        return (parts.hostname or self.slo.entry_service).split(".")[0], parts.port or 80

    @cached_property
    def generators(self) -> tuple[str, ...]:
        """The app's load generators ("Kind/namespace/name")."""
        if self.load_generators is not None:
            return self.load_generators
        from sregym.apps.loadgen.wrk2 import APP_ANNOTATION

        return tuple(f"{o['kind']}/{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}"
                     for o in self.objects() if o.get("kind") == "Deployment"
                     and ((o["metadata"].get("annotations") or {}).get(APP_ANNOTATION) == self.name))

    # ------------------------------------------------------------------ images
    def all_images(self) -> tuple[ImageSpec, ...]:
        """The app's images and its load generator's."""
        return (*self.images, *(self.load.images() if self.load is not None else ()))

    def push_images(self, target: Any) -> None:
        """Push the app's images to the registry of `target` (a twin, or a cluster wrapping one);
        a real cluster pulls from real registries, so there is nothing to push."""
        from sregym.twin.node.images import catalogue_of

        twin = getattr(target, "twin", target)
        if hasattr(twin, "services"):
            catalogue = catalogue_of(twin)
            for image in self.all_images():
                catalogue.register(image)

    # ------------------------------------------------------------------ deploy
    def deploy(self, twin: Twin) -> list[dict[str, Any]]:
        """Push the images, apply the manifests (namespace first) into a twin; returns the created objects."""
        self.push_images(twin)
        return twin.apply(self.manifests())


APPS: Registry[AppSpec] = Registry("app", ("sregym.apps",))


def register(spec: AppSpec) -> AppSpec:
    """Add an app to the catalogue (replacing one of the same name) and its programs to the data plane."""
    if spec.programs is not None:
        from sregym.twin.dataplane.spec import register_program

        for program in spec.programs():
            register_program(program)
    APPS.register(spec.name, spec, replace=True)
    return spec


def app(fn: Callable[[], AppSpec]) -> Callable[[], AppSpec]:
    """Decorator on a zero-argument function building an AppSpec: registers it by name."""
    register(fn())
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
    if spec.load is not None:
        spec.load.declare(twin, spec.name)
    return spec


def load_apps_dir(directory: str | Path) -> list[str]:
    """Import the app folders of `directory` (each subfolder with an `app.py`, sorted) as
    `sregym_user_apps.<folder>.app`; returns the names of the apps they registered."""
    before = set(APPS.names())
    root = Path(directory).expanduser().resolve()
    for path in sorted(root.glob("*/app.py")):
        import_plugin_file(path, f"sregym_user_apps.{path.parent.name}.app", root)
    return sorted(set(APPS.names()) - before)


__all__ = ["APPS", "AppSpec", "ClosedLoop", "OpenLoop", "RequestClass", "Slo", "Workload", "app", "deploy_app",
           "get_app", "list_apps", "load_apps_dir", "register"]
