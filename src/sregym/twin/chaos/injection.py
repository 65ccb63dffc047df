"""One running chaos experiment as the twin's services see it: which pods and containers it hit.

Below both the chaos service (which publishes the set of injections) and the device model (which
keeps the disk-scoped ones), so neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Injection:
    """One experiment's injected targets: pod keys, and per pod the injected containers."""

    kind: str
    namespace: str
    name: str
    spec: dict[str, Any]
    pods: frozenset[str]
    targets: frozenset[str] | None = None  # NetworkChaos `.Target` records; None = no target
    containers: dict[str, frozenset[str]] = field(default_factory=dict)
    uid: str = ""
    scope: str = ""  # "device": the fault belongs to the disk behind the volume (chaos/devices.py)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"
