"""`Twin`: the emulated cluster assembled from clock, store, admission chain and controllers.

This is the in-process Python API (no server needed): create a twin with a seed, apply manifests,
advance simulated time, read objects, logs and events. Everything the API server, fault injectors
and oracles do goes through the same store and controllers, so behaviour is identical in-process
and over the wire.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sregym.twin.admission.base import ADMISSION_PLUGINS, AdmissionPlugin
from sregym.twin.clock import SimClock
from sregym.twin.cluster_defaults import default_objects, stamp_node_identity
from sregym.twin.controller import CONTROLLERS, Controller
from sregym.twin.machinery.events import EventRecorder
from sregym.twin.machinery.kinds import KindRegistry
from sregym.twin.machinery.objects import clone
from sregym.twin.machinery.store import ADMIN_USER, ObjectStore
from sregym.twin.machinery.yamldocs import load_documents
from sregym.twin.node.resource_metrics import ServedPodMetrics
from sregym.twin.rng import RngStreams
from sregym.twin.services import TwinServices
from sregym.twin.topology import (
    SYSTEM_NAMESPACES,
    Topology,
    namespace_object,
    node_cidr_mask,
    node_object,
    system_objects,
)
from sregym.twin.wakeups import WakeSchedule


class Twin:
    """An emulated Kubernetes cluster.

    >>> twin = Twin(seed=7)
    >>> twin.apply(open("app.yaml").read())
    >>> twin.advance(30)
    >>> [p["status"]["phase"] for p in twin.list("pods", "default")]
    """

    def __init__(self, seed: int = 0, *, tick: float = 1.0, topology: Topology | None = None,
                 bootstrap: bool = True, event_driven: bool = True) -> None:
        _load_commands()
        self.seed = seed
        self.clock = SimClock(tick=tick)
        self.rng = RngStreams(seed)
        self.kinds = KindRegistry()
        self.store = ObjectStore(self.clock, self.rng, self.kinds)
        self.events = EventRecorder(self.store, self.clock)
        self.topology = topology or Topology.default()
        # Per-twin state owned by subsystems (kubelet runtime, logs, data plane ...), one typed
        # attribute each, so subsystems can find each other without import cycles.
        self.services = TwinServices()
        # metrics-server is part of the cluster in every mode: the HPA reads what `kubectl top` shows.
        self.services.metrics = ServedPodMetrics(self)
        self.plugins: list[AdmissionPlugin] = []
        for entry in ADMISSION_PLUGINS.entries():
            plugin = entry.value(self)
            self.plugins.append(plugin)
            self.store.add_mutator(entry.name, plugin.mutate, entry.order)
            self.store.add_validator(entry.name, plugin.validate, entry.order)
        self.controllers: list[Controller] = [entry.value(self) for entry in CONTROLLERS.entries()]
        # `event_driven=False` runs every controller every tick (the reference the tests compare
        # event-driven runs against).
        self.wakeups = WakeSchedule(self.store, self.controllers, enabled=event_driven)
        if bootstrap:
            self._bootstrap()

    # -------------------------------------------------------------- bootstrap
    def _bootstrap(self) -> None:
        now = self.clock.iso()
        for ns in SYSTEM_NAMESPACES:
            self.store.create(namespace_object(ns), keep_status=True)
        mask = node_cidr_mask(len(self.topology.nodes))
        for index, spec in enumerate(self.topology.nodes):
            self.store.create(stamp_node_identity(node_object(spec, index, now, mask), self), keep_status=True)
        for obj in system_objects():
            self.store.create(obj)
        for obj in default_objects(self):
            self.store.create(obj, keep_status=True)
        from sregym.twin.telemetry import stack

        stack.install(self)  # the monitoring stack's pods, behind the scrape targets
        self.advance(self.clock.tick)

    def controller(self, name: str) -> Controller:
        for ctl in self.controllers:
            if ctl.name == name:
                return ctl
        raise KeyError(f"no controller named {name!r}")

    # ------------------------------------------------------------------ time
    def step(self) -> None:
        """One tick: advance the clock, then run every controller that has work, in order."""
        now = self.clock.step()
        due = self.wakeups.due
        for ctl in self.controllers:
            if due(ctl, now):
                ctl.reconcile()

    def advance(self, seconds: float) -> None:
        """Advance simulated time by at least `seconds` (whole ticks)."""
        ticks = max(1, round(seconds / self.clock.tick)) if seconds > 0 else 0
        for _ in range(ticks):
            self.step()

    def settle(self, max_seconds: float = 120, *, until: Any = None) -> bool:
        """Advance tick by tick until `until()` is true (or time runs out). Returns whether it
        became true."""
        elapsed = 0.0
        while elapsed < max_seconds:
            if until is not None and until():
                return True
            self.step()
            elapsed += self.clock.tick
        return bool(until()) if until is not None else True

    # ---------------------------------------------------------------- writes
    def apply(self, manifests: str | dict[str, Any] | Iterable[dict[str, Any]], *,
              namespace: str | None = None, user: str = ADMIN_USER) -> list[dict[str, Any]]:
        """Create or update objects from YAML text, one object, or many (like `kubectl apply`,
        without the last-applied bookkeeping: an existing object's spec/data is replaced and its
        status kept)."""
        results = []
        for obj in _objects_from(manifests):
            if namespace and self.kinds.by_kind(obj["apiVersion"], obj["kind"]).namespaced:
                obj.setdefault("metadata", {}).setdefault("namespace", namespace)
            kind = self.store.kind_of(obj)
            meta = obj.get("metadata") or {}
            ns = (meta.get("namespace") or "default") if kind.namespaced else None
            existing = self.store.peek(kind, ns, meta.get("name", "")) if meta.get("name") else None
            if existing is None:
                results.append(self.store.create(obj, user=user))
                continue
            merged = clone(obj)
            merged_meta = merged.setdefault("metadata", {})
            old_meta = existing["metadata"]
            merged_meta["resourceVersion"] = old_meta["resourceVersion"]
            for keep in ("uid", "creationTimestamp", "generation", "ownerReferences", "finalizers"):
                if keep in old_meta and keep not in merged_meta:
                    merged_meta[keep] = clone(old_meta[keep])
            results.append(self.store.update(merged, user=user))
        return results

    def create(self, obj: dict[str, Any], *, namespace: str | None = None,
               user: str = ADMIN_USER) -> dict[str, Any]:
        return self.store.create(obj, namespace=namespace, user=user)

    def update(self, obj: dict[str, Any], *, user: str = ADMIN_USER) -> dict[str, Any]:
        return self.store.update(obj, user=user)

    def patch(self, kind: str, namespace: str | None, name: str, patch: Any, *,
              patch_type: str = "strategic", user: str = ADMIN_USER,
              subresource: str | None = None) -> dict[str, Any]:
        """Patch an object: `patch_type` is "strategic", "merge" or "json" (RFC 6902)."""
        from sregym.twin.machinery.patch import apply_patch

        k = self.store.kind(kind)
        current = self.store.get(k, namespace, name)
        patched = apply_patch(current, patch, patch_type, k)
        # A patch that names a resourceVersion is a precondition (409 when stale), as on the wire.
        patched_meta = patched.setdefault("metadata", {})
        if not (isinstance(patch, dict) and (patch.get("metadata") or {}).get("resourceVersion")):
            patched_meta["resourceVersion"] = current["metadata"]["resourceVersion"]
        return self.store.update(patched, user=user, subresource=subresource)

    def delete(self, kind: str, namespace: str | None, name: str, *,
               propagation: str | None = None, grace_period: int | None = None,
               user: str = ADMIN_USER) -> dict[str, Any]:
        return self.store.delete(kind, namespace, name, propagation=propagation,
                                 grace_period=grace_period, user=user)

    # ----------------------------------------------------------------- reads
    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        return self.store.get(kind, namespace, name)

    def try_get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self.store.try_get(kind, namespace, name)

    def list(self, kind: str, namespace: str | None = None, *, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        return self.store.list(kind, namespace, label_selector, field_selector)

    def events_for(self, kind: str, namespace: str | None, name: str) -> list[dict[str, Any]]:
        return self.events.list_for(self.store.get(kind, namespace, name))

    def event_list(self, namespace: str | None = None, *, reason: str | None = None,
                   involved_name: str | None = None) -> list[dict[str, Any]]:
        """Events, oldest first, optionally filtered by reason or involved object name."""
        out = []
        for ev in self.store.scan("Event", namespace):
            if reason and ev.get("reason") != reason:
                continue
            if involved_name and (ev.get("involvedObject") or {}).get("name") != involved_name:
                continue
            out.append(clone(ev))
        out.sort(key=lambda e: (e.get("firstTimestamp") or "", e["metadata"]["name"]))
        return out

    def logs(self, namespace: str, pod: str, container: str | None = None, *,
             previous: bool = False, tail: int | None = None) -> str:
        """Container logs as `kubectl logs` prints them."""
        from sregym.twin.node.logs import container_logs

        return container_logs(self, namespace, pod, container, previous=previous, tail=tail)

    def dump(self) -> str:
        """Every object (events included), canonical JSON: equal dumps mean equal clusters."""
        data = [{"kind": k.kind, "group": k.group, "object": obj} for k, obj in self.store.all_objects()]
        return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _load_commands() -> None:
    """Register every userland command before the first twin runs anything.

    Commands register on import and a later registration of a name replaces an earlier one
    (userland's full `nc` wraps coreutils' listening-only one). Importing the userland lazily, at
    the first `exec`, made the first twin of a process run different programs from the ones after
    it — same seed, different logs.
    """
    import sregym.twin.userland  # noqa: F401 - imports every userland module


def _objects_from(manifests: str | dict[str, Any] | Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(manifests, str):
        docs = load_documents(manifests)
    elif isinstance(manifests, dict):
        docs = [manifests]
    else:
        docs = list(manifests)
    out: list[dict[str, Any]] = []
    for doc in docs:
        if doc.get("kind") == "List" or (doc.get("kind", "").endswith("List") and "items" in doc):
            out.extend(clone(i) for i in doc.get("items") or [])
        else:
            out.append(clone(doc))
    return out
