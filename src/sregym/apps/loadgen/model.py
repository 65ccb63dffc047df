"""The two load shapes an app can ask for: open loop (wrk2) and closed loop (Locust)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.node.images import ImageSpec


@dataclass(frozen=True)
class RequestClass:
    """One kind of request in a workload mix: share, method, path template, expected status."""

    name: str
    weight: float
    method: str
    path: str  # may hold {lat}/{lon}/{in_date}/{out_date}/{user}/{hotel} placeholders
    operation: str = ""  # the frontend operation (span name) it exercises

    @property
    def entry_operation(self) -> str:
        return self.operation or self.path.split("?", 1)[0]


@dataclass(frozen=True)
class OpenLoop:
    """An open-loop (wrk2-like) generator: constant arrival rate, exponential inter-arrivals.

    `script` builds the wrk2 Lua script from the workload (an app with its own script, like
    DeathStarBench's mixed workload, gives it); without one the script is generated from `mix`."""

    target: str  # base URL as the generator reaches it (Service DNS name and port)
    rate: float  # requests per second
    mix: tuple[RequestClass, ...]
    connections: int = 100
    threads: int = 3
    distribution: str = "exp"
    script: Callable[[OpenLoop], str] | None = None
    script_name: str = "workload.lua"

    def manifests(self, app_name: str) -> str:
        from sregym.apps.loadgen import wrk2

        return wrk2.manifests(app_name, self)

    def images(self) -> tuple[ImageSpec, ...]:
        from sregym.apps.loadgen import wrk2

        return wrk2.images()

    def declare(self, twin: Any, app_name: str) -> None:
        """Declare the app's generated workload in the data plane before the generator runs, so
        `set_load`/`burst` can be called right after deploying."""
        from sregym.twin.dataplane.loadgen import ensure_workload
        from sregym.twin.dataplane.workload import RequestMix

        mix = tuple(RequestMix(operation=m.entry_operation, method=m.method, weight=m.weight) for m in self.mix)
        ensure_workload(twin, app_name, self.target, self.rate, mix)


Workload = OpenLoop  # the name apps used before the closed-loop generator existed


@dataclass(frozen=True)
class Request:
    """One request of a user flow."""

    method: str
    path: str
    operation: str = ""  # the entry operation it exercises (default: the path without query)


@dataclass(frozen=True)
class Task:
    """A weighted user flow: its requests are sent one after another, each after the previous
    one answered."""

    name: str
    weight: int
    requests: tuple[Request, ...]


@dataclass(frozen=True)
class ClosedLoop:
    """A closed-loop (Locust-like) generator: `users` users, spawned at `spawn_rate` per second,
    each picking a task by weight, running its requests, then thinking `think_time_s`."""

    target: str
    users: int
    spawn_rate: float
    think_time_s: float
    tasks: tuple[Task, ...]

    def manifests(self, app_name: str) -> str:
        from sregym.apps.loadgen import locust

        return locust.manifests(app_name, self)

    def images(self) -> tuple[ImageSpec, ...]:
        from sregym.apps.loadgen import locust

        return locust.images()

    def declare(self, twin: Any, app_name: str) -> None:
        """Nothing to declare: the workload exists while a `locust` process runs."""


LoadGenerator = OpenLoop | ClosedLoop

__all__ = ["ClosedLoop", "LoadGenerator", "OpenLoop", "Request", "RequestClass", "Task", "Workload"]
