"""The controller contract and its registry."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from sregym.registry import Registry

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

# Where `@controller` classes live: the Kubernetes behaviours in `twin/controllers`, and the
# controllers that belong to a subsystem, listed by module so discovery imports only those.
CONTROLLER_MODULES = (
    "sregym.twin.controllers",
    "sregym.twin.chaos.nodeos",
    "sregym.twin.chaos.controller",
    "sregym.twin.dataplane.engine",
    "sregym.twin.dataplane.envoy",
    "sregym.twin.ingress.controller",
    "sregym.twin.telemetry.scrape",
    "sregym.twin.telemetry.alerts",
)
CONTROLLERS: Registry[type[Controller]] = Registry("controller", CONTROLLER_MODULES)


class Controller:
    """A reconcile loop run once per tick.

    Subclasses read the store (prefer `twin.store.scan()` in hot paths, never mutating what it
    yields), write through `twin.store.create/update/update_status/mutate/delete`, and record
    events through `twin.events`. One instance lives per twin, so per-twin memory (back-off
    timers, expectations) belongs on `self`.
    """

    name: ClassVar[str] = "controller"
    order: ClassVar[int] = 100
    # The identity used for admission (quota, webhooks see this user).
    user: ClassVar[str] = "system:kube-controller-manager"

    def __init__(self, twin: Twin) -> None:
        self.twin = twin

    def reconcile(self) -> None:
        raise NotImplementedError


def controller(cls: type[Controller]) -> type[Controller]:
    """Class decorator: register a controller under its `name` and `order`."""
    CONTROLLERS.register(cls.name, cls, order=cls.order)
    return cls
