"""The Deployment controller: ReplicaSets per pod template, rolling updates, rollout status.

This follows kube's deployment controller step by step (sync.go, rolling.go, recreate.go,
progress.go) because agents reason from what it produces: ReplicaSet names with the
pod-template-hash, `deployment.kubernetes.io/revision` annotations that `rollout undo` relies on,
the surge/unavailable arithmetic that decides whether a bad rollout takes the service down, the
exact `ScalingReplicaSet` event wording and the Available/Progressing conditions (including
ProgressDeadlineExceeded) that `kubectl rollout status` and alerts read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import clone, owner_ref
from sregym.twin.workloads.shared import ChangeGate, OwnerIndex, compute_hash, scaled_value, ts

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

RS = ("apps", "ReplicaSet")
POD = ("", "Pod")
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_SKIPPED_ANNOTATIONS = {"kubectl.kubernetes.io/last-applied-configuration", REVISION,
                        REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS,
                        "deprecated.deployment.rollback.to"}

# Condition reasons (deploymentutil).
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
FAILED_RS_CREATE = "ReplicaSetCreateError"


# ------------------------------------------------------------------ small accessors
def replicas_of(obj: dict[str, Any]) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return int(value) if value is not None else 1


def status_int(obj: dict[str, Any], key: str) -> int:
    return int((obj.get("status") or {}).get(key) or 0)


def revision_of(rs: dict[str, Any]) -> int:
    try:
        return int(((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def created_key(obj: dict[str, Any]) -> tuple[float, str]:
    meta = obj.get("metadata") or {}
    stamp = meta.get("creationTimestamp")
    return (ts(stamp) if stamp else 0.0, meta.get("name", ""))


def is_rolling(d: dict[str, Any]) -> bool:
    return ((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"


def resolve_fenceposts(d: dict[str, Any]) -> tuple[int, int]:
    """(maxSurge, maxUnavailable): surge rounds up, unavailable rounds down, and both zero means
    one may be unavailable."""
    rolling = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas_of(d)
    surge = scaled_value(rolling.get("maxSurge", "25%"), desired, True)
    unavailable = scaled_value(rolling.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: dict[str, Any]) -> int:
    return resolve_fenceposts(d)[0] if is_rolling(d) else 0


def max_unavailable(d: dict[str, Any]) -> int:
    desired = replicas_of(d)
    if not is_rolling(d) or desired == 0:
        return 0
    return min(resolve_fenceposts(d)[1], desired)


def equal_ignore_hash(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Templates equal apart from the pod-template-hash label (compared without copying: this
    runs for every ReplicaSet of every Deployment on every tick)."""
    if a.get("spec") != b.get("spec"):
        return False
    ma = a.get("metadata") or {}
    mb = b.get("metadata") or {}
    la = {k: v for k, v in (ma.get("labels") or {}).items() if k != HASH_LABEL}
    lb = {k: v for k, v in (mb.get("labels") or {}).items() if k != HASH_LABEL}
    if la != lb:
        return False
    return all(ma.get(k) == mb.get(k) for k in (set(ma) | set(mb)) - {"labels"})


def new_rs_new_replicas(d: dict[str, Any], all_rss: list[dict[str, Any]], new_rs: dict[str, Any]) -> int:
    """How many replicas the new ReplicaSet may have now (`NewRSNewReplicas`)."""
    if not is_rolling(d):
        return replicas_of(d)
    current = sum(replicas_of(rs) for rs in all_rss)
    max_total = replicas_of(d) + max_surge(d)
    if current >= max_total:
        return replicas_of(new_rs)
    scale_up = min(max_total - current, replicas_of(d) - replicas_of(new_rs))
    return replicas_of(new_rs) + scale_up


def get_condition(status: dict[str, Any], cond_type: str) -> dict[str, Any] | None:
    for cond in status.get("conditions") or []:
        if cond.get("type") == cond_type:
            return cond
    return None


def set_condition(status: dict[str, Any], cond: dict[str, Any]) -> None:
    """`SetDeploymentCondition`: no-op when status and reason are unchanged; keep the transition
    time when only the reason changes; the updated condition moves to the end."""
    current = get_condition(status, cond["type"])
    if current is not None and current.get("status") == cond["status"] and \
            current.get("reason") == cond.get("reason"):
        return
    if current is not None and current.get("status") == cond["status"]:
        cond["lastTransitionTime"] = current.get("lastTransitionTime")
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != cond["type"]]
    status["conditions"].append(cond)


