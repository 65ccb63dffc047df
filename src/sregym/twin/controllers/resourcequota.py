"""The resource quota controller: keeps every ResourceQuota's `status.hard` / `status.used` true.

`kubectl describe quota` is how an on-call engineer finds out a namespace is full, so the numbers
must match what admission enforces; both come from the same evaluators
(`sregym.twin.admission.resourcequota`). Only namespaces where something changed are recomputed,
which keeps the per-tick cost flat as the cluster grows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.admission.resourcequota import hard_of, namespace_usage
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.store import WatchEvent

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

# Kinds whose churn never changes quota usage (and would otherwise wake us every tick).
_IGNORED = {("", "Event"), ("", "Endpoints"), ("discovery.k8s.io", "EndpointSlice"),
            ("coordination.k8s.io", "Lease"), ("", "ResourceQuota")}


@controller
class ResourceQuotaController(Controller):
    name = "resourcequota"
    order = 90
    user = "system:serviceaccount:kube-system:resourcequota-controller"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._dirty: set[str] = set()
        self._all_dirty = True
        twin.store.add_listener(self._on_change)

    def _on_change(self, event: WatchEvent) -> None:
        if event.kind.key == ("", "ResourceQuota"):
            # Our own status writes come back here: only spec changes matter.
            self._dirty.add((event.object.get("metadata") or {}).get("namespace", ""))
            return
        if event.kind.key in _IGNORED or not event.kind.namespaced:
            return
        self._dirty.add((event.object.get("metadata") or {}).get("namespace", ""))

    def reconcile(self) -> None:
        store = self.twin.store
        if not self._all_dirty and not self._dirty:
            return
        namespaces = None if self._all_dirty else sorted(self._dirty)
        self._all_dirty = False
        self._dirty = set()
        quotas = [q for q in store.scan("ResourceQuota")
                  if namespaces is None or q["metadata"].get("namespace") in namespaces]
        for quota in quotas:
            hard = hard_of(quota)
            used = namespace_usage(self.twin, quota)
            status = {"hard": {k: hard[k].text() for k in sorted(hard)},
                      "used": {k: used[k].text() for k in sorted(hard)}}
            if quota.get("status") == status:
                continue

            def publish(obj: dict[str, Any], status: dict[str, Any] = status) -> None:
                obj["status"] = status

            meta = quota["metadata"]
            store.mutate("ResourceQuota", meta.get("namespace"), meta["name"], publish, status=True,
                         user=self.user)
        # Our own status writes marked these namespaces dirty again; they are already current.
        if namespaces is None:
            self._dirty = set()
        else:
            self._dirty -= set(namespaces)
