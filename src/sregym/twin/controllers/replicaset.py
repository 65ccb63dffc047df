"""The ReplicaSet controller: keep `spec.replicas` active pods, report what exists.

Faithful where an SRE looks: pods are named `<rs>-<5 chars>` by `generateName`, carry a controller
ownerReference, and are created as the `replicaset-controller` service account so quota and
webhooks judge them exactly as on a real cluster. A rejected create becomes a `FailedCreate`
Warning event ("Error creating: <API message>") retried with the work queue's exponential back-off,
so the event count grows the way `kubectl describe rs` shows it. Scale-down picks victims in kube's
order (unscheduled, pending, not ready, doubled-up, recently ready, restarted, newest first).
Terminating and finished pods are not counted, as in the real controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import clone, owner_ref, set_condition
from sregym.twin.machinery.selectors import selector_from_map
from sregym.twin.workloads.shared import (
    ChangeGate,
    OwnerIndex,
    is_active,
    is_available,
    is_ready,
    pod_phase,
    ready_since,
    restart_count,
    ts,
)

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

POD = ("", "Pod")
BURST_REPLICAS = 500
# Work-queue back-off after a failed sync: 5 ms doubling, capped. The real cap is 1000 s; the
# twin caps at 300 s so a fix made by an agent shows within a verification window.
BACKOFF_BASE = 0.005
BACKOFF_CAP = 300.0
MAX_GENERATED_PREFIX = 58


def pod_from_template(template: dict[str, Any], owner: dict[str, Any], namespace: str,
                      name: str | None = None, generate_prefix: str | None = None) -> dict[str, Any]:
    """A pod built from a controller's pod template (`controller.GetPodFromTemplate`)."""
    tmeta = template.get("metadata") or {}
    meta: dict[str, Any] = {"namespace": namespace, "ownerReferences": [owner_ref(owner)]}
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = (generate_prefix or "")[:MAX_GENERATED_PREFIX]
    if tmeta.get("labels"):
        meta["labels"] = clone(tmeta["labels"])
    if tmeta.get("annotations"):
        meta["annotations"] = clone(tmeta["annotations"])
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": clone(template.get("spec") or {})}


class Backoff:
    """Per-object exponential retry delay, like client-go's ItemExponentialFailureRateLimiter."""

    def __init__(self, base: float = BACKOFF_BASE, cap: float = BACKOFF_CAP) -> None:
        self.base = base
        self.cap = cap
        self._state: dict[str, tuple[int, float, int]] = {}  # uid -> (failures, retry_at, generation)

    def ready(self, uid: str, now: float, generation: int) -> bool:
        state = self._state.get(uid)
        if state is None:
            return True
        # An update to the object itself is a plain (not rate-limited) re-queue.
        return now >= state[1] or generation != state[2]

    def retry_at(self, uid: str) -> float | None:
        state = self._state.get(uid)
        return state[1] if state is not None else None

    def failed(self, uid: str, now: float, generation: int) -> None:
        failures = self._state.get(uid, (0, 0.0, 0))[0] + 1
        delay = min(self.cap, self.base * 2 ** failures)
        self._state[uid] = (failures, now + max(delay, 1.0), generation)

    def forget(self, uid: str) -> None:
        self._state.pop(uid, None)


