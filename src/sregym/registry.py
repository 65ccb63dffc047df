"""One generic registry, used with a decorator per kind of plug-in.

Controllers, admission plugins, problems, faults, agents ... all register themselves with a
decorator at import time; `discover()` imports every module of a package so that nothing has to be
listed by hand. Registries are ordered by an explicit `order` so behaviour never depends on import
order or dictionary iteration accidents.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    value: T
    order: int
    meta: dict[str, Any]


class Registry(Generic[T]):
    """Named entries of one kind, discovered lazily from one or more packages."""

    def __init__(self, kind: str, packages: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self._packages = list(packages)
        self._entries: dict[str, Entry[T]] = {}
        self._discovered = False

    def register(self, name: str, value: T, *, order: int = 0, replace: bool = False,
                 **meta: Any) -> T:
        if name in self._entries and not replace and self._entries[name].value is not value:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = Entry(name, value, order, meta)
        return value

    def decorator(self, name: str | None = None, *, order: int = 0,
                  **meta: Any) -> Callable[[T], T]:
        def wrap(value: T) -> T:
            key = name or getattr(value, "name", None) or getattr(value, "__name__", None)
            if not key:
                raise ValueError(f"cannot infer a name for this {self.kind}")
            return self.register(str(key), value, order=order, **meta)

        return wrap

    def add_package(self, package: str) -> None:
        if package not in self._packages:
            self._packages.append(package)
            self._discovered = False

    def discover(self) -> None:
        if self._discovered:
            return
        for package in self._packages:
            import_all(package)
        self._discovered = True

    def get(self, name: str) -> T:
        self.discover()
        try:
            return self._entries[name].value
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise KeyError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def entries(self) -> list[Entry[T]]:
        self.discover()
        return sorted(self._entries.values(), key=lambda e: (e.order, e.name))

    def names(self) -> list[str]:
        return [e.name for e in self.entries()]

    def __iter__(self) -> Iterator[T]:
        return iter(e.value for e in self.entries())

    def __contains__(self, name: object) -> bool:
        self.discover()
        return name in self._entries

    def __len__(self) -> int:
        self.discover()
        return len(self._entries)


def import_all(package: str) -> None:
    """Import every module below `package` (recursively), so their decorators run."""
    pkg = importlib.import_module(package)
    path = getattr(pkg, "__path__", None)
    if path is None:
        return
    for info in sorted(pkgutil.walk_packages(path, prefix=package + "."), key=lambda i: i.name):
        importlib.import_module(info.name)
