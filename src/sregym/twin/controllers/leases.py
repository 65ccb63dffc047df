"""Leases: the heartbeats and leader elections a real cluster writes all the time.

A real cluster is never quiet. Even with no workload changing, every kubelet renews its node
`Lease` in `kube-node-lease`, the leader-elected control-plane components renew theirs in
`kube-system`, and the API server renews its identity lease. Without these writes the newest
`resourceVersion` in the twin would almost always be whatever a fault injector just touched, a
side channel no real cluster offers. This module writes what Kubernetes 1.32 writes, with the
real names, fields and cadences:

- **node leases** (kubelet, `component-helpers/apimachinery/lease`): one per Node, named after
  it, `holderIdentity` = the node name, `leaseDurationSeconds: 40`, owned by the Node (so the
  garbage collector removes it with the Node), renewed every 0.25 × 40 s = 10 s through
  `wait.JitterUntil` with a 0.04 jitter factor, sliding (the period starts after the update);
- **leader election** (client-go `leaderelection`, kube-controller-manager and kube-scheduler
  defaults: lease 15 s, renew deadline 10 s, retry period 2 s): `kube-system/kube-controller-manager`
  and `kube-system/kube-scheduler`, `holderIdentity` = `<hostname>_<uuid>`, with `acquireTime`,
  `renewTime` and `leaseTransitions`; the leader renews every retry period (`wait.Until`,
  sliding, no jitter). Acquiring records the `LeaderElection` event a real cluster shows;
- **API server identity** (`APIServerIdentity`, on by default since 1.26):
  `kube-system/apiserver-<base32(sha256(hostname, "kube-apiserver"))[:26]>` with the
  `apiserver.kubernetes.io/identity` and `kubernetes.io/hostname` labels, 3600 s lease, renewed
  every 10 s (same lease controller as the kubelet's).

Cadence: the real 2 s retry period is kept. The twin ticks once per simulated second, so the
two leader leases cost about one store write per tick, and the node and API-server leases
0.1 write per tick each: a few percent of a tick of a 30-service app, measured by
`benchmarks/twin_scale.py` and `benchmarks/hotel_reservation.py`.

Each renewal happens at a moment inside the tick that just passed (its due time), so
`renewTime` carries microseconds like a real one; the sliding periods add the update's own
round trip, so the phases drift off the tick grid the way real components drift. Every draw
comes from the `leases` random stream: same seed, same renewals, same resourceVersions.
"""

from __future__ import annotations

import base64
import hashlib
import math
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.chaos.kubelet_tls import kubelet_online, report_failure
from sregym.twin.controller import Controller, controller
from sregym.twin.topology import CLUSTER_NAME

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

NODE_LEASE_NAMESPACE = "kube-node-lease"
NODE_LEASE_DURATION_S = 40
NODE_LEASE_RENEW_FRACTION = 0.25  # kubelet's nodeLeaseRenewIntervalFraction
LEASE_JITTER = 0.04  # the lease controller's wait.JitterUntil factor
LEADER_LEASE_DURATION_S = 15
LEADER_RETRY_PERIOD_S = 2.0
APISERVER_LEASE_DURATION_S = 3600
APISERVER_RENEW_S = 10.0
# Seconds one lease update takes (apiserver + etcd on a kind node); sliding periods start after it.
ROUND_TRIP_S = (0.002, 0.012)
LEADER_COMPONENTS = (
    # (lease name, the user it writes as, the event source component)
    ("kube-controller-manager", "system:kube-controller-manager", "kube-controller-manager"),
    ("kube-scheduler", "system:kube-scheduler", "default-scheduler"),
)
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"


def apiserver_identity(hostname: str) -> str:
    """The kube-apiserver identity lease name for `hostname`, computed like the API server: a
    SHA-256 over the length-prefixed hostname and "kube-apiserver", base32 of its first 16
    bytes, lower case, no padding."""
    data = b"".join(struct.pack(">H", len(part)) + part for part in (hostname.encode(), b"kube-apiserver"))
    digest = hashlib.sha256(data).digest()[:16]
    return "apiserver-" + base64.b32encode(digest).decode().rstrip("=").lower()


@dataclass
class _Renewal:
    """One component's renew loop for one Lease."""

    namespace: str
    name: str
    user: str
    period: float
    jitter: float
    due: float
    kind: str  # "node" | "leader" | "apiserver"
    holder: str = ""
    owner_uid: str = ""
    component: str = ""


