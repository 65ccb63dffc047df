"""The disruption controller: the status of every PodDisruptionBudget.

The eviction subresource (`api/kube/eviction.py`, what `kubectl drain` calls) decides from
`status.disruptionsAllowed` alone, so this controller is what makes a PDB protect anything. Like
kube-controller-manager's it is event driven: a PDB is re-synced when it changes, when a pod it
selects is added, changed or deleted, and when an eviction the API server approved has not been
followed by the pod's deletion within two minutes (`DeletionTimeout`). A sync computes, as the real
`trySync` does:

- `expectedPods`: the pods selected, or, for `maxUnavailable` and percentage `minAvailable`, the
  sum of `spec.replicas` of their controllers (ReplicationController, the Deployment owning a
  ReplicaSet, a bare ReplicaSet, StatefulSet, or any kind with a `scale` subresource);
- `desiredHealthy` from `minAvailable` / `maxUnavailable` (percentages rounded up);
- `currentHealthy`: selected pods that are Ready, not terminating, and not in `disruptedPods`;
- `disruptionsAllowed = max(0, currentHealthy - desiredHealthy)` (0 while nothing is expected),
  with the `DisruptionAllowed` condition (SufficientPods / InsufficientPods).

A sync that cannot count (a selected pod's controller has no scale) fails safe: disruptions allowed
0 and `DisruptionAllowed=False` with reason SyncFailed, plus the Warning event the real one records.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from sregym.errors import ApiError
from sregym.twin.clock import parse_time
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import clone, controller_of
from sregym.twin.machinery.selectors import LabelSelector, selector_from_spec
from sregym.twin.machinery.store import WatchEvent
from sregym.twin.workloads.shared import is_ready

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

PDB_KEY = ("policy", "PodDisruptionBudget")
POD_KEY = ("", "Pod")
DELETION_TIMEOUT = 120.0  # seconds an approved eviction may wait for the pod's deletion
COMPONENT = "controllermanager"
_WORKLOADS = {("", "ReplicationController"), ("apps", "ReplicaSet"), ("apps", "Deployment"),
              ("apps", "StatefulSet")}


class SyncError(Exception):
    """Why expected pods could not be counted (the text of the real controller's error)."""


def pdb_selector(pdb: dict[str, Any]) -> LabelSelector:
    """The pods a PDB selects for the controller (nil selects nothing, `{}` everything)."""
    return selector_from_spec((pdb.get("spec") or {}).get("selector"))


def set_disruption_allowed_condition(status: dict[str, Any], now: str) -> None:
    """`pdbhelper.UpdateDisruptionAllowedCondition`: True/SufficientPods while disruptions are
    allowed, else False/InsufficientPods."""
    if int(status.get("disruptionsAllowed") or 0) > 0:
        set_pdb_condition(status, "True", "SufficientPods", "", now)
    else:
        set_pdb_condition(status, "False", "InsufficientPods", "", now)


def set_pdb_condition(status: dict[str, Any], value: str, reason: str, message: str, now: str) -> None:
    """`apimeta.SetStatusCondition` for `DisruptionAllowed` (a metav1.Condition)."""
    conditions = status.setdefault("conditions", [])
    generation = int(status.get("observedGeneration") or 0)
    for cond in conditions:
        if cond.get("type") == "DisruptionAllowed":
            if cond.get("status") != value:
                cond["status"] = value
                cond["lastTransitionTime"] = now
            cond["reason"] = reason
            cond["message"] = message
            cond["observedGeneration"] = generation
            return
    conditions.append({"type": "DisruptionAllowed", "status": value, "observedGeneration": generation,
                       "lastTransitionTime": now, "reason": reason, "message": message})


def _conditions_up_to_date(status: dict[str, Any]) -> bool:
    """`pdbhelper.ConditionsAreUpToDate`."""
    for cond in status.get("conditions") or []:
        if cond.get("type") == "DisruptionAllowed":
            if int(cond.get("observedGeneration") or 0) != int(status.get("observedGeneration") or 0):
                return False
            allowed = int(status.get("disruptionsAllowed") or 0) > 0
            return (cond.get("status") == "True") == allowed
    return False


def scaled_value(value: Any, total: int) -> int:
    """`intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value)
    if not text.endswith("%"):
        raise SyncError("invalid value for IntOrString: invalid type: string is not a percentage")
    try:
        percent = int(text[:-1])
    except ValueError:
        raise SyncError(f'invalid value "{text}": strconv.Atoi: parsing "{text[:-1]}": invalid syntax') \
            from None
    return math.ceil(percent * total / 100)


def go_selector_string(spec: Any) -> str:
    """A `*metav1.LabelSelector` printed with `%v` (its generated String())."""
    if not isinstance(spec, dict):
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted((spec.get("matchLabels") or {}).items()))
    exprs = "".join(f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
                    f"Values:[{' '.join(str(v) for v in e.get('values') or [])}],}},"
                    for e in spec.get("matchExpressions") or [] if isinstance(e, dict))
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")


@controller
class DisruptionController(Controller):
    name = "disruption"
    order = 85
    user = "system:serviceaccount:kube-system:disruption-controller"
    component: ClassVar[str] = COMPONENT

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._pdb_kind = twin.kinds.by_kind("policy/v1", "PodDisruptionBudget")
        self._sync_all = True  # first tick: a twin restored from a snapshot has PDBs already
        self._dirty: set[tuple[str, str]] = set()
        self._pod_changes: list[tuple[str, str, dict[str, str]]] = []
        self._recheck: dict[tuple[str, str], float] = {}
        twin.store.add_listener(self._on_event)

    # ------------------------------------------------------------------ informers
    def _on_event(self, event: WatchEvent) -> None:
        key = event.kind.key
        if key != POD_KEY and key != PDB_KEY:
            return
        meta = event.object.get("metadata") or {}
        if key == PDB_KEY:
            self._dirty.add((meta.get("namespace") or "", meta.get("name") or ""))
        elif self.twin.store.count(self._pdb_kind):
            self._pod_changes.append((meta.get("namespace") or "", meta.get("name") or "",
                                      meta.get("labels") or {}))

    def _pdbs_for_pod(self, namespace: str, labels: dict[str, str]) -> list[dict[str, Any]]:
        return [pdb for pdb in self.twin.store.scan(self._pdb_kind, namespace)
                if pdb_selector(pdb).matches(labels)]

    # ------------------------------------------------------------------ reconcile
    def reconcile(self) -> None:
        store = self.twin.store
        if not store.count(self._pdb_kind):
            self._dirty.clear()
            self._pod_changes.clear()
            self._recheck.clear()
            self._sync_all = False
            return
        dirty = set(self._dirty)
        self._dirty.clear()
        if self._sync_all:
            self._sync_all = False
            dirty.update((p["metadata"].get("namespace", ""), p["metadata"]["name"])
                         for p in store.scan(self._pdb_kind))
        changes, self._pod_changes = self._pod_changes, []
        for namespace, pod_name, labels in changes:
            matching = self._pdbs_for_pod(namespace, labels)
            if len(matching) > 1:
                pod = store.peek("Pod", namespace, pod_name)
                if pod is not None:
                    self.twin.events.warning(
                        pod, "MultiplePodDisruptionBudgets",
                        f'Pod "{namespace}"/"{pod_name}" matches multiple PodDisruptionBudgets.  '
                        f'Chose "{matching[0]["metadata"]["name"]}" arbitrarily.',
                        component=self.component)
            if matching:
                dirty.add((namespace, matching[0]["metadata"]["name"]))
        now = self.twin.clock.now
        for key, when in sorted(self._recheck.items()):
            if when <= now:
                dirty.add(key)
                del self._recheck[key]
        for namespace, name in sorted(dirty):
            pdb = store.peek(self._pdb_kind, namespace, name)
            if pdb is None:
                self._recheck.pop((namespace, name), None)
                continue
            try:
                self._try_sync(pdb, now)
            except SyncError as exc:
                self._fail_safe(pdb, str(exc))
            except ApiError:
                continue

    def _try_sync(self, pdb: dict[str, Any], now: float) -> None:
        meta = pdb["metadata"]
        namespace = meta.get("namespace", "")
        selector = pdb_selector(pdb)
        pods = [p for p in self.twin.store.scan("Pod", namespace)
                if selector.matches((p.get("metadata") or {}).get("labels"))]
        if not pods:
            self.twin.events.normal(pdb, "NoPods", "No matching pods found", component=self.component)
        try:
            expected, desired, unmanaged = self._expected_pod_count(pdb, pods)
        except SyncError as exc:
            self.twin.events.warning(pdb, "CalculateExpectedPodCountFailed",
                                     f"Failed to calculate the number of expected pods: {exc}",
                                     component=self.component)
            raise
        if unmanaged:
            self.twin.events.warning(
                pdb, "UnmanagedPods",
                f"Pods selected by this PodDisruptionBudget (selector: "
                f"{go_selector_string((pdb.get('spec') or {}).get('selector'))}) were found to be "
                "unmanaged. As a result, the status of the PDB cannot be calculated correctly, which "
                "may result in undefined behavior. To account for these pods please set "
                '".spec.minAvailable" field of the PDB to an integer value.', component=self.component)
        disrupted, recheck = self._disrupted_pods(pdb, pods, now)
        healthy = 0
        for pod in pods:
            pod_meta = pod.get("metadata") or {}
            if pod_meta.get("deletionTimestamp") or pod_meta.get("name") in disrupted:
                continue
            if is_ready(pod):
                healthy += 1
        key = (namespace, meta["name"])
        if recheck is not None:
            self._recheck[key] = recheck
        else:
            self._recheck.pop(key, None)
        self._update_status(pdb, healthy, desired, expected, disrupted)

    def _expected_pod_count(self, pdb: dict[str, Any],
                            pods: list[dict[str, Any]]) -> tuple[int, int, list[str]]:
        spec = pdb.get("spec") or {}
        unmanaged: list[str] = []
        expected = desired = 0
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = self._expected_scale(pods)
            desired = max(0, expected - scaled_value(spec["maxUnavailable"], expected))
        elif spec.get("minAvailable") is not None:
            min_available = spec["minAvailable"]
            if isinstance(min_available, int) and not isinstance(min_available, bool):
                desired, expected = min_available, len(pods)
            else:
                expected, unmanaged = self._expected_scale(pods)
                desired = scaled_value(min_available, expected)
        return expected, desired, unmanaged

    def _expected_scale(self, pods: list[dict[str, Any]]) -> tuple[int, list[str]]:
        """Sum of `spec.replicas` over the controllers of the pods (each counted once)."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_of(pod)
            pod_meta = pod.get("metadata") or {}
            if ref is None:
                unmanaged.append(pod_meta.get("name", ""))
                continue
            if ref.get("uid") in scales:
                continue
            found = self._controller_scale(ref, pod_meta.get("namespace", ""))
            if found is None:
                raise SyncError(f'found no controllers for pod "{pod_meta.get("name", "")}"')
            scales[found[0]] = found[1]
        return sum(scales[uid] for uid in sorted(scales)), unmanaged

    def _controller_scale(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        """The finders of the real controller, in their order: (uid, replicas) or None."""
        store = self.twin.store
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        kind = ref.get("kind") or ""
        name = ref.get("name") or ""
        if (group, kind) in _WORKLOADS or (group == "extensions" and kind == "ReplicaSet"):
            owner = store.peek(kind, namespace, name) if group != "extensions" else \
                store.peek("ReplicaSet", namespace, name)
            if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
                return None
            if kind == "ReplicaSet":
                parent = controller_of(owner)
                if parent is not None and parent.get("kind") == "Deployment":
                    deployment = store.peek("Deployment", namespace, parent.get("name", ""))
                    if deployment is None or deployment["metadata"].get("uid") != parent.get("uid"):
                        return None
                    return deployment["metadata"]["uid"], _replicas(deployment)
            return owner["metadata"]["uid"], _replicas(owner)
        # Any other kind: its scale subresource, if it has one.
        try:
            resource_kind = self.twin.kinds.by_kind(str(ref.get("apiVersion") or ""), kind)
        except ApiError as exc:
            raise SyncError(exc.message) from None
        owner = store.peek(resource_kind, namespace, name)
        if "scale" not in resource_kind.subresources:
            raise SyncError(f"{resource_kind.resource} does not implement the scale subresource")
        if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
            return None
        return owner["metadata"]["uid"], _replicas(owner)

    def _disrupted_pods(self, pdb: dict[str, Any], pods: list[dict[str, Any]],
                        now: float) -> tuple[dict[str, str], float | None]:
        """`buildDisruptedPodMap`: keep approved evictions still within the deletion timeout."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        result: dict[str, str] = {}
        recheck: float | None = None
        if not recorded:
            return result, recheck
        namespace = pdb["metadata"].get("namespace", "")
        for pod in pods:
            pod_meta = pod.get("metadata") or {}
            name = pod_meta.get("name", "")
            if pod_meta.get("deletionTimestamp") or name not in recorded:
                continue
            try:
                expected_deletion = parse_time(recorded[name]) + DELETION_TIMEOUT
            except (TypeError, ValueError):
                continue
            if expected_deletion < now:
                # The real message names the namespace twice; kept as it is.
                self.twin.events.warning(
                    pod, "NotDeleted",
                    f"Pod was expected by PDB {namespace}/{namespace} to be deleted but it wasn't",
                    component=self.component)
            else:
                recheck = expected_deletion if recheck is None else min(recheck, expected_deletion)
                result[name] = recorded[name]
        return result, recheck

    # ------------------------------------------------------------------ writes
    def _update_status(self, pdb: dict[str, Any], healthy: int, desired: int, expected: int,
                       disrupted: dict[str, str]) -> None:
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        old = pdb.get("status") or {}
        generation = int(pdb["metadata"].get("generation") or 1)
        if (int(old.get("currentHealthy") or 0) == healthy
                and int(old.get("desiredHealthy") or 0) == desired
                and int(old.get("expectedPods") or 0) == expected
                and int(old.get("disruptionsAllowed") or 0) == allowed
                and (old.get("disruptedPods") or {}) == disrupted
                and int(old.get("observedGeneration") or 0) == generation
                and _conditions_up_to_date(old)):
            return
        status: dict[str, Any] = {"observedGeneration": generation}
        if disrupted:
            status["disruptedPods"] = disrupted
        status.update({"disruptionsAllowed": allowed, "currentHealthy": healthy,
                       "desiredHealthy": desired, "expectedPods": expected,
                       "conditions": clone(old.get("conditions") or [])})
        set_disruption_allowed_condition(status, self.twin.clock.iso())
        self._write(pdb, status)

    def _fail_safe(self, pdb: dict[str, Any], message: str) -> None:
        status = clone(pdb.get("status") or {})
        status["disruptionsAllowed"] = 0
        set_pdb_condition(status, "False", "SyncFailed", message, self.twin.clock.iso())
        try:
            self._write(pdb, status)
        except ApiError:
            return

    def _write(self, pdb: dict[str, Any], status: dict[str, Any]) -> None:
        meta = pdb["metadata"]

        def put(obj: dict[str, Any]) -> None:
            obj["status"] = status

        self.twin.store.mutate(self._pdb_kind, meta.get("namespace"), meta["name"], put, status=True,
                               user=self.user)


def _replicas(obj: dict[str, Any]) -> int:
    replicas = (obj.get("spec") or {}).get("replicas")
    return int(replicas) if isinstance(replicas, int) and not isinstance(replicas, bool) else 1


__all__ = ["DELETION_TIMEOUT", "DisruptionController", "go_selector_string", "pdb_selector",
           "scaled_value", "set_disruption_allowed_condition", "set_pdb_condition"]