def remove_condition(status: dict[str, Any], cond_type: str) -> None:
    conds = [c for c in status.get("conditions") or [] if c.get("type") != cond_type]
    if conds:
        status["conditions"] = conds
    else:
        status.pop("conditions", None)


@controller
class DeploymentController(Controller):
    name = "deployment"
    order = 30
    user = "system:serviceaccount:kube-system:deployment-controller"
    component: ClassVar[str] = "deployment-controller"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self.index = OwnerIndex.of(twin)
        self.gate = ChangeGate(self.index)
        self.kind = twin.store.kind("Deployment")
        self.rs_kind = twin.store.kind("ReplicaSet")

    def reconcile(self) -> None:
        store = self.twin.store
        if not store.count(self.kind):
            return
        now = self.twin.clock.now
        for d in list(store.scan(self.kind)):
            if not self.gate.due(d, now):
                continue
            try:
                self.sync(d)
            except ApiError:
                # A conflict or rejection: retry next tick, like a requeue.
                self.gate.wake_at(d["metadata"]["uid"], now)
                continue
            self._schedule_deadline_check(d)

    def _schedule_deadline_check(self, d: dict[str, Any]) -> None:
        """The only timer of a Deployment: when its progress deadline would pass."""
        d = self._fresh(d)
        deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
        cond = get_condition(d.get("status") or {}, "Progressing")
        if deadline is None or cond is None or cond.get("reason") in (NEW_RS_AVAILABLE, TIMED_OUT):
            return
        if cond.get("lastUpdateTime"):
            self.gate.wake_at(d["metadata"]["uid"], ts(cond["lastUpdateTime"]) + int(deadline) + 1)

    # ------------------------------------------------------------------ helpers
    def _now(self) -> str:
        return self.twin.clock.iso()

    def _condition(self, cond_type: str, status: str, reason: str, message: str) -> dict[str, Any]:
        now = self._now()
        return {"type": cond_type, "status": status, "lastUpdateTime": now,
                "lastTransitionTime": now, "reason": reason, "message": message}

    def _fresh(self, d: dict[str, Any]) -> dict[str, Any]:
        meta = d["metadata"]
        return self.twin.store.peek(self.kind, meta["namespace"], meta["name"]) or d

    def replica_sets(self, d: dict[str, Any]) -> list[dict[str, Any]]:
        return self.index.children(RS, d["metadata"]["uid"])

    def _write_status(self, d: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
        if status == (d.get("status") or {}):
            return d
        meta = d["metadata"]

        def put(obj: dict[str, Any]) -> None:
            obj["status"] = status

        return self.twin.store.mutate(self.kind, meta["namespace"], meta["name"], put, status=True,
                                      user=self.user) or d

    def _event(self, d: dict[str, Any], reason: str, message: str, warning: bool = False) -> None:
        record = self.twin.events.warning if warning else self.twin.events.normal
        record(d, reason, message, component=self.component)

    # ------------------------------------------------------------------ sync
    def sync(self, d: dict[str, Any]) -> None:
        rs_list = self.replica_sets(d)
        if d["metadata"].get("deletionTimestamp"):
            new_rs, old_rss = self.get_all_rss(d, rs_list, False)
            self.sync_deployment_status(d, [*old_rss, new_rs], new_rs)
            return
        d = self.check_paused_conditions(d)
        spec = d.get("spec") or {}
        if spec.get("paused"):
            self.sync_scale(d, rs_list)
            return
        if self.is_scaling_event(d, rs_list):
            self.sync_scale(self._fresh(d), self.replica_sets(d))
            return
        if is_rolling(d):
            self.rollout_rolling(self._fresh(d), self.replica_sets(d))
        else:
            self.rollout_recreate(self._fresh(d), self.replica_sets(d))

    def check_paused_conditions(self, d: dict[str, Any]) -> dict[str, Any]:
        spec = d.get("spec") or {}
        if spec.get("progressDeadlineSeconds") is None:
            return d
        status = clone(d.get("status") or {})
        cond = get_condition(status, "Progressing")
        if cond is not None and cond.get("reason") == TIMED_OUT:
            return d
        paused_exists = cond is not None and cond.get("reason") == PAUSED
        if spec.get("paused") and not paused_exists:
            set_condition(status, self._condition("Progressing", "Unknown", PAUSED, "Deployment is paused"))
        elif not spec.get("paused") and paused_exists:
            set_condition(status, self._condition("Progressing", "Unknown", RESUMED, "Deployment is resumed"))
        else:
            return d
        return self._write_status(d, status)

    def is_scaling_event(self, d: dict[str, Any], rs_list: list[dict[str, Any]]) -> bool:
        new_rs, old_rss = self.get_all_rss(d, rs_list, False)
        desired = replicas_of(d)
        for rs in [r for r in [*old_rss, new_rs] if r is not None and replicas_of(r) > 0]:
            value = ((rs.get("metadata") or {}).get("annotations") or {}).get(DESIRED_REPLICAS)
            if value is None:
                continue
            try:
                if int(value) != desired:
                    return True
            except ValueError:
                continue
        return False

    # ------------------------------------------------------------------ new/old RS bookkeeping
    def get_all_rss(self, d: dict[str, Any], rs_list: list[dict[str, Any]],
                    create: bool) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        template = (d.get("spec") or {}).get("template") or {}
        matches = sorted((rs for rs in rs_list
                          if equal_ignore_hash((rs.get("spec") or {}).get("template") or {}, template)),
                         key=created_key)
        existing = matches[0] if matches else None
        old_rss = [rs for rs in rs_list if rs is not existing]
        new_rs = self.get_new_rs(d, old_rss, existing, create)
        return new_rs, old_rss

    def set_new_rs_annotations(self, d: dict[str, Any], rs: dict[str, Any], new_revision: str,
                               exists: bool) -> bool:
        meta = rs.setdefault("metadata", {})
        annotations = meta.get("annotations") or {}
        changed = False
        for key, value in sorted(((d.get("metadata") or {}).get("annotations") or {}).items()):
            if key in _SKIPPED_ANNOTATIONS:
                continue
            if annotations.get(key) != value:
                annotations[key] = value
                changed = True
        old_revision = annotations.get(REVISION)
        try:
            old_int = int(old_revision) if old_revision else 0
        except ValueError:
            old_int = 0
        if old_int < int(new_revision):
            annotations[REVISION] = new_revision
            changed = True
            if old_revision:
                history = annotations.get(REVISION_HISTORY)
                annotations[REVISION_HISTORY] = f"{history},{old_revision}" if history else old_revision
        if not exists:
            changed = self.set_replicas_annotations(annotations, d) or changed
        if annotations:
            meta["annotations"] = annotations
        return changed

    @staticmethod
    def set_replicas_annotations(annotations: dict[str, str], d: dict[str, Any]) -> bool:
        desired = str(replicas_of(d))
        maximum = str(replicas_of(d) + max_surge(d))
        changed = annotations.get(DESIRED_REPLICAS) != desired or annotations.get(MAX_REPLICAS) != maximum
        annotations[DESIRED_REPLICAS] = desired
        annotations[MAX_REPLICAS] = maximum
        return changed

    def set_deployment_revision(self, d: dict[str, Any], revision: str | None) -> dict[str, Any]:
        if not revision or ((d["metadata"].get("annotations") or {}).get(REVISION) == revision):
            return d
        meta = d["metadata"]

        def put(obj: dict[str, Any]) -> None:
            obj["metadata"].setdefault("annotations", {})[REVISION] = revision

        return self.twin.store.mutate(self.kind, meta["namespace"], meta["name"], put,
                                      user=self.user) or d

    def get_new_rs(self, d: dict[str, Any], old_rss: list[dict[str, Any]],
                   existing: dict[str, Any] | None, create: bool) -> dict[str, Any] | None:
        max_old = max((revision_of(rs) for rs in old_rss), default=0)
        new_revision = str(max_old + 1)
        spec = d.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        if existing is not None:
            copy = clone(existing)
            updated = self.set_new_rs_annotations(d, copy, new_revision, True)
            if updated or int((copy.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
                if min_ready:
                    copy["spec"]["minReadySeconds"] = min_ready
                else:
                    copy["spec"].pop("minReadySeconds", None)
                return self.twin.store.update(copy, user=self.user)
            d = self.set_deployment_revision(d, (copy["metadata"].get("annotations") or {}).get(REVISION))
            status = clone(d.get("status") or {})
            if spec.get("progressDeadlineSeconds") is not None and get_condition(status, "Progressing") is None:
                set_condition(status, self._condition("Progressing", "True", FOUND_NEW_RS,
                                                      f'Found new replica set "{copy["metadata"]["name"]}"'))
                self._write_status(d, status)
            return existing
        if not create:
            return None
        return self.create_new_rs(d, old_rss, new_revision)

    def create_new_rs(self, d: dict[str, Any], old_rss: list[dict[str, Any]],
                      new_revision: str) -> dict[str, Any] | None:
        meta = d["metadata"]
        spec = d.get("spec") or {}
        template = clone(spec.get("template") or {})
        collisions = (d.get("status") or {}).get("collisionCount")
        pod_hash = compute_hash(template, collisions)
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: pod_hash}
        selector = clone(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        rs: dict[str, Any] = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{meta['name']}-{pod_hash}", "namespace": meta["namespace"],
                         "labels": clone(tmeta["labels"]), "ownerReferences": [owner_ref(d)]},
            "spec": {"replicas": 0, "selector": selector, "template": template},
        }
        if spec.get("minReadySeconds"):
            rs["spec"]["minReadySeconds"] = int(spec["minReadySeconds"])
        count = new_rs_new_replicas(d, [*old_rss, rs], rs)
        rs["spec"]["replicas"] = count
        self.set_new_rs_annotations(d, rs, new_revision, False)
        try:
            created = self.twin.store.create(rs, user=self.user)
        except ApiError as exc:
            if exc.code == 409:
                return self._handle_collision(d, rs)
            status = clone(d.get("status") or {})
            message = f"Failed to create new replica set \"{rs['metadata']['name']}\": {exc.message}"
            self._event(d, FAILED_RS_CREATE, message, warning=True)
            set_condition(status, self._condition("Progressing", "False", FAILED_RS_CREATE, message))
            self._write_status(d, status)
            return None
        if count > 0:
            self._event(d, "ScalingReplicaSet", f"Scaled up replica set {created['metadata']['name']} to {count}")
        d = self.set_deployment_revision(d, new_revision)
        if spec.get("progressDeadlineSeconds") is not None:
            status = clone(d.get("status") or {})
            set_condition(status, self._condition("Progressing", "True", NEW_RS_CREATED,
                                                  f'Created new replica set "{created["metadata"]["name"]}"'))
            self._write_status(d, status)
        return self.twin.store.peek(self.rs_kind, meta["namespace"], created["metadata"]["name"])

    def _handle_collision(self, d: dict[str, Any], rs: dict[str, Any]) -> dict[str, Any] | None:
        """A ReplicaSet with the hashed name exists: ours if its template matches, else a hash
        collision that bumps `status.collisionCount` so the next hash differs."""
        meta = rs["metadata"]
        current = self.twin.store.peek(self.rs_kind, meta["namespace"], meta["name"])
        if current is not None:
            owner = next((r for r in current["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
            if owner and owner.get("uid") == d["metadata"]["uid"] and \
                    equal_ignore_hash(current["spec"]["template"], d["spec"]["template"]):
                return current
        status = clone(d.get("status") or {})
        status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
        self._write_status(d, status)
        return None

    # ------------------------------------------------------------------ scaling
    def scale_rs(self, d: dict[str, Any], rs: dict[str, Any], new_scale: int, operation: str) -> bool:
        size_changed = replicas_of(rs) != new_scale
        annotations = clone((rs.get("metadata") or {}).get("annotations") or {})
        ann_changed = self.set_replicas_annotations(annotations, d)
        if not size_changed and not ann_changed:
            return False
        old_scale = replicas_of(rs)
        meta = rs["metadata"]

        def put(obj: dict[str, Any]) -> None:
            obj["spec"]["replicas"] = new_scale
            obj["metadata"]["annotations"] = annotations

        self.twin.store.mutate(self.rs_kind, meta["namespace"], meta["name"], put, user=self.user)
        if size_changed:
            self._event(d, "ScalingReplicaSet",
                        f"Scaled {operation} replica set {meta['name']} to {new_scale} from {old_scale}")
        return size_changed

    def scale_and_record(self, d: dict[str, Any], rs: dict[str, Any], new_scale: int) -> bool:
        if replicas_of(rs) == new_scale:
            return False
        operation = "up" if replicas_of(rs) < new_scale else "down"
        return self.scale_rs(d, rs, new_scale, operation)

    def _reload_one(self, rs: dict[str, Any] | None) -> dict[str, Any] | None:
        if rs is None:
            return None
        return self.twin.store.peek(self.rs_kind, rs["metadata"]["namespace"], rs["metadata"]["name"])

    def _reload(self, rss: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
        out = []
        for rs in rss:
            if rs is None:
                continue
            meta = rs["metadata"]
            fresh = self.twin.store.peek(self.rs_kind, meta["namespace"], meta["name"])
            if fresh is not None:
                out.append(fresh)
        return out

    def sync_scale(self, d: dict[str, Any], rs_list: list[dict[str, Any]]) -> None:
        """`sync`: a scaling event or a paused Deployment: resize without rolling."""
        new_rs, old_rss = self.get_all_rss(d, rs_list, False)
        self.scale(d, new_rs, old_rss)
        d = self._fresh(d)
        new_rs = self._reload_one(new_rs)
        old_rss = self._reload(old_rss)
        if (d.get("spec") or {}).get("paused"):
            self.cleanup(d, old_rss)
        self.sync_deployment_status(d, [*old_rss, new_rs], new_rs)

    def scale(self, d: dict[str, Any], new_rs: dict[str, Any] | None, old_rss: list[dict[str, Any]]) -> None:
        desired = replicas_of(d)
        active_or_latest = self.find_active_or_latest(new_rs, old_rss)
        if active_or_latest is not None:
            if replicas_of(active_or_latest) != desired:
                self.scale_and_record(d, active_or_latest, desired)
            return
        if new_rs is not None and self.is_saturated(d, new_rs):
            for rs in old_rss:
                if replicas_of(rs) > 0:
                    self.scale_and_record(d, rs, 0)
            return
        if not is_rolling(d):
            return
        all_rss = [rs for rs in [*old_rss, new_rs] if rs is not None and replicas_of(rs) > 0]
        total = sum(replicas_of(rs) for rs in all_rss)
        allowed = desired + max_surge(d) if desired > 0 else 0
        to_add = allowed - total
        if to_add > 0:
            all_rss.sort(key=lambda rs: (-replicas_of(rs), -created_key(rs)[0], created_key(rs)[1]))
        elif to_add < 0:
            all_rss.sort(key=lambda rs: (-replicas_of(rs), created_key(rs)))
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_rss:
            name = rs["metadata"]["name"]
            if to_add != 0:
                proportion = self.proportion(rs, d, to_add, added)
                sizes[name] = replicas_of(rs) + proportion
                added += proportion
            else:
                sizes[name] = replicas_of(rs)
        for i, rs in enumerate(all_rss):
            name = rs["metadata"]["name"]
            if i == 0 and to_add != 0:
                sizes[name] = max(0, sizes[name] + to_add - added)
            self.scale_rs(d, rs, sizes[name], "up" if to_add > 0 else "down")

    def proportion(self, rs: dict[str, Any], d: dict[str, Any], to_add: int, added: int) -> int:
        if replicas_of(rs) == 0 or to_add == 0 or to_add == added:
            return 0
        fraction = self.rs_fraction(rs, d)
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    def rs_fraction(self, rs: dict[str, Any], d: dict[str, Any]) -> int:
        if replicas_of(d) == 0:
            return -replicas_of(rs)
        deployment_replicas = replicas_of(d) + max_surge(d)
        annotated = ((rs.get("metadata") or {}).get("annotations") or {}).get(MAX_REPLICAS)
        try:
            base = int(annotated) if annotated is not None else status_int(d, "replicas")
        except ValueError:
            base = status_int(d, "replicas")
        if base <= 0:
            return 0
        size = replicas_of(rs) * deployment_replicas / base
        return int(size + 0.5) - replicas_of(rs)

    @staticmethod
    def find_active_or_latest(new_rs: dict[str, Any] | None,
                              old_rss: list[dict[str, Any]]) -> dict[str, Any] | None:
        if new_rs is None and not old_rss:
            return None
        newest_first = sorted(old_rss, key=created_key, reverse=True)
        active = [rs for rs in [*newest_first, new_rs] if rs is not None and replicas_of(rs) > 0]
        if not active:
            return new_rs if new_rs is not None else newest_first[0]
        if len(active) == 1:
            return active[0]
        return None

    @staticmethod
    def is_saturated(d: dict[str, Any], rs: dict[str, Any]) -> bool:
        desired = ((rs.get("metadata") or {}).get("annotations") or {}).get(DESIRED_REPLICAS)
        return (desired == str(replicas_of(d)) and status_int(rs, "availableReplicas") == replicas_of(d)
                and replicas_of(rs) == replicas_of(d))

    # ------------------------------------------------------------------ rolling update
    def rollout_rolling(self, d: dict[str, Any], rs_list: list[dict[str, Any]]) -> None:
        new_rs, old_rss = self.get_all_rss(d, rs_list, True)
        d = self._fresh(d)
        if new_rs is None:
            return
        all_rss = [*old_rss, new_rs]
        if self.reconcile_new_rs(d, all_rss, new_rs):
            self.sync_rollout_status(d, self._reload(all_rss), self._reload_one(new_rs))
            return
        new_rs = self._reload_one(new_rs)
        if new_rs is None:
            return
        old_rss = self._reload(old_rss)
        if self.reconcile_old_rss(d, [*old_rss, new_rs], old_rss, new_rs):
            self.sync_rollout_status(d, self._reload([*old_rss, new_rs]), self._reload_one(new_rs))
            return
        status = self.calculate_status(d, [*old_rss, new_rs], new_rs)
        if self.deployment_complete(d, status):
            self.cleanup(d, old_rss)
        self.sync_rollout_status(d, self._reload([*old_rss, new_rs]), self._reload_one(new_rs))

    def reconcile_new_rs(self, d: dict[str, Any], all_rss: list[dict[str, Any]], new_rs: dict[str, Any]) -> bool:
        desired = replicas_of(d)
        if replicas_of(new_rs) == desired:
            return False
        if replicas_of(new_rs) > desired:
            return self.scale_and_record(d, new_rs, desired)
        return self.scale_and_record(d, new_rs, new_rs_new_replicas(d, all_rss, new_rs))

    def reconcile_old_rss(self, d: dict[str, Any], all_rss: list[dict[str, Any]],
                          old_rss: list[dict[str, Any]], new_rs: dict[str, Any]) -> bool:
        old_count = sum(replicas_of(rs) for rs in old_rss)
        if old_count == 0:
            return False
        all_count = sum(replicas_of(rs) for rs in all_rss)
        min_available = replicas_of(d) - max_unavailable(d)
        new_unavailable = replicas_of(new_rs) - status_int(new_rs, "availableReplicas")
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        active_old = [rs for rs in old_rss if replicas_of(rs) > 0]
        cleaned = self.cleanup_unhealthy(d, active_old, max_scaled_down)
        active_old = self._reload(active_old)
        scaled = self.scale_down_old_for_rolling(d, [*active_old, new_rs], active_old)
        return cleaned + scaled > 0

    def cleanup_unhealthy(self, d: dict[str, Any], old_rss: list[dict[str, Any]], max_cleanup: int) -> int:
        total = 0
        for rs in sorted(old_rss, key=created_key):
            if total >= max_cleanup:
                break
            if replicas_of(rs) == 0:
                continue
            unhealthy = replicas_of(rs) - status_int(rs, "availableReplicas")
            if unhealthy <= 0:
                continue
            down = min(max_cleanup - total, unhealthy)
            self.scale_and_record(d, rs, replicas_of(rs) - down)
            total += down
        return total

    def scale_down_old_for_rolling(self, d: dict[str, Any], all_rss: list[dict[str, Any]],
                                   old_rss: list[dict[str, Any]]) -> int:
        min_available = replicas_of(d) - max_unavailable(d)
        available = sum(status_int(rs, "availableReplicas") for rs in all_rss)
        if available <= min_available:
            return 0
        total_down = available - min_available
        done = 0
        for rs in sorted(old_rss, key=created_key):
            if done >= total_down:
                break
            if replicas_of(rs) == 0:
                continue
            down = min(replicas_of(rs), total_down - done)
            self.scale_and_record(d, rs, replicas_of(rs) - down)
            done += down
        return done

    # ------------------------------------------------------------------ recreate
    def rollout_recreate(self, d: dict[str, Any], rs_list: list[dict[str, Any]]) -> None:
        new_rs, old_rss = self.get_all_rss(d, rs_list, False)
        d = self._fresh(d)
        scaled = False
        for rs in old_rss:
            if replicas_of(rs) > 0:
                scaled = self.scale_and_record(d, rs, 0) or scaled
        if scaled:
            self.sync_rollout_status(d, self._reload([*old_rss, new_rs]), self._reload_one(new_rs))
            return
        if self.old_pods_running(old_rss):
            self.sync_rollout_status(d, self._reload([*old_rss, new_rs]), self._reload_one(new_rs))
            return
        if new_rs is None:
            new_rs, old_rss = self.get_all_rss(d, self.replica_sets(d), True)
            d = self._fresh(d)
            if new_rs is None:
                return
        if replicas_of(new_rs) != replicas_of(d):
            self.scale_and_record(d, new_rs, replicas_of(d))
        new_rs = self._reload_one(new_rs)
        if new_rs is None:
            return
        status = self.calculate_status(d, [*old_rss, new_rs], new_rs)
        if self.deployment_complete(d, status):
            self.cleanup(d, old_rss)
        self.sync_rollout_status(d, self._reload([*old_rss, new_rs]), new_rs)

    def old_pods_running(self, old_rss: list[dict[str, Any]]) -> bool:
        """Recreate waits until no pod of an old ReplicaSet is still running or terminating
        (pods are grandchildren, so poll while waiting)."""
        for rs in old_rss:
            for pod in self.index.children(POD, rs["metadata"]["uid"]):
                phase = (pod.get("status") or {}).get("phase")
                if phase not in ("Succeeded", "Failed"):
                    owner = next((r for r in rs["metadata"].get("ownerReferences") or []
                                  if r.get("controller")), None)
                    if owner is not None:
                        self.gate.wake_at(owner["uid"], self.twin.clock.now + self.twin.clock.tick)
                    return True
        return False

    # ------------------------------------------------------------------ history
    def cleanup(self, d: dict[str, Any], old_rss: list[dict[str, Any]]) -> None:
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None:
            return
        alive = [rs for rs in old_rss if not rs["metadata"].get("deletionTimestamp")]
        diff = len(alive) - int(limit)
        if diff <= 0:
            return
        alive.sort(key=lambda rs: (revision_of(rs), created_key(rs)))
        for rs in alive[:diff]:
            if status_int(rs, "replicas") != 0 or replicas_of(rs) != 0:
                continue
            if int(rs["metadata"].get("generation") or 1) > status_int(rs, "observedGeneration"):
                continue
            try:
                self.twin.store.delete("ReplicaSet", rs["metadata"]["namespace"], rs["metadata"]["name"],
                                       user=self.user)
            except ApiError:
                continue

    # ------------------------------------------------------------------ status
    def calculate_status(self, d: dict[str, Any], all_rss: list[dict[str, Any] | None],
                         new_rs: dict[str, Any] | None) -> dict[str, Any]:
        rss = [rs for rs in all_rss if rs is not None]
        available = sum(status_int(rs, "availableReplicas") for rs in rss)
        total = sum(replicas_of(rs) for rs in rss)
        old = d.get("status") or {}
        status: dict[str, Any] = {"observedGeneration": int(d["metadata"].get("generation") or 1)}
        values = {
            "replicas": sum(status_int(rs, "replicas") for rs in rss),
            "updatedReplicas": status_int(new_rs, "replicas") if new_rs is not None else 0,
            "readyReplicas": sum(status_int(rs, "readyReplicas") for rs in rss),
            "availableReplicas": available,
            "unavailableReplicas": max(0, total - available),
        }
        for key, value in values.items():
            if value:
                status[key] = value
        if old.get("conditions"):
            status["conditions"] = [clone(c) for c in old["conditions"]]
        if old.get("collisionCount") is not None:
            status["collisionCount"] = old["collisionCount"]
        if available >= replicas_of(d) - max_unavailable(d):
            set_condition(status, self._condition("Available", "True", "MinimumReplicasAvailable",
                                                  "Deployment has minimum availability."))
        else:
            set_condition(status, self._condition("Available", "False", "MinimumReplicasUnavailable",
                                                  "Deployment does not have minimum availability."))
        return status

    @staticmethod
    def deployment_complete(d: dict[str, Any], status: dict[str, Any]) -> bool:
        desired = replicas_of(d)
        return (int(status.get("updatedReplicas") or 0) == desired
                and int(status.get("replicas") or 0) == desired
                and int(status.get("availableReplicas") or 0) == desired
                and int(status.get("observedGeneration") or 0) >= int(d["metadata"].get("generation") or 1))

    @staticmethod
    def deployment_progressing(d: dict[str, Any], status: dict[str, Any]) -> bool:
        old = d.get("status") or {}
        old_old = int(old.get("replicas") or 0) - int(old.get("updatedReplicas") or 0)
        new_old = int(status.get("replicas") or 0) - int(status.get("updatedReplicas") or 0)
        return (int(status.get("updatedReplicas") or 0) > int(old.get("updatedReplicas") or 0)
                or new_old < old_old
                or int(status.get("readyReplicas") or 0) > int(old.get("readyReplicas") or 0)
                or int(status.get("availableReplicas") or 0) > int(old.get("availableReplicas") or 0))

    def deployment_timed_out(self, d: dict[str, Any], status: dict[str, Any]) -> bool:
        deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
        if deadline is None:
            return False
        cond = get_condition(status, "Progressing")
        if cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
            return False
        if cond.get("reason") == TIMED_OUT:
            return True
        since = cond.get("lastUpdateTime")
        return bool(since) and ts(since) + int(deadline) < self.twin.clock.now

    def sync_deployment_status(self, d: dict[str, Any], all_rss: list[dict[str, Any] | None],
                               new_rs: dict[str, Any] | None) -> None:
        self._write_status(d, self.calculate_status(d, all_rss, new_rs))

    def sync_rollout_status(self, d: dict[str, Any], all_rss: list[dict[str, Any]],
                            new_rs: dict[str, Any] | None) -> None:
        d = self._fresh(d)
        status = self.calculate_status(d, all_rss, new_rs)
        has_deadline = (d.get("spec") or {}).get("progressDeadlineSeconds") is not None
        if not has_deadline:
            remove_condition(status, "Progressing")
        current = get_condition(status, "Progressing")
        complete = (int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0)
                    and current is not None and current.get("reason") == NEW_RS_AVAILABLE)
        rs_name = new_rs["metadata"]["name"] if new_rs is not None else ""
        if has_deadline and not complete:
            if self.deployment_complete(d, status):
                msg = f'ReplicaSet "{rs_name}" has successfully progressed.' if new_rs is not None \
                    else "Deployment has successfully progressed."
                set_condition(status, self._condition("Progressing", "True", NEW_RS_AVAILABLE, msg))
            elif self.deployment_progressing(d, status):
                msg = f'ReplicaSet "{rs_name}" is progressing.' if new_rs is not None \
                    else "Deployment is progressing."
                cond = self._condition("Progressing", "True", RS_UPDATED, msg)
                if current is not None:
                    if current.get("status") == "True":
                        cond["lastTransitionTime"] = current.get("lastTransitionTime")
                    remove_condition(status, "Progressing")
                status.setdefault("conditions", []).append(cond)
            elif self.deployment_timed_out(d, status):
                msg = f'ReplicaSet "{rs_name}" has timed out progressing.' if new_rs is not None \
                    else "Deployment has timed out progressing."
                before = get_condition(status, "Progressing")
                set_condition(status, self._condition("Progressing", "False", TIMED_OUT, msg))
                if before is None or before.get("reason") != TIMED_OUT:
                    self._event(d, TIMED_OUT, f'Deployment "{d["metadata"]["name"]}" has timed out progressing.',
                                warning=True)
        failure = self.replica_failure(all_rss, new_rs)
        if failure is not None:
            set_condition(status, failure)
        else:
            remove_condition(status, "ReplicaFailure")
        self._write_status(d, status)

    def replica_failure(self, all_rss: list[dict[str, Any]], new_rs: dict[str, Any] | None) -> dict[str, Any] | None:
        """Surface a ReplicaSet's ReplicaFailure condition on the Deployment (new RS first)."""
        ordered = ([new_rs] if new_rs is not None else []) + [rs for rs in all_rss if rs is not new_rs]
        for rs in ordered:
            for cond in (rs.get("status") or {}).get("conditions") or []:
                if cond.get("type") == "ReplicaFailure" and cond.get("status") == "True":
                    now = self._now()
                    return {"type": "ReplicaFailure", "status": "True", "lastUpdateTime": now,
                            "lastTransitionTime": cond.get("lastTransitionTime") or now,
                            "reason": cond.get("reason", "FailedCreate"), "message": cond.get("message", "")}
        return None