@controller
class LeaseController(Controller):
    """Renews every node, leader-election and API-server identity Lease on its real cadence."""

    name = "leases"
    order = 3
    user = "system:apiserver"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._rng = twin.rng.stream("leases")
        self._renewals: dict[tuple[str, str], _Renewal] = {}
        self._node_count = -1
        self._nodes_tracked = False
        self._control_plane_started = False
        self._next = -math.inf

    # ------------------------------------------------------------------ loop
    def reconcile(self) -> None:
        store = self.twin.store
        now = self.twin.clock.now
        count = store.count("Node")
        if count != self._node_count:
            self._node_count = count
            self._track_nodes(now, booting=not self._nodes_tracked)
            self._nodes_tracked = True
        if not self._control_plane_started:
            self._control_plane_started = True
            self._start_control_plane(now)
        if now < self._next:
            return
        due = sorted((r.due, key) for key, r in self._renewals.items() if r.due <= now)
        for _, key in due:
            renewal = self._renewals.get(key)
            if renewal is not None:
                self._renew(renewal, now)
        self._next = min((r.due for r in self._renewals.values()), default=math.inf)

    # ----------------------------------------------------------- components
    def _track_nodes(self, now: float, booting: bool) -> None:
        """A kubelet starts renewing when its Node appears (at boot: some moment of the first
        tick) and stops when it is gone."""
        tick = self.twin.clock.tick
        present: set[str] = set()
        for node in self.twin.store.scan("Node"):
            name = node["metadata"]["name"]
            present.add(name)
            key = (NODE_LEASE_NAMESPACE, name)
            renewal = self._renewals.get(key)
            if renewal is None:
                self._renewals[key] = _Renewal(
                    NODE_LEASE_NAMESPACE, name, f"system:node:{name}",
                    NODE_LEASE_DURATION_S * NODE_LEASE_RENEW_FRACTION, LEASE_JITTER,
                    due=now - tick + self._rng.uniform(0.0, tick) if booting else now, kind="node", holder=name,
                    owner_uid=node["metadata"].get("uid", ""))
                self._next = -math.inf
            else:
                renewal.owner_uid = node["metadata"].get("uid", "")
        for key in [k for k, r in self._renewals.items() if r.kind == "node" and k[1] not in present]:
            del self._renewals[key]

    def _control_plane_host(self) -> str:
        for node in self.twin.store.scan("Node"):
            if CONTROL_PLANE_LABEL in (node["metadata"].get("labels") or {}):
                return str(node["metadata"]["name"])
        return f"{CLUSTER_NAME}-control-plane"

    def _start_control_plane(self, now: float) -> None:
        host = self._control_plane_host()
        tick = self.twin.clock.tick
        identity = apiserver_identity(host)
        self._renewals[("kube-system", identity)] = _Renewal(
            "kube-system", identity, "system:apiserver", APISERVER_RENEW_S, LEASE_JITTER,
            due=now - tick + self._rng.uniform(0.0, tick), kind="apiserver",
            holder=f"{identity}_{self.twin.rng.uuid('leases')}")
        for lease, user, component in LEADER_COMPONENTS:
            self._renewals[("kube-system", lease)] = _Renewal(
                "kube-system", lease, user, LEADER_RETRY_PERIOD_S, 0.0,
                due=now - tick + self._rng.uniform(0.0, tick), kind="leader",
                holder=f"{host}_{self.twin.rng.uuid('leases')}", component=component)
        self._next = -math.inf

    # ---------------------------------------------------------------- renew
    def _renew(self, renewal: _Renewal, now: float) -> None:
        at = renewal.due
        stamp = self.twin.clock.iso_micro(at)
        store = self.twin.store
        if renewal.kind == "node":
            node = store.peek("Node", None, renewal.name)
            if node is None:  # replaced within one tick: the lease goes with the old Node
                del self._renewals[(renewal.namespace, renewal.name)]
                self._node_count = -1  # look for the new one
                return
            renewal.owner_uid = node["metadata"].get("uid", "")
            nodeos = self.twin.services.nodeos
            if nodeos is not None and not kubelet_online(self.twin, renewal.name):
                renewal.due = now + renewal.period  # a stopped or cut-off kubelet renews nothing
                report_failure(self.twin, renewal.name)
                return

        def renew(lease: dict[str, Any]) -> None:
            spec = lease.setdefault("spec", {})
            spec["renewTime"] = stamp
            spec["holderIdentity"] = renewal.holder

        try:
            if store.mutate("Lease", renewal.namespace, renewal.name, renew, user=renewal.user) is None:
                created = store.create(self._new_lease(renewal, stamp), user=renewal.user)
                if renewal.kind == "leader":
                    self.twin.events.normal(created, "LeaderElection", f"{renewal.holder} became leader",
                                            component=renewal.component)
        except ApiError:
            pass  # a webhook or a terminating namespace refused it: the next period tries again
        # The next run starts a (jittered) period after this update returned.
        period = renewal.period * (1.0 + renewal.jitter * self._rng.random()) if renewal.jitter else renewal.period
        renewal.due = max(at + self._rng.uniform(*ROUND_TRIP_S) + period, now - self.twin.clock.tick)

    def _new_lease(self, renewal: _Renewal, stamp: str) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": renewal.name, "namespace": renewal.namespace}
        spec: dict[str, Any] = {"holderIdentity": renewal.holder}
        if renewal.kind == "node":
            spec["leaseDurationSeconds"] = NODE_LEASE_DURATION_S
            if renewal.owner_uid:
                meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": renewal.name,
                                            "uid": renewal.owner_uid}]
        elif renewal.kind == "apiserver":
            meta["labels"] = {"apiserver.kubernetes.io/identity": "kube-apiserver",
                              "kubernetes.io/hostname": self._control_plane_host()}
            spec["leaseDurationSeconds"] = APISERVER_LEASE_DURATION_S
        else:
            spec.update(leaseDurationSeconds=LEADER_LEASE_DURATION_S, acquireTime=stamp, leaseTransitions=0)
        spec["renewTime"] = stamp
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}