def deletion_order(pods: list[dict[str, Any]], related: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pods sorted so that the first ones are deleted first (`ActivePodsWithRanks`)."""
    on_node: dict[str, int] = {}
    for pod in related:
        node = (pod.get("spec") or {}).get("nodeName")
        if node and is_active(pod):
            on_node[node] = on_node.get(node, 0) + 1
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}

    def key(pod: dict[str, Any]) -> tuple[Any, ...]:
        meta = pod.get("metadata") or {}
        node = (pod.get("spec") or {}).get("nodeName") or ""
        ready = is_ready(pod)
        try:
            cost = int((meta.get("annotations") or {}).get("controller.kubernetes.io/pod-deletion-cost", 0))
        except ValueError:
            cost = 0
        since = ready_since(pod) if ready else None
        created = ts(meta["creationTimestamp"]) if meta.get("creationTimestamp") else 0.0
        return (1 if node else 0, phase_rank.get(pod_phase(pod), 2), 1 if ready else 0, cost,
                -on_node.get(node, 0) if node else 0, -(since or 0.0), -restart_count(pod),
                -created, meta.get("name", ""))

    return sorted(pods, key=key)


@controller
class ReplicaSetController(Controller):
    name = "replicaset"
    order = 35
    user = "system:serviceaccount:kube-system:replicaset-controller"
    component: ClassVar[str] = "replicaset-controller"
    kind_key: ClassVar[tuple[str, str]] = ("apps", "ReplicaSet")

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.index = OwnerIndex.of(twin)
        self.backoff = Backoff()
        self.gate = ChangeGate(self.index)
        self.kind = twin.store.kind("ReplicaSet")
        self.pod_kind = twin.store.kind("Pod")

    def reconcile(self) -> None:
        store = self.twin.store
        if not store.count(self.kind):
            return
        now = self.twin.clock.now
        for rs in list(store.scan(self.kind)):
            if self.gate.due(rs, now):
                self.sync(rs, now)

    # ------------------------------------------------------------------ sync
    def sync(self, rs: dict[str, Any], now: float) -> None:
        meta = rs["metadata"]
        uid = meta["uid"]
        retry_at = self.backoff.retry_at(uid)
        if retry_at is not None:
            self.gate.wake_at(uid, retry_at)
        pods = self.index.children(POD, uid)
        active = [p for p in pods if is_active(p)]
        error: tuple[str, str] | None = None
        if not meta.get("deletionTimestamp"):
            error = self.manage(rs, active, now)
            if error is None:
                pods = self.index.children(POD, uid)
                active = [p for p in pods if is_active(p)]
        self.write_status(rs, active, error, now)

    def manage(self, rs: dict[str, Any], active: list[dict[str, Any]],
               now: float) -> tuple[str, str] | None:
        """Create or delete pods; returns (reason, message) of a failure for the status."""
        meta = rs["metadata"]
        spec = rs.get("spec") or {}
        desired = int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1)
        diff = len(active) - desired
        generation = int(meta.get("generation") or 1)
        if diff < 0:
            if not self.backoff.ready(meta["uid"], now, generation):
                return self._pending_failure(rs)
            missing = min(-diff, BURST_REPLICAS)
            batch = 1
            created = 0
            while created < missing:
                for _ in range(min(batch, missing - created)):
                    message = self.create_pod(rs)
                    if message is not None:
                        self.backoff.failed(meta["uid"], now, generation)
                        return ("FailedCreate", message)
                    created += 1
                batch *= 2
            self.backoff.forget(meta["uid"])
        elif diff > 0:
            victims = deletion_order(active, self._related_pods(rs))[:diff]
            for pod in victims:
                pmeta = pod["metadata"]
                try:
                    self.twin.store.delete("Pod", pmeta["namespace"], pmeta["name"], user=self.user)
                except ApiError as exc:
                    if exc.code != 404:
                        self.twin.events.warning(rs, "FailedDelete", f"Error deleting: {exc.message}",
                                                 component=self.component)
                        return ("FailedDelete", exc.message)
                    continue
                self.twin.events.normal(rs, "SuccessfulDelete", f"Deleted pod: {pmeta['name']}",
                                        component=self.component)
        return None

    def _pending_failure(self, rs: dict[str, Any]) -> tuple[str, str] | None:
        """While backing off, keep reporting the failure condition already in the status."""
        for cond in (rs.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "ReplicaFailure" and cond.get("status") == "True":
                return (cond.get("reason", "FailedCreate"), cond.get("message", ""))
        return None

    def create_pod(self, rs: dict[str, Any]) -> str | None:
        meta = rs["metadata"]
        template = (rs.get("spec") or {}).get("template") or {}
        pod = pod_from_template(template, rs, meta["namespace"], generate_prefix=f"{meta['name']}-")
        try:
            created = self.twin.store.create(pod, user=self.user)
        except ApiError as exc:
            self.twin.events.warning(rs, "FailedCreate", f"Error creating: {exc.message}",
                                     component=self.component)
            return exc.message
        self.twin.events.normal(rs, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}",
                                component=self.component)
        return None

    def _related_pods(self, rs: dict[str, Any]) -> list[dict[str, Any]]:
        """Pods of every ReplicaSet sharing this one's controller (its Deployment's other RSes)."""
        parent = next((r for r in rs["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
        if parent is None:
            return self.index.children(POD, rs["metadata"]["uid"])
        out: list[dict[str, Any]] = []
        for sibling in self.index.children(self.kind_key, parent["uid"]):
            out.extend(self.index.children(POD, sibling["metadata"]["uid"]))
        return out

    # ------------------------------------------------------------------ status
    def write_status(self, rs: dict[str, Any], active: list[dict[str, Any]],
                     error: tuple[str, str] | None, now: float) -> None:
        spec = rs.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        template_labels = selector_from_map(((spec.get("template") or {}).get("metadata") or {}).get("labels"))
        fully = ready = available = 0
        for pod in active:
            if template_labels.matches((pod.get("metadata") or {}).get("labels")):
                fully += 1
            if is_ready(pod):
                ready += 1
                if is_available(pod, min_ready, now):
                    available += 1
                else:
                    since = ready_since(pod)
                    if since is not None:
                        self.gate.wake_at(rs["metadata"]["uid"], since + min_ready + self.twin.clock.tick)
        retry_at = self.backoff.retry_at(rs["metadata"]["uid"])
        if retry_at is not None:
            self.gate.wake_at(rs["metadata"]["uid"], retry_at)
        old = rs.get("status") or {}
        status: dict[str, Any] = {"replicas": len(active)}
        for key, value in (("fullyLabeledReplicas", fully), ("readyReplicas", ready),
                           ("availableReplicas", available)):
            if value:
                status[key] = value
        status["observedGeneration"] = int(rs["metadata"].get("generation") or 1)
        conditions = [clone(c) for c in old.get("conditions") or []]
        failure = next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)
        if error is not None and failure is None:
            set_condition(conditions, "ReplicaFailure", "True", self.twin.clock.iso(),
                          reason=error[0], message=error[1])
        elif error is None and failure is not None:
            conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
        if conditions:
            status["conditions"] = conditions
        if status == old:
            return
        meta = rs["metadata"]

        def put(obj: dict[str, Any]) -> None:
            obj["status"] = status

        self.twin.store.mutate(self.kind, meta["namespace"], meta["name"], put, status=True,
                               user=self.user)
