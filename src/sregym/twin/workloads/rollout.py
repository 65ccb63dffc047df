"""kubectl's client-side `rollout` commands, as Python helpers over the twin.

`kubectl rollout undo/restart/pause/resume` are not API operations: kubectl computes a patch and
sends an ordinary update. Doing the same here (rather than a twin-only shortcut) means the
Deployment controller sees exactly the write it would see from kubectl, so an agent's undo or
restart behaves identically in-process and over the wire. Messages are kubectl's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError, BadRequest, NotFound
from sregym.twin.controllers.deployment import (
    HASH_LABEL,
    REVISION,
    equal_ignore_hash,
    revision_of,
)
from sregym.twin.machinery.objects import clone
from sregym.twin.machinery.store import ADMIN_USER
from sregym.twin.workloads.shared import OwnerIndex

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

CHANGE_CAUSE = "kubernetes.io/change-cause"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
# Annotations kubectl does not copy from a ReplicaSet back onto the Deployment on undo.
_UNDO_SKIPPED = {"kubectl.kubernetes.io/last-applied-configuration", REVISION,
                 "deployment.kubernetes.io/revision-history", "deployment.kubernetes.io/desired-replicas",
                 "deployment.kubernetes.io/max-replicas", "deprecated.deployment.rollback.to"}
_KINDS = {"deployment": ("Deployment", "deployment.apps"), "deployments": ("Deployment", "deployment.apps"),
          "deploy": ("Deployment", "deployment.apps"),
          "statefulset": ("StatefulSet", "statefulset.apps"), "statefulsets": ("StatefulSet", "statefulset.apps"),
          "sts": ("StatefulSet", "statefulset.apps"),
          "daemonset": ("DaemonSet", "daemonset.apps"), "daemonsets": ("DaemonSet", "daemonset.apps"),
          "ds": ("DaemonSet", "daemonset.apps")}


@dataclass(frozen=True)
class Revision:
    number: int
    change_cause: str | None
    replica_set: dict[str, Any]


def _deployment(twin: Twin, namespace: str, name: str) -> dict[str, Any]:
    return twin.store.get("Deployment", namespace, name)


def revisions(twin: Twin, namespace: str, name: str) -> list[Revision]:
    """The Deployment's ReplicaSets by revision, oldest first (what `rollout history` lists)."""
    d = _deployment(twin, namespace, name)
    out = []
    for rs in OwnerIndex.of(twin).children(("apps", "ReplicaSet"), d["metadata"]["uid"]):
        number = revision_of(rs)
        if number <= 0:
            continue
        cause = ((rs.get("metadata") or {}).get("annotations") or {}).get(CHANGE_CAUSE)
        out.append(Revision(number, cause, clone(rs)))
    out.sort(key=lambda r: r.number)
    return out


def rollout_history(twin: Twin, namespace: str, name: str, revision: int | None = None) -> str:
    """`kubectl rollout history deployment/<name> [--revision=N]`."""
    history = revisions(twin, namespace, name)
    if revision:
        match = next((r for r in history if r.number == revision), None)
        if match is None:
            raise NotFound(f"unable to find the specified revision {revision}")
        template = match.replica_set["spec"]["template"]
        lines = [f"deployment.apps/{name} with revision #{revision}", "Pod Template:"]
        labels = ",".join(f"{k}={v}" for k, v in sorted(((template.get("metadata") or {}).get("labels") or {}).items()))
        lines.append(f"  Labels:\t{labels}")
        for c in (template.get("spec") or {}).get("containers") or []:
            lines += ["  Containers:", f"   {c.get('name')}:", f"    Image:\t{c.get('image')}"]
        return "\n".join(lines) + "\n"
    if not history:
        return "No rollout history found.\n"
    rows = [f"deployment.apps/{name} ", "REVISION  CHANGE-CAUSE"]
    rows += [f"{r.number:<10}{r.change_cause or '<none>'}" for r in history]
    return "\n".join(rows) + "\n\n"


