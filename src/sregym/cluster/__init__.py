"""The `Cluster` protocol and its backends (in-process twin, any Kubernetes API server).

Fault injectors, noise and oracles take a `Cluster` and never touch twin internals, so the same
code drives the twin in-process, the twin over the wire and a real cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.cluster.base import ADMIN, AGENT, Cluster, EntryStats, ExecResult, ProbeResult
from sregym.lazy import lazy_attributes

if TYPE_CHECKING:
    from sregym.cluster.kube import KubeCluster
    from sregym.cluster.twin import TwinCluster


# Backends load lazily: the kubernetes client is heavy and optional.
__getattr__ = lazy_attributes(__name__, {"TwinCluster": "sregym.cluster.twin", "KubeCluster": "sregym.cluster.kube"})


__all__ = ["ADMIN", "AGENT", "Cluster", "EntryStats", "ExecResult", "KubeCluster", "ProbeResult",
           "TwinCluster"]
