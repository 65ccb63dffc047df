"""The kubelet's eviction manager and the node conditions it owns, per node.

Every housekeeping interval (10 s) a running kubelet observes its eviction signals against the
default hard thresholds of a Linux kubelet (`memory.available<100Mi`, `nodefs.available<10%`,
`nodefs.inodesFree<5%`, `imagefs.available<15%`; a kind node's image filesystem is its root
disk). There is no default PID threshold, so PIDPressure stays False.

- `memory.available` is the node's memory capacity minus the working sets on it: the node's own
  daemons and every running container, stress processes included (the runtime's usage hooks);
- a met threshold sets its condition (MemoryPressure / DiskPressure) with the kubelet's reasons,
  messages and `NodeHas...` events; it clears only when no threshold was met for the pressure
  transition period (5 min). The taints follow from the node lifecycle controller;
- under memory pressure one pod is evicted per pass, ranked like upstream's `rankMemoryPressure`:
  pods whose usage exceeds their requests first, then lower priority, then more usage above
  requests. Critical pods (priority ≥ 2000000000) are never ranked. The pod is killed and
  reported `Failed`/`Evicted` with the kubelet's message ("The node was low on resource:
  memory. Threshold quantity: 100Mi, available: ...Ki. Container x was using ...Ki, request is 0,
  has larger consumption of memory. "), a `DisruptionTarget` condition (`TerminationByKubelet`),
  a Warning `Evicted` event on the pod and `EvictionThresholdMet` ("Attempting to reclaim
  memory") on the node; its owner replaces it.

The thresholds are the ones the node's kubelet loaded from `/var/lib/kubelet/config.yaml` when it
last started (`node/kubelet_config.py`): a changed file acts only after `systemctl restart
kubelet`, and a restarted kubelet forgets when it last saw a threshold met, so a pressure
condition whose threshold no longer holds clears at its first housekeeping.

It is also where a restarted kubelet reports back: when a node's kubelet runs again after it
was stopped (or finds its conditions `Unknown`), it records `Starting kubelet.` and posts every
condition afresh (Ready=True `KubeletReady`), which lifts the lifecycle controller's taints.
Disk state lives in `chaos/nodeos.py`; only the decisions are made here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.chaos.kubelet_tls import kubelet_online
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.controller import Controller, controller
from sregym.twin.controllers import storage_eviction
from sregym.twin.controllers.kubelet_quantity import quantity_text
from sregym.twin.machinery.objects import get_path, set_condition
from sregym.twin.machinery.quantity import memory_bytes
from sregym.twin.node.bound_pods import pods_on
from sregym.twin.node.kubelet_config import Threshold, disk_thresholds, load_thresholds
from sregym.twin.node.kubelet_config import default_text as default_kubelet_config
from sregym.twin.node.resource_metrics import SYSTEM_MEMORY_BYTES, memory_quantity
from sregym.twin.node.runtime import runtime_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from sregym.twin.twin import Twin

HOUSEKEEPING = 10.0
PRESSURE_TRANSITION = 300.0  # --eviction-pressure-transition-period
MEMORY_AVAILABLE_MIN = 100 * 2**20
# The default disk thresholds in the order the eviction manager reclaims them (a kind node's imagefs
# is its root disk, so both filesystem signals read `sda`); a node's own come from its config file.
DISK_THRESHOLDS = disk_thresholds(load_thresholds(default_kubelet_config()))
CRITICAL_PRIORITY = 2_000_000_000
COMPONENT = "kubelet"
# condition -> ((status, reason, message, event) when under pressure, (...) when not)
CONDITIONS: dict[str, tuple[tuple[str, str, str, str], tuple[str, str, str, str]]] = {
    "MemoryPressure": (("True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available",
                        "NodeHasInsufficientMemory"),
                       ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available",
                        "NodeHasSufficientMemory")),
    "DiskPressure": (("True", "KubeletHasDiskPressure", "kubelet has disk pressure", "NodeHasDiskPressure"),
                     ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure",
                      "NodeHasNoDiskPressure")),
    "PIDPressure": (("True", "KubeletHasInsufficientPID", "kubelet has insufficient PID available",
                     "NodeHasInsufficientPID"),
                    ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available",
                     "NodeHasSufficientPID")),
}
READY = ("True", "KubeletReady", "kubelet is posting ready status")


@dataclass
class _NodeEviction:
    next_housekeeping: float = 0.0
    last_seen: dict[str, float] = field(default_factory=dict)  # condition -> last time a threshold was met
    next_image_gc: float | None = None
    kubelet_up: bool = True
    starts_seen: int = 0  # the kubelet process whose config is loaded (NodeOS.kubelet_starts)
    thresholds: dict[str, Threshold] = field(default_factory=lambda: load_thresholds(default_kubelet_config()))

    @property
    def disk(self) -> tuple[Threshold, ...]:
        return disk_thresholds(self.thresholds)

    def memory_min(self, capacity: int) -> int:
        threshold = self.thresholds.get("memory.available")
        if threshold is None:
            return 0
        return threshold.quantity if threshold.quantity is not None else int(capacity * threshold.fraction)


@controller
class EvictionManager(Controller):
    """Pressure conditions, evictions and the restarted kubelet's status report, per node."""

    name = "eviction-manager"
    order = 66
    user = "system:node"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.nodeos = nodeos_of(twin)
        self._nodes: dict[str, _NodeEviction] = {}

    def reconcile(self) -> None:
        now = self.twin.clock.now
        for node in list(self.twin.store.scan("Node")):
            name = node["metadata"]["name"]
            state = self._nodes.get(name)
            if state is None:  # not setdefault: a fresh state parses the kubelet's config file
                state = self._nodes[name] = _NodeEviction()
            running = kubelet_online(self.twin, name)
            if not running:
                # Only a stopped process starts afresh; a kubelet cut off by TLS just reconnects.
                state.kubelet_up = state.kubelet_up and self.nodeos.kubelet_running(name)
                continue
            starts = self.nodeos.kubelet_starts(name)
            started = not state.kubelet_up or starts != state.starts_seen
            if started:
                # A new kubelet process: it reads its config file and knows no earlier pressure.
                state.starts_seen = starts
                state.thresholds = load_thresholds(self.nodeos.kubelet_config(name))
                state.last_seen.clear()
            restarted = started or any(
                c.get("status") == "Unknown" for c in get_path(node, "status", "conditions", default=[]) or [])
            state.kubelet_up = True
            if restarted:
                if started:
                    # Its first sync decides the pressure conditions it posts with Ready.
                    state.next_housekeeping = now + HOUSEKEEPING
                    self._housekeeping(node, state, now)
                    node = self.twin.store.peek("Node", None, name) or node
                else:
                    state.next_housekeeping = now
                self._post_start(name, state, now, started=started)
            if now >= state.next_housekeeping:
                state.next_housekeeping = now + HOUSEKEEPING
                self._housekeeping(node, state, now)

    # ------------------------------------------------------------ signals
    def memory_available(self, node: dict[str, Any]) -> int:
        name = node["metadata"]["name"]
        capacity = memory_bytes(get_path(node, "status", "capacity", "memory") or "0")
        role = "control-plane" if "node-role.kubernetes.io/control-plane" in (node["metadata"].get("labels") or {}) \
            else "worker"
        return capacity - SYSTEM_MEMORY_BYTES[role] - runtime_of(self.twin).node_usage(name)[1]

    def _housekeeping(self, node: dict[str, Any], state: _NodeEviction, now: float) -> None:
        name = node["metadata"]["name"]
        available = self.memory_available(node)
        met: dict[str, str] = {}
        memory_min = state.memory_min(memory_bytes(get_path(node, "status", "capacity", "memory") or "0"))
        if available < memory_min:
            met["MemoryPressure"] = "memory"
        disk = storage_eviction.disk_signals(self.nodeos.disk(name, "sda"), state.disk)
        if disk:
            met["DiskPressure"] = disk[0].resource
        for cond, resource in met.items():
            state.last_seen[cond] = now
            self.nodeos.kubelet(name, f'"Eviction manager: attempting to reclaim" resourceName="{resource}"',
                                source="eviction_manager.go:366")
        conditions = {c.get("type"): c.get("status") for c in get_path(node, "status", "conditions", default=[]) or []}
        for cond in CONDITIONS:
            pressure = now - state.last_seen.get(cond, -math.inf) < PRESSURE_TRANSITION
            wanted = CONDITIONS[cond][0 if pressure else 1][0]
            if conditions.get(cond) != wanted:
                self._set_condition(name, cond, pressure)
        if state.next_image_gc is None or now >= state.next_image_gc:
            if state.next_image_gc is not None:
                storage_eviction.image_gc(self, name)
            state.next_image_gc = now + storage_eviction.IMAGE_GC_PERIOD
        if storage_eviction.local_storage_eviction(self, name):
            return  # upstream skips the threshold evictions of a pass that evicted for local storage
        if met:
            resource = met.get("MemoryPressure") or met["DiskPressure"]
            updated = self.twin.store.peek("Node", None, name) or node
            self.twin.events.warning(updated, "EvictionThresholdMet", f"Attempting to reclaim {resource}",
                                     component=COMPONENT, host=name)
        if "MemoryPressure" in met:
            self._evict_one(name, available, memory_min)
        elif disk:
            storage_eviction.reclaim_disk(self, name, disk, state.disk)

    def _set_condition(self, node: str, cond: str, pressure: bool) -> None:
        status, reason, message, event = CONDITIONS[cond][0 if pressure else 1]
        iso = self.twin.clock.iso()

        def change(obj: dict[str, Any]) -> None:
            for c in get_path(obj, "status", "conditions", default=[]) or []:
                if c.get("type") == cond:
                    _post_condition(c, iso, status, reason, message)

        updated = self.post_status(node, change)
        if updated is not None:
            self.twin.events.normal(updated, event, f"Node {node} status is now: {event}",
                                    component=COMPONENT, host=node)

    def post_status(self, node: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
        """Write the Node's status as its kubelet (`system:node:<name>`); None if it is gone or
        the write is refused."""
        try:
            return self.twin.store.mutate("Node", None, node, change, status=True, user=f"system:node:{node}")
        except ApiError:
            return None

    # ------------------------------------------------------------ restart
    def _post_start(self, node: str, state: _NodeEviction, now: float, *, started: bool = True) -> None:
        """A kubelet (re)started (`Starting kubelet.`) or reconnected: a full status post."""
        iso = self.twin.clock.iso()
        if started:
            self.nodeos.kubelet(node, "Starting kubelet.", source="kubelet.go:1608")

        def post(obj: dict[str, Any]) -> None:
            for c in get_path(obj, "status", "conditions", default=[]) or []:
                kind = c.get("type")
                if kind == "Ready":
                    status, reason, message = READY
                elif kind in CONDITIONS:
                    pressure = now - state.last_seen.get(kind, -math.inf) < PRESSURE_TRANSITION
                    status, reason, message, _ = CONDITIONS[kind][0 if pressure else 1]
                else:
                    continue
                _post_condition(c, iso, status, reason, message)

        updated = self.post_status(node, post)
        if updated is None:
            return
        if started:
            self.twin.events.normal(updated, "Starting", "Starting kubelet.", component=COMPONENT, host=node)
        self.twin.events.normal(updated, "NodeReady", f"Node {node} status is now: NodeReady",
                                component=COMPONENT, host=node)

    # ----------------------------------------------------------- evictions
    def active_pods(self, node: str) -> list[dict[str, Any]]:
        """The pods the kubelet may evict on `node`: bound there, not terminating, not finished,
        not critical (priority >= 2000000000)."""
        out = []
        for pod in pods_on(self.twin.store, node):
            spec = pod.get("spec") or {}
            if pod["metadata"].get("deletionTimestamp"):
                continue
            if get_path(pod, "status", "phase") in ("Succeeded", "Failed"):
                continue
            if int(spec.get("priority") or 0) >= CRITICAL_PRIORITY:
                continue
            out.append(pod)
        return out

    def _candidates(self, node: str) -> list[tuple[tuple[Any, ...], dict[str, Any], list[tuple[str, int, int]]]]:
        runtime = runtime_of(self.twin)
        ranked = []
        for pod in self.active_pods(node):
            spec = pod.get("spec") or {}
            meta = pod["metadata"]
            usage = runtime.pod_usage(meta.get("namespace", "default"), meta["name"])
            if not usage:
                continue
            containers = []
            for c in spec.get("containers") or []:
                request = get_path(c, "resources", "requests", "memory")
                containers.append((c["name"], usage.get(c["name"], (0.0, 0))[1],
                                   memory_bytes(request) if request else 0))
            used = sum(u for _, u, _ in containers)
            requested = sum(r for _, _, r in containers)
            key = (0 if used > requested else 1, int(spec.get("priority") or 0), -(used - requested),
                   meta.get("namespace", ""), meta["name"])
            ranked.append((key, pod, containers))
        ranked.sort(key=lambda item: item[0])
        return ranked

    def _evict_one(self, node: str, available: int, threshold: int = MEMORY_AVAILABLE_MIN) -> None:
        ranked = self._candidates(node)
        if not ranked:
            return
        _, pod, containers = ranked[0]
        message = "The node was low on resource: memory. "
        message += (f"Threshold quantity: {quantity_text(threshold)}, "
                    f"available: {quantity_text(max(0, available) // 1024 * 1024)}. ")
        for name, used, request in containers:
            if used > request:
                message += (f"Container {name} was using {memory_quantity(used)}, request is "
                            f"{quantity_text(request)}, has larger consumption of memory. ")
        self.evict(pod, message)

    def evict(self, pod: dict[str, Any], message: str, *, disruption: bool = True) -> bool:
        """Kill the pod's containers at once and report it `Failed`/`Evicted` with `message` and
        a Warning `Evicted` event; node-pressure evictions also set the `DisruptionTarget`
        condition (local storage limit evictions do not). False if the status write failed."""
        meta = pod["metadata"]
        namespace, name = meta.get("namespace", "default"), meta["name"]
        now = self.twin.clock.now
        iso = self.twin.clock.iso()
        runtime = runtime_of(self.twin).pod(namespace, name)
        finished: dict[str, dict[str, Any]] = {}
        if runtime is not None:
            for record in runtime.containers.values():
                instance = record.current
                if instance is None or not instance.running:
                    continue
                instance.process.close()
                instance.finished_at, instance.exit_code, instance.reason = now, 137, "Error"
                instance.listening.clear()
                runtime_of(self.twin).changed()
                instance.ready = False
                record.done = True
                finished[record.name] = {"terminated": {
                    "exitCode": 137, "reason": "Error", "startedAt": self.twin.clock.iso(instance.started_at),
                    "finishedAt": iso, "containerID": f"containerd://{instance.container_id}"}}

        def evicted(obj: dict[str, Any]) -> None:
            status = obj.setdefault("status", {})
            status.update(phase="Failed", reason="Evicted", message=message)
            conditions = list(status.get("conditions") or [])
            if disruption:
                set_condition(conditions, "DisruptionTarget", "True", iso, reason="TerminationByKubelet",
                              message=message, probe_time=True)
            for cond in ("Ready", "ContainersReady"):
                set_condition(conditions, cond, "False", iso, reason="PodFailed", probe_time=True)
            status["conditions"] = conditions
            for cs in status.get("containerStatuses") or []:
                if cs.get("name") in finished:
                    cs.update(state=finished[cs["name"]], ready=False, started=False)

        try:
            updated = self.twin.store.mutate("Pod", namespace, name, evicted, status=True,
                                             user=f"system:node:{get_path(pod, 'spec', 'nodeName')}")
        except ApiError:
            return False
        if updated is None:
            return False
        self.twin.events.warning(updated, "Evicted", message, component=COMPONENT,
                                 host=get_path(pod, "spec", "nodeName"))
        return True


def _post_condition(condition: dict[str, Any], iso: str, status: str, reason: str, message: str) -> None:
    """A kubelet's condition update: the heartbeat always moves, the transition time only when
    the status changes."""
    if condition.get("status") != status:
        condition["lastTransitionTime"] = iso
    condition.update(status=status, reason=reason, message=message, lastHeartbeatTime=iso)
