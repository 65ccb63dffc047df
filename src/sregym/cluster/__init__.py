"""The `Cluster` protocol and its backends (in-process twin, any Kubernetes API server).

Fault injectors, noise and oracles take a `Cluster` and never touch twin internals, so the same
code drives the twin in-process, the twin over the wire and a real cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.cluster.base import ADMIN, AGENT, Cluster, EntryStats, ExecResult, ProbeResult

if TYPE_CHECKING:
    from sregym.cluster.kube import KubeCluster
    from sregym.cluster.twin import TwinCluster


def __getattr__(name: str) -> Any:
    # Backends load lazily: the kubernetes client is heavy and optional.
    if name == "TwinCluster":
        from sregym.cluster.twin import TwinCluster

        return TwinCluster
    if name == "KubeCluster":
        from sregym.cluster.kube import KubeCluster

        return KubeCluster
    raise AttributeError(name)


__all__ = ["ADMIN", "AGENT", "Cluster", "EntryStats", "ExecResult", "KubeCluster", "ProbeResult",
           "TwinCluster"]
