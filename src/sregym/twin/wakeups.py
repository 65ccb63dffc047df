"""Event-driven controller scheduling: which controllers have work this tick.

Most controllers are level-triggered functions of the store: run twice on an unchanged store, the
second run does nothing. Calling them every tick of a steady cluster is pure cost. A controller
opts in by naming `quiet_kinds` (the kinds whose writes can never give it work, typically Events
and Leases, which a real cluster writes all the time) and, if it has timers, by answering
`next_due()` (the simulated time its earliest timer fires). It then runs only when

- it has never run, or
- some object of another kind changed since its last run started (a watch event; writes it made
  itself count, so a controller that wrote something looks again next tick, like a requeue), or
- its timer is due, or
- it asked to run again (`requeue()`, after a write the API refused).

Controllers that leave `quiet_kinds` as `None` run every tick, as before. Every decision depends
only on store resourceVersions and simulated time, so the same seed still gives the same run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sregym.twin.controller import Controller
    from sregym.twin.machinery.store import ObjectStore, WatchEvent


class WakeSchedule:
    """Tracks, per set of quiet kinds, the resourceVersion of the newest change outside it, and per
    controller the resourceVersion at which its last run started."""

    def __init__(self, store: ObjectStore, controllers: Iterable[Controller], *, enabled: bool = True) -> None:
        self._store = store
        self.enabled = enabled
        self._newest: dict[frozenset[str], int] = {}
        self._quiet: dict[str, frozenset[str]] = {}
        for ctl in controllers:
            if ctl.quiet_kinds is not None:
                quiet = frozenset(ctl.quiet_kinds)
                self._quiet[ctl.name] = quiet
                self._newest.setdefault(quiet, store.resource_version)
        self._started: dict[str, int] = {}
        self.skipped = 0  # controller runs saved (a figure for benchmarks and tests)
        if self._newest:
            store.add_listener(self._on_change)

    def _on_change(self, event: WatchEvent) -> None:
        kind = event.kind.kind
        newest = self._newest
        for quiet in newest:
            if kind not in quiet:
                newest[quiet] = event.resource_version

    def due(self, ctl: Controller, now: float) -> bool:
        """Whether `ctl` runs this tick; when it does, its run is recorded as starting now."""
        quiet = self._quiet.get(ctl.name)
        if quiet is None or not self.enabled:
            return True
        started = self._started.get(ctl.name)
        if started is None or ctl.requeued or self._newest[quiet] > started or now >= ctl.next_due():
            self._started[ctl.name] = self._store.resource_version
            ctl.requeued = False
            return True
        self.skipped += 1
        return False


__all__ = ["WakeSchedule"]
