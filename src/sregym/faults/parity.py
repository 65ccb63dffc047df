"""Faults on object metadata the generic `patch_objects` cannot put back: labels of a
cluster-scoped object (a Namespace's Pod Security Admission labels).

`patch_objects` restores a saved `spec` or `data`; a Namespace's admission policy lives in its
labels, so this injector saves the labels it changes and recover writes exactly those back (a
label that did not exist before is removed again). Used by the Hotel Reservation parity problems.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


class ObjectLabelsParams(FaultParams):
    kind: str = "Namespace"
    namespace: str | None = None  # None for cluster-scoped objects
    name: str
    labels: dict[str, str]


@fault
class SetObjectLabels(Fault):
    """Set labels on an existing object (a Namespace's `pod-security.kubernetes.io/enforce`):
    nothing running changes, the rule bites at the next pod creation."""

    name = "set_object_labels"
    Params = ObjectLabelsParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ObjectLabelsParams)
        obj = cluster.get(p.kind, p.namespace, p.name)
        if obj is None:
            raise LookupError(f"cannot inject: {p.kind} {p.name} does not exist")
        current = (obj.get("metadata") or {}).get("labels") or {}
        saved = {key: current.get(key) for key in p.labels}
        cluster.patch(p.kind, p.namespace, p.name, {"metadata": {"labels": copy.deepcopy(p.labels)}},
                      patch_type="merge")
        return {"saved": saved}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ObjectLabelsParams)
        if cluster.get(p.kind, p.namespace, p.name) is None:
            return
        # A merge patch with null removes a label that the injection added.
        cluster.patch(p.kind, p.namespace, p.name, {"metadata": {"labels": dict(state.get("saved") or {})}},
                      patch_type="merge")
