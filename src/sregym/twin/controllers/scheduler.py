"""kube-scheduler: binds pending pods to nodes, or says precisely why it cannot.

A pod with no `spec.nodeName` (and `schedulerName: default-scheduler`) enters the queue, ordered
by priority, then age, then name. Each attempt runs the filters of `sregym.twin.workloads.placement` on a
snapshot of the nodes taken once per tick and kept up to date as pods are bound in it, so a burst
of 500 new pods costs one scan of the pod list. A pod that fits nowhere gets PodScheduled=False
(Unschedulable) with kube-scheduler's aggregated message and a `FailedScheduling` event, and is
retried with the scheduling queue's back-off (1 s doubling to 10 s), each retry bumping the
event's count. A higher-priority pod that fits nowhere preempts lower-priority pods (DefaultPreemption).
Pods using WaitForFirstConsumer claims are "assumed" on their node while the claims are
provisioned (VolumeBinding's PreBind) and bound once every claim is Bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import clone, get_path, is_terminating, set_condition
from sregym.twin.machinery.store import WatchEvent
from sregym.twin.workloads.placement import (
    NO_NODES,
    UNRESOLVABLE,
    NodeInfo,
    PodEntry,
    PodState,
    Snapshot,
    Status,
    evaluate,
    fit_message,
    node_info,
    pod_entry,
    pod_state,
    run_filters,
    score_nodes,
)
from sregym.twin.workloads.volumes import ANN_SELECTED_NODE, claim_volumes, is_bound

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SCHEDULER_NAME = "default-scheduler"
INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
# VolumeBinding's bindTimeoutSeconds: how long a pod may wait for its claims to be provisioned.
BIND_TIMEOUT = 600.0
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"


@dataclass
class _Backoff:
    attempts: int = 0
    next_at: float = 0.0


@dataclass
class _Assumed:
    node: str
    deadline: float


@controller
class Scheduler(Controller):
    name = "scheduler"
    order = 60
    user = "system:kube-scheduler"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._pending: set[tuple[str, str]] = set()
        self._backoff: dict[str, _Backoff] = {}
        self._assumed: dict[str, _Assumed] = {}
        self._entries: dict[str, tuple[str, PodEntry]] = {}
        self._pod_kind = twin.store.kind("Pod")
        for pod in twin.store.scan("Pod"):
            self._track(pod)
        twin.store.add_listener(self._on_change)

    # ------------------------------------------------------------------ queue
    def _on_change(self, event: WatchEvent) -> None:
        if event.kind.key != ("", "Pod"):
            return
        if event.type == "DELETED":
            meta = event.object.get("metadata") or {}
            self._pending.discard((meta.get("namespace", ""), meta.get("name", "")))
            uid = meta.get("uid", "")
            self._backoff.pop(uid, None)
            self._assumed.pop(uid, None)
            self._entries.pop(uid, None)
            return
        self._track(event.object)

    def _track(self, pod: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        spec = pod.get("spec") or {}
        if (not spec.get("nodeName") and not is_terminating(pod)
                and (spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME
                and get_path(pod, "status", "phase") not in ("Succeeded", "Failed")):
            self._pending.add(key)
            if not spec.get("schedulingGates") and any(
                    c.get("reason") == "SchedulingGated" for c in get_path(pod, "status", "conditions", default=None) or []):
                # Gates just lifted: the pod goes straight back to the active queue.
                self._backoff.pop(meta.get("uid", ""), None)
        else:
            self._pending.discard(key)

    def _due(self) -> list[dict[str, Any]]:
        now = self.twin.clock.now
        out = []
        for ns, name in sorted(self._pending):
            pod = self.twin.store.peek(self._pod_kind, ns, name)
            if pod is None:
                self._pending.discard((ns, name))
                continue
            backoff = self._backoff.get(pod["metadata"].get("uid", ""))
            if backoff is None or backoff.next_at <= now:
                out.append(pod)
        out.sort(key=lambda p: (-int(get_path(p, "spec", "priority") or 0),
                                p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
        return out

    # -------------------------------------------------------------- reconcile
    def reconcile(self) -> None:
        if not self._pending:
            return
        due = self._due()
        if not due:
            return
        snap = self._snapshot()
        for pod in due:
            # An earlier pod's preemption or binding may have changed it; re-read.
            current = self.twin.store.peek(self._pod_kind, pod["metadata"].get("namespace"),
                                           pod["metadata"]["name"])
            if current is None or get_path(current, "spec", "nodeName") or is_terminating(current):
                continue
            self._schedule_one(current, snap)

    def _snapshot(self) -> Snapshot:
        store = self.twin.store
        nodes = [node_info(n) for n in store.scan(store.kind("Node"))]
        by_name = {n.name: n for n in nodes}
        namespaces = {ns["metadata"]["name"]: (ns["metadata"].get("labels") or {})
                      for ns in store.scan("Namespace")}
        snap = Snapshot(nodes, namespaces)
        for pod in store.scan(self._pod_kind):
            node_name = get_path(pod, "spec", "nodeName")
            uid = pod["metadata"].get("uid", "")
            if not node_name:
                assumed = self._assumed.get(uid)
                if assumed is not None and assumed.node in by_name:
                    entry = pod_entry(pod, self._entries)
                    entry.node = assumed.node
                    by_name[assumed.node].add(entry)
                elif get_path(pod, "status", "nominatedNodeName"):
                    entry = pod_entry(pod, self._entries)
                    entry.node = pod["status"]["nominatedNodeName"]
                    snap.nominated.append(entry)
                continue
            if get_path(pod, "status", "phase") in ("Succeeded", "Failed"):
                continue
            info = by_name.get(node_name)
            if info is not None:
                info.add(pod_entry(pod, self._entries))
        return snap

    # ------------------------------------------------------------- one pod
    def _schedule_one(self, pod: dict[str, Any], snap: Snapshot) -> None:
        meta = pod["metadata"]
        uid = meta.get("uid", "")
        if get_path(pod, "spec", "schedulingGates"):
            self._set_condition(pod, "SchedulingGated",
                                "Scheduling is blocked due to non-empty scheduling gates")
            self._retry_later(uid)
            return
        assumed = self._assumed.get(uid)
        if assumed is not None:
            self._finish_prebind(pod, assumed)
            return
        entry = pod_entry(pod, self._entries)
        if not snap.nodes:
            self._fail(pod, NO_NODES, None)
            return
        state, statuses, feasible = evaluate(self.twin, snap, pod, entry)
        if feasible:
            scores = score_nodes(snap, state, feasible)
            # Highest score wins; ties go to the first node by name (deterministic).
            best = min(scores, key=lambda s: (-s[0], s[1]))[1]
            node = snap.by_name()[best]
            self._assume_or_bind(pod, entry, state, node, snap)
            return
        message, nominate = self._preempt(pod, entry, state, statuses, snap)
        fit = fit_message(len(snap.nodes), statuses, state.prefilter, message or None)
        self._fail(pod, fit, nominate)

    def _assume_or_bind(self, pod: dict[str, Any], entry: PodEntry, state: PodState,
                        node: NodeInfo, snap: Snapshot) -> None:
        entry.node = node.name
        node.add(entry)
        unbound = [c for c in state.claims if not is_bound(c)]
        if not unbound:
            self._bind(pod, node.name)
            return
        # VolumeBinding PreBind: ask for provisioning on this node, bind once the claims are Bound.
        for pvc in unbound:
            if get_path(pvc, "metadata", "annotations", ANN_SELECTED_NODE) == node.name:
                continue

            def select(obj: dict[str, Any], node_name: str = node.name) -> None:
                obj["metadata"].setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name

            try:
                self.twin.store.mutate("PersistentVolumeClaim", pvc["metadata"]["namespace"],
                                       pvc["metadata"]["name"], select, user=self.user)
            except ApiError as exc:
                self._fail(pod, f'running PreBind plugin "VolumeBinding": {exc.message}', None)
                return
        self._assumed[entry.uid] = _Assumed(node.name, self.twin.clock.now + BIND_TIMEOUT)

    def _finish_prebind(self, pod: dict[str, Any], assumed: _Assumed) -> None:
        ns = pod["metadata"].get("namespace", "default")
        claims = [self.twin.store.peek("PersistentVolumeClaim", ns, c) for _v, c in claim_volumes(pod)]
        if all(c is not None and is_bound(c) for c in claims):
            self._assumed.pop(pod["metadata"]["uid"], None)
            self._bind(pod, assumed.node)
            return
        lost = any(c is None or get_path(c, "metadata", "annotations", ANN_SELECTED_NODE) != assumed.node
                   for c in claims if c is None or not is_bound(c))
        if lost or self.twin.clock.now >= assumed.deadline:
            self._assumed.pop(pod["metadata"]["uid"], None)
            reason = "context deadline exceeded" if not lost else "selected node annotation was removed"
            self._fail(pod, f'running PreBind plugin "VolumeBinding": binding volumes: {reason}', None)

    # ---------------------------------------------------------------- writes
    def _bind(self, pod: dict[str, Any], node: str) -> None:
        """The pods/binding subresource: nodeName and PodScheduled=True in one write."""
        meta = pod["metadata"]
        copy = clone(pod)
        copy["spec"]["nodeName"] = node
        status = copy.setdefault("status", {})
        status.setdefault("phase", "Pending")
        status["conditions"] = set_condition(list(status.get("conditions") or []), "PodScheduled",
                                             "True", self.twin.clock.iso(), probe_time=True)
        for cond in status["conditions"]:
            if cond.get("type") == "PodScheduled":
                cond.pop("reason", None)
                cond.pop("message", None)
        try:
            bound = self.twin.store.update(copy, subresource="binding", user=self.user)
        except ApiError as exc:
            self._fail(pod, f"binding rejected: {exc.message}", None)
            return
        self._backoff.pop(meta.get("uid", ""), None)
        self.twin.events.normal(bound, "Scheduled",
                                f"Successfully assigned {meta.get('namespace')}/{meta['name']} to {node}",
                                component=SCHEDULER_NAME)

    def _set_condition(self, pod: dict[str, Any], reason: str, message: str,
                       nominated: str | None = None) -> dict[str, Any] | None:
        current = next((c for c in get_path(pod, "status", "conditions", default=None) or []
                        if c.get("type") == "PodScheduled"), None)
        if (current is not None and current.get("status") == "False" and current.get("reason") == reason
                and current.get("message") == message
                and (nominated is None or (get_path(pod, "status", "nominatedNodeName") or "") == nominated)):
            return pod  # nothing would change: skip the read-modify-write
        now = self.twin.clock.iso()

        def change(obj: dict[str, Any]) -> None:
            status = obj.setdefault("status", {})
            status.setdefault("phase", "Pending")
            status["conditions"] = set_condition(list(status.get("conditions") or []), "PodScheduled",
                                                 "False", now, reason=reason, message=message,
                                                 probe_time=True)
            if nominated is not None:
                if nominated:
                    status["nominatedNodeName"] = nominated
                else:
                    status.pop("nominatedNodeName", None)

        meta = pod["metadata"]
        try:
            return self.twin.store.mutate(self._pod_kind, meta.get("namespace"), meta["name"], change,
                                          status=True, user=self.user)
        except ApiError:
            return None

    def _fail(self, pod: dict[str, Any], message: str, nominated: str | None) -> None:
        updated = self._set_condition(pod, "Unschedulable", message, nominated) or pod
        self.twin.events.warning(updated, "FailedScheduling", message, component=SCHEDULER_NAME)
        self._retry_later(pod["metadata"].get("uid", ""))

    def _retry_later(self, uid: str) -> None:
        backoff = self._backoff.setdefault(uid, _Backoff())
        backoff.attempts += 1
        delay = min(INITIAL_BACKOFF * 2 ** (backoff.attempts - 1), MAX_BACKOFF)
        backoff.next_at = self.twin.clock.now + delay

    # ------------------------------------------------------------ preemption
    def _preempt(self, pod: dict[str, Any], entry: PodEntry, state: PodState,
                 statuses: dict[str, Status], snap: Snapshot) -> tuple[str, str | None]:
        """DefaultPreemption's PostFilter: (message for the FitError, nominated node or None to
        leave `nominatedNodeName` as is, "" to clear it)."""
        if (get_path(pod, "spec", "preemptionPolicy") or "PreemptLowerPriority") == "Never":
            return "preemption: not eligible due to preemptionPolicy=Never.", None
        nominated = get_path(pod, "status", "nominatedNodeName")
        by_name = snap.by_name()
        if nominated and nominated in by_name:
            status = statuses.get(nominated)
            if status is None or status.code != UNRESOLVABLE:
                if any(p.terminating and p.priority < entry.priority for p in by_name[nominated].pods):
                    return "preemption: not eligible due to a terminating pod on the nominated node.", None
        node_status: dict[str, Status] = {}
        candidates: list[tuple[tuple[Any, ...], NodeInfo, list[PodEntry]]] = []
        for node in snap.nodes:
            status = statuses.get(node.name)
            if status is None or status.code == UNRESOLVABLE:
                node_status[node.name] = Status(UNRESOLVABLE, (NOT_HELPFUL,))
                continue
            victims, failure = self._select_victims(pod, entry, node, snap)
            if failure is not None:
                node_status[node.name] = failure
                continue
            highest = max(v.priority for v in victims)
            key = (highest, sum(v.priority for v in victims), len(victims), node.name)
            candidates.append((key, node, victims))
        if not candidates:
            return "preemption: " + fit_message(len(snap.nodes), node_status), ""
        _key, node, victims = min(candidates, key=lambda c: c[0])
        self._evict(pod, entry, node.name, victims)
        return "", node.name

    def _select_victims(self, pod: dict[str, Any], entry: PodEntry, node: NodeInfo,
                        snap: Snapshot) -> tuple[list[PodEntry], Status | None]:
        lower = [p for p in node.pods if p.priority < entry.priority and not p.terminating]
        if not lower:
            return [], Status(UNRESOLVABLE, (NO_VICTIMS,))
        removed = {p.uid for p in lower}
        _state, failure = self._fits_without(pod, entry, node, snap, removed)
        if failure is not None:
            return [], failure
        # Reprieve as many as possible, most important first.
        lower.sort(key=lambda p: (-p.priority, p.start, p.name))
        victims = []
        for candidate in lower:
            removed.discard(candidate.uid)
            _state, failure = self._fits_without(pod, entry, node, snap, removed)
            if failure is not None:
                removed.add(candidate.uid)
                victims.append(candidate)
        if not victims:
            return [], Status(UNRESOLVABLE, (NO_VICTIMS,))
        return victims, None

    def _fits_without(self, pod: dict[str, Any], entry: PodEntry, node: NodeInfo, snap: Snapshot,
                      removed: set[str]) -> tuple[PodState, Status | None]:
        trimmed = node.without(removed)
        trial = Snapshot([trimmed if n.name == node.name else n for n in snap.nodes],
                         snap.namespaces, [p for p in snap.nominated if p.uid not in removed])
        state = pod_state(self.twin, trial, pod, entry, removed)
        return state, run_filters(self.twin, trial, state, trimmed)

    def _evict(self, pod: dict[str, Any], entry: PodEntry, node: str, victims: list[PodEntry]) -> None:
        now = self.twin.clock.iso()
        for victim in victims:
            vmeta = victim.obj["metadata"]

            def disrupt(obj: dict[str, Any]) -> None:
                status = obj.setdefault("status", {})
                status["conditions"] = set_condition(
                    list(status.get("conditions") or []), "DisruptionTarget", "True", now,
                    reason="PreemptionByScheduler",
                    message=f"{SCHEDULER_NAME}: preempting to accommodate a higher priority pod")

            try:
                self.twin.store.mutate("Pod", vmeta.get("namespace"), vmeta["name"], disrupt,
                                       status=True, user=self.user)
                current = self.twin.store.peek("Pod", vmeta.get("namespace"), vmeta["name"]) or victim.obj
                self.twin.events.normal(current, "Preempted",
                                        f"Preempted by pod {entry.uid} on node {node}",
                                        component=SCHEDULER_NAME)
                self.twin.store.delete("Pod", vmeta.get("namespace"), vmeta["name"], user=self.user)
            except ApiError:
                continue
        # Lower-priority pods nominated to this node lose their nomination.
        for ns, name in sorted(self._pending):
            other = self.twin.store.peek("Pod", ns, name)
            if (other is None or get_path(other, "status", "nominatedNodeName") != node
                    or int(get_path(other, "spec", "priority") or 0) >= entry.priority):
                continue

            def clear(obj: dict[str, Any]) -> None:
                obj.get("status", {}).pop("nominatedNodeName", None)

            self.twin.store.mutate("Pod", ns, name, clear, status=True, user=self.user)
