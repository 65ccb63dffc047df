"""Builders for the shapes every catalogue module repeats: root causes, common checks, the
must_keep list, and the kubectl writes gold solutions are made of.

They return plain `RootCause`/`CheckSpec`/`Action` values, identical to writing them out, so a
problem file reads as its data ("the geo Deployment", "geo serves on 8083") and a change to a
shape (the aliases of a Deployment, the restart annotation) is made once. A module binds its
namespace once, e.g. `_deploy = partial(deployment_cause, NAMESPACE)`.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any, Literal

from sregym.problems.model import BASELINE_KEEP, Action, CheckSpec
from sregym.types import EntityRef, RootCause, workload_aliases

RESTART_ANNOTATION = "kubectl.kubernetes.io/restartedAt"


# ---------------------------------------------------------------------- manifests
@cache
def _app_documents(app: str) -> tuple[dict[str, Any], ...]:
    from sregym.apps import get_app

    # The objects, not their YAML text: an app built in Python would be dumped and parsed back.
    return tuple(get_app(app).objects())


def app_manifest(app: str, kind: str, name: str) -> dict[str, Any]:
    """A copy of one object as `app`'s manifests declare it (what a gold solution recreates after
    a fault deleted it, or patches back to). Bind the app once: `partial(app_manifest, APP)`."""
    found = next(d for d in _app_documents(app) if d.get("kind") == kind and d["metadata"]["name"] == name)
    return copy.deepcopy(found)


# ------------------------------------------------------------------------- root causes
def deployment_cause(namespace: str, name: str) -> RootCause:
    """A Deployment as a root cause; naming one of its ReplicaSets or Pods finds it too."""
    return RootCause(entity=EntityRef(kind="Deployment", namespace=namespace, name=name),
                     aliases=workload_aliases("Deployment", namespace, name))


def object_cause(namespace: str | None, kind: str, name: str) -> RootCause:
    """Any other object as a root cause (or an affected entity), with no aliases."""
    return RootCause(entity=EntityRef(kind=kind, namespace=namespace, name=name))


# ------------------------------------------------------------------------------ checks
def workload_ready(name: str) -> CheckSpec:
    """The Deployment is rolled out at its baseline size and ready."""
    return CheckSpec(check="workload_ready", params={"name": name})


def service_serves(service: str, port: int, backend: str) -> CheckSpec:
    """The Service answers on `port` from a ready pod of `backend`."""
    return CheckSpec(check="service_serves", params={"service": service, "port": port, "backend": backend})


def pod_recreation(deployment: str) -> CheckSpec:
    """Durability: a deleted pod of the Deployment comes back ready."""
    return CheckSpec(check="pod_recreation", params={"deployment": deployment})


def keep(*extra: CheckSpec) -> tuple[CheckSpec, ...]:
    """The baseline must_keep checks followed by a problem's own (never fewer)."""
    return (*BASELINE_KEEP, *extra)


# ------------------------------------------------------------------------------ gold
def rollout_restart(namespace: str, deployment: str, stamp: str,
                    patch_type: Literal["strategic", "merge"] = "merge") -> Action:
    """`kubectl rollout restart deployment/<name>`: a pod-template annotation (any value restarts)."""
    return Action(op="patch", kind="Deployment", namespace=namespace, name=deployment, patch_type=patch_type,
                  patch={"spec": {"template": {"metadata": {"annotations": {RESTART_ANNOTATION: stamp}}}}})


def patch_container(namespace: str, deployment: str, container: str, fields: dict[str, Any]) -> Action:
    """A strategic-merge patch of one container of a Deployment (`kubectl patch`)."""
    return Action(op="patch", kind="Deployment", namespace=namespace, name=deployment,
                  patch={"spec": {"template": {"spec": {"containers": [{"name": container, **fields}]}}}})


def move_to_new_claim(namespace: str, deployment: str, volume: str, claim: str,
                      size: str = "1Gi") -> tuple[Action, Action]:
    """Move a workload's data off a bad disk: a new PersistentVolumeClaim, and the Deployment's
    `volume` pointed at it (the pods roll onto a fresh volume)."""
    return (Action(op="apply", manifest={
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim, "namespace": namespace},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}),
            Action(op="patch", kind="Deployment", namespace=namespace, name=deployment, patch={
                "spec": {"template": {"spec": {"volumes": [
                    {"name": volume, "persistentVolumeClaim": {"claimName": claim}}]}}}}))