def rollout_undo(twin: Twin, namespace: str, name: str, to_revision: int | None = None, *,
                 user: str = ADMIN_USER) -> str:
    """`kubectl rollout undo`: copy a previous revision's pod template (without its
    pod-template-hash label) and annotations into the Deployment."""
    d = _deployment(twin, namespace, name)
    if (d.get("spec") or {}).get("paused"):
        raise BadRequest(f"you cannot rollback a paused deployment; resume it first with "
                         f"'kubectl rollout resume deployment/{name}' and try again")
    history = revisions(twin, namespace, name)
    if to_revision:
        target = next((r for r in history if r.number == to_revision), None)
        if target is None:
            raise NotFound(f"unable to find specified revision {to_revision} in history")
    else:
        if len(history) < 2:
            raise BadRequest(f'no rollout history found for deployment "{name}"')
        target = history[-2]
    template = clone(target.replica_set["spec"]["template"])
    if equal_ignore_hash(template, (d.get("spec") or {}).get("template") or {}):
        return f"deployment.apps/{name} skipped rollback (current template already matches revision {target.number})"
    labels = (template.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
    d["spec"]["template"] = template
    annotations = dict(d["metadata"].get("annotations") or {})
    for key, value in ((target.replica_set["metadata"].get("annotations")) or {}).items():
        if key not in _UNDO_SKIPPED:
            annotations[key] = value
    if annotations:
        d["metadata"]["annotations"] = annotations
    twin.store.update(d, user=user)
    return f"deployment.apps/{name} rolled back"


def _workload(twin: Twin, kind: str, namespace: str, name: str) -> tuple[dict[str, Any], str]:
    try:
        kind_name, printed = _KINDS[kind.lower()]
    except KeyError:
        raise BadRequest(f'no rollout handler for "{kind}"') from None
    return twin.store.get(kind_name, namespace, name), printed


def rollout_restart(twin: Twin, namespace: str, name: str, kind: str = "deployment", *,
                    user: str = ADMIN_USER) -> str:
    """`kubectl rollout restart`: stamp `kubectl.kubernetes.io/restartedAt` on the pod template,
    which changes the template and so starts an ordinary rollout."""
    obj, printed = _workload(twin, kind, namespace, name)
    if (obj.get("spec") or {}).get("paused"):
        raise BadRequest("can't restart paused deployment (run rollout resume first)")
    tmeta = obj["spec"].setdefault("template", {}).setdefault("metadata", {})
    tmeta["annotations"] = {**(tmeta.get("annotations") or {}), RESTARTED_AT: twin.clock.iso()}
    twin.store.update(obj, user=user)
    return f"{printed}/{name} restarted"


def _set_paused(twin: Twin, namespace: str, name: str, paused: bool, user: str) -> str:
    d = _deployment(twin, namespace, name)
    verb = "paused" if paused else "resumed"
    if bool((d.get("spec") or {}).get("paused")) == paused:
        raise BadRequest(f"deployments.apps \"{name}\" is {'already paused' if paused else 'not paused'}")
    if paused:
        d["spec"]["paused"] = True
    else:
        d["spec"].pop("paused", None)
    twin.store.update(d, user=user)
    return f"deployment.apps/{name} {verb}"


def rollout_pause(twin: Twin, namespace: str, name: str, *, user: str = ADMIN_USER) -> str:
    return _set_paused(twin, namespace, name, True, user)


def rollout_resume(twin: Twin, namespace: str, name: str, *, user: str = ADMIN_USER) -> str:
    return _set_paused(twin, namespace, name, False, user)


def rollout_status(twin: Twin, namespace: str, name: str) -> tuple[str, bool]:
    """One evaluation of `kubectl rollout status deployment/<name>`: (message, done). A
    progress-deadline failure raises, as kubectl exits with an error."""
    d = _deployment(twin, namespace, name)
    status = d.get("status") or {}
    generation = int(d["metadata"].get("generation") or 1)
    if generation > int(status.get("observedGeneration") or 0):
        return "Waiting for deployment spec update to be observed...\n", False
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
            raise ApiError(f'deployment "{name}" exceeded its progress deadline', code=400,
                           reason="BadRequest")
    desired = int((d.get("spec") or {}).get("replicas", 1))
    updated = int(status.get("updatedReplicas") or 0)
    replicas = int(status.get("replicas") or 0)
    available = int(status.get("availableReplicas") or 0)
    if updated < desired:
        return (f'Waiting for deployment "{name}" rollout to finish: {updated} out of {desired} '
                "new replicas have been updated...\n", False)
    if replicas > updated:
        return (f'Waiting for deployment "{name}" rollout to finish: {replicas - updated} old replicas '
                "are pending termination...\n", False)
    if available < updated:
        return (f'Waiting for deployment "{name}" rollout to finish: {available} of {updated} updated '
                "replicas are available...\n", False)
    return f'deployment "{name}" successfully rolled out\n', True
