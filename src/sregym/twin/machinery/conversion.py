"""Conversion between a kind's served versions and the version it is stored in.

The real API server decodes every write into its internal type and stores one version per kind;
every read is converted to the version the client asked for. The twin stores plain dicts, so a
kind served at more than one version needs explicit converters, registered here by (group, kind,
served version). The store converts writes to the storage version (so controllers only ever see
one shape, whatever the client sent: `kubectl autoscale` still speaks autoscaling/v1), and the API
server converts reads back to the version of the endpoint.

The converters live in their own modules (`CONVERTER_MODULES`: the HorizontalPodAutoscaler's
autoscaling/v1 view, the events.k8s.io/v1 view of core Events), imported by name the first time a
converter is looked up: they import this module to register, so importing them from here by
statement would be a circle.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.machinery.kinds import KindRegistry, ResourceKind

Obj = dict[str, Any]


@dataclass(frozen=True)
class VersionConverter:
    """How one served version of a kind maps to and from its storage version."""

    group: str
    kind: str
    version: str
    storage_version: str
    to_storage: Callable[[Obj], Obj]
    from_storage: Callable[[Obj], Obj]
    # The group the kind is stored in, when another group serves it too (events.k8s.io Events
    # are stored as core Events); None: this converter's own group.
    storage_group: str | None = None

    @property
    def storage_api_version(self) -> str:
        group = self.group if self.storage_group is None else self.storage_group
        return f"{group}/{self.storage_version}" if group else self.storage_version


_CONVERTERS: dict[tuple[str, str, str], VersionConverter] = {}
CONVERTER_MODULES = ("sregym.twin.machinery.hpa_conversion", "sregym.twin.machinery.event_conversion")
_loaded = False


def _load_converters() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in CONVERTER_MODULES:
            importlib.import_module(module)


def register(converter: VersionConverter) -> None:
    _CONVERTERS[(converter.group, converter.kind, converter.version)] = converter


def converter_for(kind: ResourceKind) -> VersionConverter | None:
    """The converter of a served (non-storage) version, or None for a storage version."""
    _load_converters()
    return _CONVERTERS.get((kind.group, kind.kind, kind.version))


def storage_form(kinds: KindRegistry, kind: ResourceKind, obj: Obj) -> tuple[ResourceKind, Obj]:
    """`obj` (written at `kind`'s version) as it is stored: the storage kind and a converted copy,
    or both unchanged when `kind` is already the storage version."""
    conv = converter_for(kind)
    if conv is None:
        return kind, obj
    return kinds.by_kind(conv.storage_api_version, kind.kind), conv.to_storage(obj)


def served_form(kind: ResourceKind, obj: Obj) -> Obj:
    """A stored object as served at `kind`'s version (a converted copy, or `obj` itself)."""
    conv = converter_for(kind)
    if conv is None or obj.get("apiVersion") == kind.api_version:
        return obj
    return conv.from_storage(obj)


__all__ = ["CONVERTER_MODULES", "VersionConverter", "converter_for", "register", "served_form",
           "storage_form"]
