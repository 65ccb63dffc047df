"""Platform faults: cluster rules that bite when pods are (re)created, and workload edits.

Most platform incidents are latent: a LimitRange, a ResourceQuota or an admission webhook changes
nothing for running pods, and the outage starts at the next pod creation (a node drain, a
rollout, an eviction). The injectors here therefore do what a real incident sequence does: add
the objects (waiting, like an operator would, for a webhook server to come up), then delete the
target pods so their controllers must recreate them through the new rules. Recover removes the
objects and recreates the same pods again, so pods admitted under the bad rules do not linger.

`patch_objects` is the other half: a set of edits to existing objects (rollout strategy, CPU
limits, volumes, affinity); recover writes the saved `spec`/`data` back onto the live objects.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from sregym.faults.base import Fault, FaultParams, fault
from sregym.faults.disk_and_metastable import rolled_out

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

POLL_S = 5.0


class PodTarget(FaultParams):
    namespace: str
    label_selector: str


class RecreateParams(FaultParams):
    objects: tuple[dict[str, Any], ...]
    # "namespace/deployment" that must be ready before pods are recreated (a webhook server).
    wait_ready: tuple[str, ...] = ()
    wait_timeout_s: float = 120.0
    recreate: tuple[PodTarget, ...] = ()


def _ready(obj: dict[str, Any] | None) -> bool:
    if obj is None:
        return False
    replicas = int((obj.get("spec") or {}).get("replicas", 1) or 0)
    return int((obj.get("status") or {}).get("readyReplicas") or 0) >= max(replicas, 1)


def _delete_pods(cluster: Cluster, targets: tuple[PodTarget, ...]) -> list[str]:
    deleted = []
    for target in targets:
        pods = sorted(cluster.list("Pod", target.namespace, label_selector=target.label_selector),
                      key=lambda o: o["metadata"]["name"])
        for pod in pods:
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                continue
            cluster.delete("Pod", target.namespace, pod["metadata"]["name"])
            deleted.append(f"{target.namespace}/{pod['metadata']['name']}")
    return deleted


@fault
class CreateObjectsRecreatePods(Fault):
    """Add objects that change how pods are admitted (LimitRange, ResourceQuota, webhook
    configuration and its server), then make the target workloads recreate their pods."""

    name = "create_objects_recreate_pods"
    Params = RecreateParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, RecreateParams)
        created = []
        for obj in p.objects:
            meta = obj.get("metadata") or {}
            if cluster.get(obj["kind"], meta.get("namespace"), meta["name"]) is not None:
                continue
            cluster.create(copy.deepcopy(obj))
            created.append({"kind": obj["kind"], "namespace": meta.get("namespace"), "name": meta["name"]})
        for ref in p.wait_ready:
            namespace, _, name = ref.partition("/")
            waited = 0.0
            while not _ready(cluster.get("Deployment", namespace, name)):
                if waited >= p.wait_timeout_s:
                    raise RuntimeError(f"cannot inject: Deployment {ref} not ready after {waited:.0f}s")
                cluster.advance(POLL_S)
                waited += POLL_S
        return {"created": created, "deleted": _delete_pods(cluster, p.recreate)}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, RecreateParams)
        for ref in reversed(state.get("created") or []):
            if cluster.get(ref["kind"], ref["namespace"], ref["name"]) is not None:
                cluster.delete(ref["kind"], ref["namespace"], ref["name"])
        _delete_pods(cluster, p.recreate)


class ObjectPatch(FaultParams):
    kind: str = "Deployment"
    namespace: str | None = None
    name: str
    patch: Any
    patch_type: Literal["strategic", "merge", "json"] = "strategic"
    field: Literal["spec", "data"] = Field(default="spec", description="the part recover restores")


class PatchObjectsParams(FaultParams):
    patches: tuple[ObjectPatch, ...]


@fault
class PatchObjects(Fault):
    """Edit existing objects the way a bad change request would (a strategy, limits, a volume);
    recover restores the saved part of each object on its live version, newest edit first."""

    name = "patch_objects"
    Params = PatchObjectsParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, PatchObjectsParams)
        saved = []
        for edit in p.patches:
            obj = cluster.get(edit.kind, edit.namespace, edit.name)
            if obj is None:
                raise LookupError(f"cannot inject: {edit.kind} {edit.name} does not exist")
            saved.append(copy.deepcopy(obj.get(edit.field)))
            cluster.patch(edit.kind, edit.namespace, edit.name, copy.deepcopy(edit.patch),
                          patch_type=edit.patch_type)
        return {"saved": saved}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, PatchObjectsParams)
        for edit, original in reversed(list(zip(p.patches, state.get("saved") or [], strict=False))):
            current = cluster.get(edit.kind, edit.namespace, edit.name)
            if current is None or current.get(edit.field) == original:
                continue
            restored = copy.deepcopy(current)
            if original is None:
                restored.pop(edit.field, None)
            else:
                restored[edit.field] = copy.deepcopy(original)
            cluster.replace(restored)


class AwaitRolloutParams(FaultParams):
    namespace: str
    names: tuple[str, ...]
    timeout_s: float = 180.0


@fault
class AwaitRollout(Fault):
    """Wait, as an operator's change pipeline does, until Deployments finish rolling out before
    the next step of an incident sequence (a pod created by the rollout must exist, with the rules
    in force at its creation, before the rules change). Changes nothing; recover does nothing."""

    name = "await_rollout"
    Params = AwaitRolloutParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, AwaitRolloutParams)
        for name in p.names:
            waited = 0.0
            while not rolled_out(cluster.get("Deployment", p.namespace, name)):
                if waited >= p.timeout_s:
                    raise RuntimeError(f"cannot inject: Deployment {p.namespace}/{name} not rolled out "
                                       f"after {waited:.0f}s")
                cluster.advance(POLL_S)
                waited += POLL_S
        return {}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        return None
