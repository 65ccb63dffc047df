"""`TwinServices`: the per-twin state that subsystems share, one typed attribute each.

Subsystems (kubelet runtime, data plane, Chaos Mesh, telemetry ...) find each other through
`twin.services.<name>` rather than by importing each other, which would make import circles.

Most services stay `None` until their accessor (`runtime_of`, `chaos_of`, `log_store`,
`rule_manager` ...) first creates them, and that is deliberate: creating one can draw from an rng
stream, add a store listener or a runtime usage hook, and the order of those side effects is part
of the same-seed telemetry. The accessors are called in controller construction order, so keeping
creation where it was keeps that order; only plain containers with no side effects are built here.

Snapshot replays assign stand-ins to the typed attributes (`SnapshotRuntime`, `SnapshotAlerts`);
the Protocols below say what a stand-in has to answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sregym.twin.admission.resourcequota import UsageCache
    from sregym.twin.api.query_gate import QueryGate
    from sregym.twin.chaos.diskio import DiskIO
    from sregym.twin.chaos.nodeos import NodeOS
    from sregym.twin.chaos.service import ChaosService
    from sregym.twin.controllers.volumes import _ClaimUsers
    from sregym.twin.dataplane.connect import Router
    from sregym.twin.dataplane.dns import _State as DnsState
    from sregym.twin.dataplane.engine import DataPlaneEngine
    from sregym.twin.dataplane.netpolicy import _Index as NetpolicyIndex
    from sregym.twin.dataplane.tcp_loss import TcpStats
    from sregym.twin.datastores.base import StateBank
    from sregym.twin.node.images import ImageCatalogue
    from sregym.twin.node.logs import LogStore
    from sregym.twin.node.runtime import Runtime
    from sregym.twin.telemetry.alerts import RuleManager
    from sregym.twin.telemetry.scrape import TelemetryScraper
    from sregym.twin.telemetry.traces import TraceStore
    from sregym.twin.telemetry.tsdb import TSDB
    from sregym.twin.workloads.shared import OwnerIndex


class ContainerView(Protocol):
    """What the API server reads from the runtime (`kubectl logs`, `kubectl top`); the live
    `Runtime` and the snapshot's `SnapshotRuntime` both answer it."""

    def instance(self, namespace: str, pod: str, container: str, *, previous: bool = False) -> Any: ...

    def container_usage(self, namespace: str, pod: str, container: str) -> tuple[float, int]: ...


class AlertSource(Protocol):
    """What the Prometheus API and the scraper ask of the rule manager (the live `RuleManager`,
    or the snapshot's recorded alerts)."""

    def api_alerts(self, visible: Any) -> list[dict[str, Any]]: ...

    def api_rules(self, visible: Any, **filters: Any) -> list[dict[str, Any]]: ...

    def tick(self, t_ms: int) -> None: ...


class PodMetrics(Protocol):
    """A metrics API for the HPA (`metrics.k8s.io`): usage of one pod, or None when unknown."""

    pod_usage: Callable[[str, str], Any]


@dataclass(slots=True)
class TwinServices:
    """One per twin, built in `Twin.__init__`. Slots, so a misspelt service is an error."""

    # node
    runtime: Runtime | ContainerView | None = None
    logs: LogStore | None = None
    images: ImageCatalogue | None = None
    # data plane
    dataplane: DataPlaneEngine | None = None
    envoy: Any = None  # dataplane.envoy.EnvoyProxies: the Envoy programs' router replay and counters
    router: Router | None = None
    bgp: Any = None  # node.bgp.BgpRoutes: which node has Calico BGP routes to which node's pods
    dns: DnsState | None = None
    netpolicy: NetpolicyIndex | None = None
    tcp: TcpStats | None = None
    datastores: StateBank | None = None
    # Chaos Mesh and node OS
    chaos: ChaosService | None = None
    nodeos: NodeOS | None = None
    diskio: DiskIO | None = None
    # telemetry
    tsdb: TSDB | None = None
    traces: TraceStore | None = None
    otlp_logs: Any = None  # telemetry.otlp_logs.OtlpLogStore: records sent over OTLP, not stdout
    scraper: TelemetryScraper | None = None
    alerts: RuleManager | AlertSource | None = None
    metrics: PodMetrics | None = None
    # controller and admission memos
    owner_index: OwnerIndex | None = None
    claim_users: _ClaimUsers | None = None
    provisioner_identities: dict[str, str] = field(default_factory=dict)
    cluster_ca_pem: str | None = None
    quota_usage: UsageCache | None = None
    # API server and userland
    query_gate: QueryGate | None = None
    # Writable layers by (namespace, pod, container, containerID): `userland.layer.Layer`, a {path: content}
    # map of its files with directories, links and whiteouts beside it; `layer_bytes` sizes one.
    layers: dict[tuple[str, str, str, str], dict[str, str]] = field(default_factory=dict)


__all__ = ["AlertSource", "ContainerView", "PodMetrics", "TwinServices"]
