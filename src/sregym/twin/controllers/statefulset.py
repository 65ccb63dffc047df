"""The StatefulSet controller: stable ordinal pods, their claims, ordered rollouts.

What an SRE relies on is reproduced: pods `<set>-0..N-1` recreated under the same name, one
PersistentVolumeClaim per claim template and ordinal (`<claim>-<set>-<ordinal>`, created before
the pod and kept after scale-down unless the retention policy says Delete), `OrderedReady`
creation (ordinal N+1 only once N is Running and Ready, which is why one crash-looping replica
stalls a whole database cluster) versus `Parallel`, ControllerRevisions with the
`controller-revision-hash` pod label, and rolling updates from the highest ordinal down that stop
at the first unhealthy pod.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, ClassVar

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.controllers.replicaset import Backoff, pod_from_template
from sregym.twin.machinery.objects import clone, owner_ref
from sregym.twin.workloads.shared import (
    ChangeGate,
    OwnerIndex,
    compute_hash,
    is_available,
    is_ready,
    is_terminating,
    pod_phase,
    ready_since,
)

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

POD = ("", "Pod")
REVISION = ("apps", "ControllerRevision")
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


# ------------------------------------------------------------------ controller revisions
def ensure_revision(ctl: Controller, owner: dict[str, Any],
                    index: OwnerIndex) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Find or create the ControllerRevision of the owner's current pod template.

    Returns (update revision, all revisions sorted by revision number). The revision data is the
    template wrapped the way kube stores it (`spec.template` with `$patch: replace`)."""
    meta = owner["metadata"]
    template = clone((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    data = {"spec": {"template": template}}
    collisions = (owner.get("status") or {}).get("collisionCount")
    digest = compute_hash(data, collisions)
    name = f"{meta['name']}-{digest}"
    revisions = sorted(index.children(REVISION, meta["uid"]), key=lambda r: int(r.get("revision") or 0))
    for rev in revisions:
        if rev["metadata"]["name"] == name:
            return rev, revisions
    number = max((int(r.get("revision") or 0) for r in revisions), default=0) + 1
    labels = clone(((owner.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {})
    labels["controller.kubernetes.io/hash"] = digest
    rev = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
           "metadata": {"name": name, "namespace": meta["namespace"], "labels": labels,
                        "ownerReferences": [owner_ref(owner)]},
           "data": data, "revision": number}
    try:
        created = ctl.twin.store.create(rev, user=ctl.user)
    except ApiError:
        existing = ctl.twin.store.peek("ControllerRevision", meta["namespace"], name)
        return existing, revisions
    return created, [*revisions, created]


def trim_revisions(ctl: Controller, owner: dict[str, Any], revisions: list[dict[str, Any]],
                   in_use: set[str]) -> None:
    limit = int((owner.get("spec") or {}).get("revisionHistoryLimit") or 10)
    unused = [r for r in revisions if r["metadata"]["name"] not in in_use]
    for rev in unused[:max(0, len(unused) - limit)]:
        with contextlib.suppress(ApiError):
            ctl.twin.store.delete("ControllerRevision", rev["metadata"]["namespace"], rev["metadata"]["name"],
                                  user=ctl.user)


def ordinal_of(set_name: str, pod_name: str) -> int | None:
    prefix = f"{set_name}-"
    if not pod_name.startswith(prefix):
        return None
    tail = pod_name[len(prefix):]
    return int(tail) if tail.isdigit() else None


@controller
class StatefulSetController(Controller):
    name = "statefulset"
    order = 40
    user = "system:serviceaccount:kube-system:statefulset-controller"
    component: ClassVar[str] = "statefulset-controller"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.index = OwnerIndex.of(twin)
        self.backoff = Backoff()
        self.gate = ChangeGate(self.index)

    def reconcile(self) -> None:
        store = self.twin.store
        if not store.count("StatefulSet"):
            return
        now = self.twin.clock.now
        for sts in list(store.scan("StatefulSet")):
            if not self.gate.due(sts, now):
                continue
            try:
                self.sync(sts)
            except ApiError:
                self.gate.wake_at(sts["metadata"]["uid"], now)
                continue
            retry = self.backoff.retry_at(sts["metadata"]["uid"])
            if retry is not None:
                self.gate.wake_at(sts["metadata"]["uid"], retry)

    # ------------------------------------------------------------------ events
    def _pod_event(self, sts: dict[str, Any], verb: str, pod_name: str, error: str | None = None) -> None:
        set_name = sts["metadata"]["name"]
        if error is None:
            self.twin.events.normal(sts, f"Successful{verb.capitalize()}",
                                    f"{verb} Pod {pod_name} in StatefulSet {set_name} successful",
                                    component=self.component)
        else:
            self.twin.events.warning(sts, f"Failed{verb.capitalize()}",
                                     f"{verb} Pod {pod_name} in StatefulSet {set_name} failed error: {error}",
                                     component=self.component)

    # ------------------------------------------------------------------ sync
    def sync(self, sts: dict[str, Any]) -> None:
        meta = sts["metadata"]
        spec = sts.get("spec") or {}
        update_rev, revisions = ensure_revision(self, sts, self.index)
        if update_rev is None:
            return
        update_name = update_rev["metadata"]["name"]
        status_in = sts.get("status") or {}
        current_name = status_in.get("currentRevision") or update_name
        pods = self._pods_by_ordinal(sts)
        replicas = int(spec.get("replicas") if spec.get("replicas") is not None else 1)
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        wanted = range(start, start + replicas)
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        if not meta.get("deletionTimestamp"):
            self._scale(sts, pods, wanted, monotonic, update_rev)
            pods = self._pods_by_ordinal(sts)
            self._rolling_update(sts, pods, wanted, update_name)
            pods = self._pods_by_ordinal(sts)
        self._write_status(sts, pods, update_name, current_name)
        trim_revisions(self, sts, revisions, {update_name, current_name})

    def _pods_by_ordinal(self, sts: dict[str, Any]) -> dict[int, dict[str, Any]]:
        name = sts["metadata"]["name"]
        out = {}
        for pod in self.index.children(POD, sts["metadata"]["uid"]):
            ordinal = ordinal_of(name, pod["metadata"]["name"])
            if ordinal is not None:
                out[ordinal] = pod
        return out

    def _healthy(self, pod: dict[str, Any]) -> bool:
        return pod_phase(pod) == "Running" and is_ready(pod) and not is_terminating(pod)

    def _scale(self, sts: dict[str, Any], pods: dict[int, dict[str, Any]], wanted: range,
               monotonic: bool, update_rev: dict[str, Any]) -> None:
        meta = sts["metadata"]
        now = self.twin.clock.now
        generation = int(meta.get("generation") or 1)
        for ordinal in wanted:
            pod = pods.get(ordinal)
            if pod is None:
                if not self.backoff.ready(meta["uid"], now, generation):
                    return
                if not self._create(sts, ordinal, update_rev):
                    self.backoff.failed(meta["uid"], now, generation)
                    return
                self.backoff.forget(meta["uid"])
                if monotonic:
                    return
                continue
            self._ensure_claims(sts, ordinal)
            if pod_phase(pod) in ("Failed", "Succeeded") and not is_terminating(pod):
                self._delete(sts, pod)
                if monotonic:
                    return
                continue
            if monotonic and not self._healthy(pod):
                return
        condemned = sorted((o for o in pods if o not in wanted), reverse=True)
        for ordinal in condemned:
            pod = pods[ordinal]
            if is_terminating(pod):
                if monotonic:
                    return
                continue
            if monotonic and not self._healthy(pod) and ordinal != condemned[0]:
                return
            self._retain_or_release_claims(sts, pod, ordinal)
            self._delete(sts, pod)
            if monotonic:
                return

    def _rolling_update(self, sts: dict[str, Any], pods: dict[int, dict[str, Any]], wanted: range,
                        update_name: str) -> None:
        strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return  # OnDelete: pods change only when someone deletes them
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        if any(o not in pods for o in wanted):
            return
        for ordinal in sorted((o for o in wanted if o >= partition), reverse=True):
            pod = pods[ordinal]
            revision = ((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL)
            if revision != update_name and not is_terminating(pod):
                self._delete(sts, pod)
                return
            if not self._healthy(pod):
                return

    # ------------------------------------------------------------------ pods and claims
    def _claim_name(self, sts: dict[str, Any], claim: dict[str, Any], ordinal: int) -> str:
        return f"{claim['metadata']['name']}-{sts['metadata']['name']}-{ordinal}"

    def _ensure_claims(self, sts: dict[str, Any], ordinal: int) -> str | None:
        """Create missing claims of one ordinal; returns an error message on failure."""
        spec = sts.get("spec") or {}
        ns = sts["metadata"]["namespace"]
        policy = spec.get("persistentVolumeClaimRetentionPolicy") or {}
        for template in spec.get("volumeClaimTemplates") or []:
            name = self._claim_name(sts, template, ordinal)
            if self.twin.store.peek("PersistentVolumeClaim", ns, name) is not None:
                continue
            tmeta = template.get("metadata") or {}
            labels = {**(tmeta.get("labels") or {}),
                      **((spec.get("selector") or {}).get("matchLabels") or {})}
            claim: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                     "metadata": {"name": name, "namespace": ns},
                                     "spec": clone(template.get("spec") or {})}
            if labels:
                claim["metadata"]["labels"] = labels
            if tmeta.get("annotations"):
                claim["metadata"]["annotations"] = clone(tmeta["annotations"])
            if policy.get("whenDeleted") == "Delete":
                claim["metadata"]["ownerReferences"] = [owner_ref(sts, controller=False)]
            pod_name = f"{sts['metadata']['name']}-{ordinal}"
            try:
                self.twin.store.create(claim, user=self.user)
            except ApiError as exc:
                self.twin.events.warning(sts, "FailedCreate",
                                         f"create Claim {name} for Pod {pod_name} in StatefulSet "
                                         f"{sts['metadata']['name']} failed error: {exc.message}",
                                         component=self.component)
                return exc.message
            self.twin.events.normal(sts, "SuccessfulCreate",
                                    f"create Claim {name} Pod {pod_name} in StatefulSet "
                                    f"{sts['metadata']['name']} success", component=self.component)
        return None

    def _retain_or_release_claims(self, sts: dict[str, Any], pod: dict[str, Any], ordinal: int) -> None:
        """With `whenScaled: Delete`, a condemned pod becomes the owner of its claims so the garbage
        collector removes them with it."""
        spec = sts.get("spec") or {}
        if (spec.get("persistentVolumeClaimRetentionPolicy") or {}).get("whenScaled") != "Delete":
            return
        ns = sts["metadata"]["namespace"]
        for template in spec.get("volumeClaimTemplates") or []:
            name = self._claim_name(sts, template, ordinal)

            def own(o: dict[str, Any]) -> None:
                refs = [r for r in o["metadata"].get("ownerReferences") or []
                        if r.get("uid") != pod["metadata"]["uid"]]
                o["metadata"]["ownerReferences"] = [*refs, owner_ref(pod, controller=False)]

            with contextlib.suppress(ApiError):
                self.twin.store.mutate("PersistentVolumeClaim", ns, name, own, user=self.user)

    def _create(self, sts: dict[str, Any], ordinal: int, update_rev: dict[str, Any]) -> bool:
        meta = sts["metadata"]
        spec = sts.get("spec") or {}
        name = f"{meta['name']}-{ordinal}"
        if self._ensure_claims(sts, ordinal) is not None:
            return False
        pod = pod_from_template(spec.get("template") or {}, sts, meta["namespace"], name=name)
        labels = pod["metadata"].setdefault("labels", {})
        labels[REVISION_LABEL] = update_rev["metadata"]["name"]
        labels[POD_NAME_LABEL] = name
        labels[POD_INDEX_LABEL] = str(ordinal)
        pspec = pod["spec"]
        pspec["hostname"] = name
        if spec.get("serviceName"):
            pspec["subdomain"] = spec["serviceName"]
        volumes = [v for v in pspec.get("volumes") or []]
        for template in spec.get("volumeClaimTemplates") or []:
            claim = template["metadata"]["name"]
            volumes = [v for v in volumes if v.get("name") != claim]
            volumes.append({"name": claim, "persistentVolumeClaim": {
                "claimName": self._claim_name(sts, template, ordinal)}})
        if volumes:
            pspec["volumes"] = volumes
        try:
            self.twin.store.create(pod, user=self.user)
        except ApiError as exc:
            self._pod_event(sts, "create", name, exc.message)
            return False
        self._pod_event(sts, "create", name)
        return True

    def _delete(self, sts: dict[str, Any], pod: dict[str, Any]) -> None:
        pmeta = pod["metadata"]
        try:
            self.twin.store.delete("Pod", pmeta["namespace"], pmeta["name"], user=self.user)
        except ApiError as exc:
            if exc.code != 404:
                self._pod_event(sts, "delete", pmeta["name"], exc.message)
            return
        self._pod_event(sts, "delete", pmeta["name"])

    # ------------------------------------------------------------------ status
    def _write_status(self, sts: dict[str, Any], pods: dict[int, dict[str, Any]], update_name: str,
                      current_name: str) -> None:
        meta = sts["metadata"]
        spec = sts.get("spec") or {}
        now = self.twin.clock.now
        min_ready = int(spec.get("minReadySeconds") or 0)
        live = [p for p in pods.values() if pod_phase(p) not in ("Succeeded", "Failed")]
        ready = sum(1 for p in live if is_ready(p) and not is_terminating(p))
        available = sum(1 for p in live if not is_terminating(p) and is_available(p, min_ready, now))
        for p in live:
            since = ready_since(p)
            if since is not None and not is_available(p, min_ready, now):
                self.gate.wake_at(meta["uid"], since + min_ready + 1)

        def rev(p: dict[str, Any]) -> str | None:
            return ((p.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL)

        updated = sum(1 for p in live if rev(p) == update_name)
        current = sum(1 for p in live if rev(p) == current_name)
        replicas = int(spec.get("replicas") if spec.get("replicas") is not None else 1)
        if updated == replicas and ready == replicas and len(live) == replicas:
            current_name = update_name
            current = updated
        old = sts.get("status") or {}
        status: dict[str, Any] = {
            "replicas": len(live),
            "availableReplicas": available,
            "collisionCount": int(old.get("collisionCount") or 0),
            "currentRevision": current_name,
            "updateRevision": update_name,
            "observedGeneration": int(meta.get("generation") or 1),
        }
        if ready:
            status["readyReplicas"] = ready
        if current:
            status["currentReplicas"] = current
        if updated:
            status["updatedReplicas"] = updated
        if status == old:
            return

        def put(o: dict[str, Any]) -> None:
            o["status"] = status

        self.twin.store.mutate("StatefulSet", meta["namespace"], meta["name"], put, status=True,
                               user=self.user)
