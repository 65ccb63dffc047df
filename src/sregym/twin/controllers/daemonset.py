"""The DaemonSet controller: one pod per eligible node.

A node is eligible when the pod template's nodeSelector and required node affinity match it and
its NoSchedule/NoExecute taints are tolerated, counting the tolerations kube adds to every daemon
pod (not-ready, unreachable, disk/memory/pid-pressure, unschedulable; network-unavailable with
hostNetwork), which is why a DaemonSet skips the tainted control-plane node unless it tolerates
that taint. Pods are created with a node affinity pinning `metadata.name` to their node (as the
real controller does) and bound by the scheduler; rolling updates replace at most
`maxUnavailable` available pods at a time.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, ClassVar

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.controllers.replicaset import Backoff, pod_from_template
from sregym.twin.controllers.statefulset import ensure_revision, trim_revisions
from sregym.twin.workloads.shared import (
    ChangeGate,
    OwnerIndex,
    is_available,
    is_ready,
    is_terminating,
    pod_phase,
    ready_since,
    scaled_value,
)

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

POD = ("", "Pod")
REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")


# ------------------------------------------------------------------ node matching
def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """`Toleration.ToleratesTaint`."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def _requirement_matches(req: dict[str, Any], values_of: dict[str, str]) -> bool:
    key = req.get("key", "")
    op = req.get("operator")
    values = [str(v) for v in req.get("values") or []]
    present = key in values_of
    value = values_of.get(key)
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and values:
        try:
            number, bound = int(value or ""), int(values[0])
        except ValueError:
            return False
        return number > bound if op == "Gt" else number < bound
    return False


