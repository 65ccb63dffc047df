"""Chaos Mesh semantics and node OS state for the twin.

Chaos Mesh v1alpha1 experiments (NetworkChaos, PodChaos, StressChaos, IOChaos, TimeChaos,
DNSChaos, HTTPChaos, JVMChaos, KernelChaos) created through the API are executed by `ChaosController`, which
also runs Schedules and Workflows (`schedule.py`, `workflow.py`) that spawn them; the data plane
asks `twin.services.chaos` (`ChaosService`) what applies to a flow, request, lookup or file;
node OS state (conntrack, disks, clock, kernel/kubelet logs) is `twin.services.nodeos`
(`NodeOS`). `install_chaos_mesh(twin)` deploys the Chaos Mesh components themselves.

Imports are lazy so importing this package stays cheap and cycle-free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.chaos.nodeos import NodeOS
    from sregym.twin.chaos.service import ChaosService
    from sregym.twin.twin import Twin


def install_chaos_mesh(twin: Twin) -> list[dict[str, Any]]:
    from sregym.twin.chaos.install import install_chaos_mesh as install

    return install(twin)


def chaos_of(twin: Twin) -> ChaosService:
    from sregym.twin.chaos.controller import chaos_of as get

    return get(twin)


def nodeos_of(twin: Twin) -> NodeOS:
    from sregym.twin.chaos.nodeos import nodeos_of as get

    return get(twin)


__all__ = ["chaos_of", "install_chaos_mesh", "nodeos_of"]
