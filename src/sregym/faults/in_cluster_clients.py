"""Faults on the programs that act on the cluster from inside it (operators, kubectl jobs): their
RBAC narrowed, and an object whose finalizer only such a program may remove.

`narrow_role` replaces a Role's (or ClusterRole's) rules, the way a "least privilege" clean-up
strips the verbs an operator still needs; recover puts the saved rules back. `delete_held_object`
deletes an object that carries a controller's finalizer (a redeploy or a maintenance step
removing it): the API server only sets its `deletionTimestamp`, and the object stays
`Terminating` until the controller removes the finalizer. Recover releases it: the owning
controller is normally gone by then (its own objects are removed by the fault that created
them), so the finalizer is removed the way an SRE does once the cleanup is known to be done.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault
from sregym.faults.objects import required

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


class NarrowRoleParams(FaultParams):
    kind: str = "Role"  # or ClusterRole
    namespace: str | None = None
    name: str
    rules: tuple[dict[str, Any], ...]


@fault
class NarrowRole(Fault):
    """Replace a Role's rules (typically with read-only ones); recover restores the saved rules."""

    name = "narrow_role"
    Params = NarrowRoleParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, NarrowRoleParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        saved = copy.deepcopy(obj.get("rules") or [])
        narrowed = copy.deepcopy(obj)
        narrowed["rules"] = [dict(rule) for rule in p.rules]
        cluster.replace(narrowed)
        return {"rules": saved}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, NarrowRoleParams)
        current = cluster.get(p.kind, p.namespace, p.name)
        if current is None or current.get("rules") == state.get("rules"):
            return
        restored = copy.deepcopy(current)
        restored["rules"] = copy.deepcopy(state.get("rules") or [])
        cluster.replace(restored)


class DeleteHeldObjectParams(FaultParams):
    kind: str
    namespace: str | None = None
    name: str
    finalizer: str


@fault
class DeleteHeldObject(Fault):
    """Delete an object that carries `finalizer`; it stays Terminating until the finalizer goes."""

    name = "delete_held_object"
    Params = DeleteHeldObjectParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, DeleteHeldObjectParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        if p.finalizer not in ((obj.get("metadata") or {}).get("finalizers") or []):
            raise LookupError(f"cannot inject: {p.kind} {p.name} does not carry {p.finalizer}")
        cluster.delete(p.kind, p.namespace, p.name)
        return {}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, DeleteHeldObjectParams)
        current = cluster.get(p.kind, p.namespace, p.name)
        if current is None or not (current.get("metadata") or {}).get("deletionTimestamp"):
            return
        remaining = [f for f in current["metadata"].get("finalizers") or [] if f != p.finalizer]
        cluster.patch(p.kind, p.namespace, p.name, {"metadata": {"finalizers": remaining or None}},
                      patch_type="merge")


__all__ = ["DeleteHeldObject", "NarrowRole"]