def node_affinity_matches(pod_spec: dict[str, Any], node: dict[str, Any]) -> bool:
    """nodeSelector plus required node affinity (`nodeaffinity.GetRequiredNodeAffinity`)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(key) != str(value):
            return False
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if not required:
        return True
    fields = {"metadata.name": (node.get("metadata") or {}).get("name", "")}
    for term in required.get("nodeSelectorTerms") or []:
        exprs = term.get("matchExpressions") or []
        match_fields = term.get("matchFields") or []
        if not exprs and not match_fields:
            continue
        if all(_requirement_matches(r, labels) for r in exprs) and \
                all(_requirement_matches(r, fields) for r in match_fields):
            return True
    return False


def daemon_tolerations(pod_spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The template's tolerations plus the ones every daemon pod gets."""
    tolerations = list(pod_spec.get("tolerations") or [])
    extra = list(DAEMON_TOLERATIONS)
    if pod_spec.get("hostNetwork"):
        extra.append(NETWORK_UNAVAILABLE)
    for key, effect in extra:
        if not any(t.get("key") == key and t.get("effect") == effect for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    return tolerations


def should_run(pod_spec: dict[str, Any], node: dict[str, Any]) -> tuple[bool, bool]:
    """(should run a new pod here, may keep an existing one here)."""
    if pod_spec.get("nodeName") and pod_spec["nodeName"] != node["metadata"]["name"]:
        return False, False
    if not node_affinity_matches(pod_spec, node):
        return False, False
    tolerations = daemon_tolerations(pod_spec)
    taints = (node.get("spec") or {}).get("taints") or []
    untolerated = [t for t in taints if t.get("effect") in ("NoSchedule", "NoExecute")
                   and not any(tolerates(tol, t) for tol in tolerations)]
    if not untolerated:
        return True, True
    keep = not any(t.get("effect") == "NoExecute" for t in untolerated)
    return False, keep


def pinned_node(pod: dict[str, Any]) -> str | None:
    """The node a daemon pod belongs to: its nodeName, or the node its affinity pins."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or []:
        for req in term.get("matchFields") or []:
            if req.get("key") == "metadata.name" and req.get("operator") == "In" and req.get("values"):
                return str(req["values"][0])
    return None


@controller
class DaemonSetController(Controller):
    name = "daemonset"
    order = 45
    user = "system:serviceaccount:kube-system:daemon-set-controller"
    component: ClassVar[str] = "daemonset-controller"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.index = OwnerIndex.of(twin)
        self.backoff = Backoff()
        self.gate = ChangeGate(self.index)
        self._nodes_seen: tuple[tuple[str, Any, Any, Any], ...] = ()

    def reconcile(self) -> None:
        store = self.twin.store
        if not store.count("DaemonSet"):
            return
        nodes = list(store.scan("Node"))
        # Only what decides placement: labels, taints, unschedulable (not heartbeats).
        seen = tuple((n["metadata"]["name"], n["metadata"].get("labels"), (n.get("spec") or {}).get("taints"),
                      (n.get("spec") or {}).get("unschedulable")) for n in nodes)
        force = seen != self._nodes_seen
        self._nodes_seen = seen
        now = self.twin.clock.now
        for ds in list(store.scan("DaemonSet")):
            if not self.gate.due(ds, now) and not force:
                continue
            try:
                self.sync(ds, nodes)
            except ApiError:
                self.gate.wake_at(ds["metadata"]["uid"], now)
                continue

    def _pods_by_node(self, ds: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for pod in self.index.children(POD, ds["metadata"]["uid"]):
            node = pinned_node(pod)
            if node:
                out.setdefault(node, []).append(pod)
        return out

    def sync(self, ds: dict[str, Any], nodes: list[dict[str, Any]]) -> None:
        meta = ds["metadata"]
        template = (ds.get("spec") or {}).get("template") or {}
        pod_spec = template.get("spec") or {}
        revision, revisions = ensure_revision(self, ds, self.index)
        if revision is None:
            return
        digest = (revision["metadata"].get("labels") or {}).get("controller.kubernetes.io/hash", "")
        if not meta.get("deletionTimestamp"):
            self._manage(ds, nodes, pod_spec, digest)
            self._rolling_update(ds, nodes, pod_spec, digest)
        self._write_status(ds, nodes, pod_spec, digest)
        trim_revisions(self, ds, revisions, {revision["metadata"]["name"]})

    def _manage(self, ds: dict[str, Any], nodes: list[dict[str, Any]], pod_spec: dict[str, Any],
                digest: str) -> None:
        meta = ds["metadata"]
        now = self.twin.clock.now
        generation = int(meta.get("generation") or 1)
        by_node = self._pods_by_node(ds)
        node_names = {n["metadata"]["name"] for n in nodes}
        for node in nodes:
            name = node["metadata"]["name"]
            run, keep = should_run(pod_spec, node)
            pods = [p for p in by_node.get(name, []) if not is_terminating(p)]
            failed = [p for p in pods if pod_phase(p) == "Failed"]
            for pod in failed:
                self.twin.events.warning(ds, "FailedDaemonPod",
                                         f"Found failed daemon pod {pod['metadata']['namespace']}/"
                                         f"{pod['metadata']['name']} on node {name}, will try to kill it",
                                         component=self.component)
                self._delete(ds, pod)
            pods = [p for p in pods if pod_phase(p) != "Failed"]
            if run and not pods and not failed:
                if not self.backoff.ready(f"{meta['uid']}/{name}", now, generation):
                    self.gate.wake_at(meta["uid"], self.backoff.retry_at(f"{meta['uid']}/{name}") or now)
                    continue
                if self._create(ds, name, digest):
                    self.backoff.forget(f"{meta['uid']}/{name}")
                else:
                    self.backoff.failed(f"{meta['uid']}/{name}", now, generation)
                    self.gate.wake_at(meta["uid"], self.backoff.retry_at(f"{meta['uid']}/{name}") or now)
            elif not keep:
                for pod in pods:
                    self._delete(ds, pod)
            elif len(pods) > 1:
                # Keep the oldest daemon pod of a node, delete the rest.
                pods.sort(key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
                for pod in pods[1:]:
                    self._delete(ds, pod)
        for name in sorted(set(by_node) - node_names):
            for pod in by_node[name]:
                if not is_terminating(pod):
                    self._delete(ds, pod)

    def _rolling_update(self, ds: dict[str, Any], nodes: list[dict[str, Any]], pod_spec: dict[str, Any],
                        digest: str) -> None:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.twin.clock.now
        by_node = self._pods_by_node(ds)
        eligible = [n["metadata"]["name"] for n in nodes if should_run(pod_spec, n)[0]]
        max_unavailable = max(1, scaled_value((strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1),
                                              len(eligible), True))
        unavailable = 0
        old: list[dict[str, Any]] = []
        for name in eligible:
            pods = [p for p in by_node.get(name, []) if not is_terminating(p)]
            if not pods or not any(is_available(p, min_ready, now) for p in pods):
                unavailable += 1
            for pod in pods:
                if ((pod["metadata"].get("labels") or {}).get(REVISION_LABEL)) != digest:
                    old.append(pod)
        for pod in old:
            if not is_available(pod, min_ready, now):
                self._delete(ds, pod)
            elif unavailable < max_unavailable:
                self._delete(ds, pod)
                unavailable += 1

    def _create(self, ds: dict[str, Any], node: str, digest: str) -> bool:
        meta = ds["metadata"]
        template = (ds.get("spec") or {}).get("template") or {}
        pod = pod_from_template(template, ds, meta["namespace"], generate_prefix=f"{meta['name']}-")
        labels = pod["metadata"].setdefault("labels", {})
        labels[REVISION_LABEL] = digest
        labels[GENERATION_LABEL] = str(meta.get("generation") or 1)
        spec = pod["spec"]
        affinity = spec.setdefault("affinity", {})
        node_affinity = affinity.setdefault("nodeAffinity", {})
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        spec["tolerations"] = daemon_tolerations(spec)
        try:
            created = self.twin.store.create(pod, user=self.user)
        except ApiError as exc:
            self.twin.events.warning(ds, "FailedCreate", f"Error creating: {exc.message}",
                                     component=self.component)
            return False
        self.twin.events.normal(ds, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}",
                                component=self.component)
        return True

    def _delete(self, ds: dict[str, Any], pod: dict[str, Any]) -> None:
        pmeta = pod["metadata"]
        with contextlib.suppress(ApiError):
            self.twin.store.delete("Pod", pmeta["namespace"], pmeta["name"], user=self.user)
            self.twin.events.normal(ds, "SuccessfulDelete", f"Deleted pod: {pmeta['name']}",
                                    component=self.component)

    def _write_status(self, ds: dict[str, Any], nodes: list[dict[str, Any]], pod_spec: dict[str, Any],
                      digest: str) -> None:
        meta = ds["metadata"]
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.twin.clock.now
        by_node = self._pods_by_node(ds)
        desired = current = misscheduled = ready = updated = available = 0
        for node in nodes:
            name = node["metadata"]["name"]
            run = should_run(pod_spec, node)[0]
            pods = [p for p in by_node.get(name, []) if not is_terminating(p)]
            if run:
                desired += 1
                if pods:
                    current += 1
                    pod = pods[0]
                    if is_ready(pod):
                        ready += 1
                    if is_available(pod, min_ready, now):
                        available += 1
                    elif ready_since(pod) is not None:
                        self.gate.wake_at(meta["uid"], (ready_since(pod) or now) + min_ready + 1)
                    if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) == digest:
                        updated += 1
            elif pods:
                misscheduled += 1
        status: dict[str, Any] = {
            "currentNumberScheduled": current,
            "desiredNumberScheduled": desired,
            "numberMisscheduled": misscheduled,
            "numberReady": ready,
            "observedGeneration": int(meta.get("generation") or 1),
        }
        if updated:
            status["updatedNumberScheduled"] = updated
        if available:
            status["numberAvailable"] = available
        if desired - available > 0:
            status["numberUnavailable"] = desired - available
        if status == (ds.get("status") or {}):
            return

        def put(o: dict[str, Any]) -> None:
            o["status"] = status

        self.twin.store.mutate("DaemonSet", meta["namespace"], meta["name"], put, status=True, user=self.user)
