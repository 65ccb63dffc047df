"""The twin: an emulated, deterministic Kubernetes cluster that runs in-process.

`from sregym.twin import Twin` is the entry point; submodules load lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

__all__ = ["Twin"]


def __getattr__(name: str) -> Any:
    if name == "Twin":
        from sregym.twin.twin import Twin

        return Twin
    raise AttributeError(name)
