"""Package attributes that load their module on first use.

Several packages (`sregym.env`, `sregym.snapshot`, `sregym.cluster`, `sregym.twin`) export names
whose modules are heavy (the twin, servers, optional SDKs) while their light neighbours must stay
cheap to import. `lazy_attributes` builds the module-level `__getattr__` (PEP 562) that imports the
owning module only when one of those names is first read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_attributes(package: str, modules: dict[str, str]) -> Callable[[str], Any]:
    """A `__getattr__` for `package` that resolves each name of `modules` (name -> dotted module)
    by importing that module; any other name is the usual AttributeError."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__


__all__ = ["lazy_attributes"]
