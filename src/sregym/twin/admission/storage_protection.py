"""StorageObjectInUseProtection: every new PVC and PV carries a protection finalizer.

That finalizer is why deleting a claim a pod still mounts leaves it `Terminating` until the pod
is gone (the PV controller in `controllers/volumes.py` removes it once nothing uses the claim).
"""

from __future__ import annotations

from sregym.twin.admission.base import AdmissionPlugin, admission_plugin
from sregym.twin.machinery.store import Operation
from sregym.twin.workloads.volumes import PV_PROTECTION, PVC_PROTECTION

_FINALIZERS = {("", "PersistentVolumeClaim"): PVC_PROTECTION, ("", "PersistentVolume"): PV_PROTECTION}


@admission_plugin
class StorageObjectInUseProtection(AdmissionPlugin):
    name = "StorageObjectInUseProtection"
    order = 115

    def mutate(self, op: Operation) -> None:
        finalizer = _FINALIZERS.get(op.kind.key)
        if finalizer is None or op.verb != "CREATE" or op.obj is None:
            return
        meta = op.obj.setdefault("metadata", {})
        finalizers = list(meta.get("finalizers") or [])
        if finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, finalizer]
