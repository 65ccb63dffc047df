"""The twin: an emulated, deterministic Kubernetes cluster that runs in-process.

`from sregym.twin import Twin` is the entry point; submodules load lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.lazy import lazy_attributes

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

__all__ = ["Twin"]


__getattr__ = lazy_attributes(__name__, {"Twin": "sregym.twin.twin"})
