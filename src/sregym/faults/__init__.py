"""Fault injectors: registered `inject`/`recover` pairs that write only through a `Cluster`.

Modules in this package register their faults with `@fault`; `FAULTS` discovers them lazily.
"""

from __future__ import annotations

from sregym.faults.base import FAULTS, Fault, FaultParams, fault, make_fault

__all__ = ["FAULTS", "Fault", "FaultParams", "fault", "make_fault"]
