"""The controller contract and its registry."""

from __future__ import annotations

import math
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
    """A reconcile loop run once per tick (or, with `quiet_kinds`, on the ticks it has work).

    Subclasses read the store (prefer `twin.store.scan()` in hot paths, never mutating what it
    yields), write through `twin.store.create/update/update_status/mutate/delete`, and record
    events through `twin.events`. One instance lives per twin, so per-twin memory (back-off
    timers, expectations) belongs on `self`.
    """

    name: ClassVar[str] = "controller"
    order: ClassVar[int] = 100
    # The identity used for admission (quota, webhooks see this user).
    user: ClassVar[str] = "system:kube-controller-manager"

    # Event-driven scheduling (`twin/wakeups.py`): the kinds whose writes can never give this
    # controller work. `None` (the default) runs it every tick; a tuple runs it only after a
    # change to any other kind, or when `next_due()` has come.
    quiet_kinds: ClassVar[tuple[str, ...] | None] = None
    requeued: bool = False  # set by `requeue()`, cleared when the controller next runs

    def __init__(self, twin: Twin) -> None:
        self.twin = twin

    def reconcile(self) -> None:
        raise NotImplementedError

    def next_due(self) -> float:
        """The simulated time (epoch seconds) this controller's earliest timer fires, so a
        controller with `quiet_kinds` still runs on time with nothing changing; inf: no timer."""
        return math.inf

    def requeue(self) -> None:
        """Run again next tick even if nothing changes: a write the API refused (a webhook, a
        conflict, a quota) is retried like a workqueue requeue, not left until the next change."""
        self.requeued = True


def controller(cls: type[Controller]) -> type[Controller]:
    """Class decorator: register a controller under its `name` and `order`."""
    CONTROLLERS.register(cls.name, cls, order=cls.order)
    return cls
