"""Persistent storage as the scheduler, the PV controller, the attach/detach controller and the
kubelet all see it: which claims a pod uses, which class a claim asks for, which volume backs it,
and whether that volume is attached to the pod's node.

These are pure reads of the store, shared by `controllers/scheduler.py`,
`controllers/volumes.py` and the kubelet, so the three can never disagree on what "bound" or
"attached" means.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import get_path, is_terminating

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

# Annotations the real PV controller, scheduler and provisioners write.
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


def claim_volumes(pod: dict[str, Any]) -> list[tuple[str, str]]:
    """(volume name, claim name) for every PVC-backed volume of a pod.

    Generic ephemeral volumes are claims too: their PVC is named `<pod>-<volume>`."""
    out: list[tuple[str, str]] = []
    pod_name = get_path(pod, "metadata", "name", default="")
    for vol in get_path(pod, "spec", "volumes", default=None) or []:
        claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            out.append((vol.get("name", ""), claim))
        elif vol.get("ephemeral"):
            out.append((vol.get("name", ""), f"{pod_name}-{vol.get('name', '')}"))
    return out


def default_class_name(twin: Twin) -> str | None:
    """The StorageClass annotated as default (newest wins on ties, like the API server)."""
    best: tuple[str, str] | None = None
    for sc in twin.store.scan("StorageClass"):
        meta = sc.get("metadata") or {}
        if (meta.get("annotations") or {}).get(ANN_DEFAULT_CLASS) == "true":
            key = (meta.get("creationTimestamp", ""), meta.get("name", ""))
            if best is None or key > best:
                best = key
    return best[1] if best else None


def claim_class_name(twin: Twin, pvc: dict[str, Any]) -> str:
    """The class a claim asks for; "" means "no class" (static binding only)."""
    spec = pvc.get("spec") or {}
    if "storageClassName" in spec and spec["storageClassName"] is not None:
        return str(spec["storageClassName"])
    return default_class_name(twin) or ""


def claim_class(twin: Twin, pvc: dict[str, Any]) -> dict[str, Any] | None:
    name = claim_class_name(twin, pvc)
    return twin.store.peek("StorageClass", None, name) if name else None


def is_delayed_binding(twin: Twin, pvc: dict[str, Any]) -> bool:
    """True when the claim's class binds only once a consumer pod is scheduled."""
    sc = claim_class(twin, pvc)
    return bool(sc) and sc.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER


def is_bound(pvc: dict[str, Any]) -> bool:
    return (get_path(pvc, "status", "phase") == "Bound"
            and bool(get_path(pvc, "spec", "volumeName")))


def bound_volume(twin: Twin, pvc: dict[str, Any]) -> dict[str, Any] | None:
    """The PV a bound claim points at, if it exists."""
    if not is_bound(pvc):
        return None
    return twin.store.peek("PersistentVolume", None, pvc["spec"]["volumeName"])


def is_attachable(pv: dict[str, Any]) -> bool:
    """Volumes a controller must attach to a node before the kubelet can mount them (CSI block
    devices). hostPath/local/NFS volumes are mounted directly and need no attachment."""
    return bool(get_path(pv, "spec", "csi"))


def multi_attach_allowed(pv: dict[str, Any]) -> bool:
    """Like the attach/detach controller's `IsMultiAttachAllowed`: only RWX/ROX (or no modes at
    all) may attach to several nodes at once."""
    modes = get_path(pv, "spec", "accessModes", default=None) or []
    if not modes:
        return True
    return any(m in ("ReadWriteMany", "ReadOnlyMany") for m in modes)


def attacher_of(pv: dict[str, Any]) -> str:
    return str(get_path(pv, "spec", "csi", "driver", default="") or "")


def attachment_name(pv: dict[str, Any], node: str) -> str:
    """The VolumeAttachment name the CSI attacher uses: `csi-` + sha256(handle+driver+node)."""
    handle = str(get_path(pv, "spec", "csi", "volumeHandle", default="") or "")
    digest = hashlib.sha256(f"{handle}{attacher_of(pv)}{node}".encode()).hexdigest()
    return f"csi-{digest}"


def unique_volume_name(pv: dict[str, Any]) -> str:
    """The name the node lists in `status.volumesAttached` (`kubernetes.io/csi/<driver>^<handle>`)."""
    handle = get_path(pv, "spec", "csi", "volumeHandle", default="")
    return f"kubernetes.io/csi/{attacher_of(pv)}^{handle}"


def is_attached(twin: Twin, pv: dict[str, Any], node: str) -> bool:
    if not is_attachable(pv):
        return True
    va = twin.store.peek("VolumeAttachment", None, attachment_name(pv, node))
    return bool(va) and bool(get_path(va, "status", "attached")) and not is_terminating(va)


def pod_uses_volumes(pod: dict[str, Any]) -> bool:
    """Whether a pod still holds its volumes (the attach/detach controller's view): bound to a
    node, not finished, and, once deleting, only while a container is still running."""
    if not get_path(pod, "spec", "nodeName"):
        return False
    if get_path(pod, "status", "phase") in ("Succeeded", "Failed"):
        return False
    if is_terminating(pod):
        statuses = get_path(pod, "status", "containerStatuses", default=None) or []
        return any((s.get("state") or {}).get("running") is not None for s in statuses)
    return True


def attach_status(twin: Twin, pod: dict[str, Any]) -> tuple[bool, str | None]:
    """Whether every PVC-backed volume of a scheduled pod is bound and attached to its node.

    Returns (True, None) when the kubelet may mount them all, else (False, reason) where reason is
    short and human ("volume "data" is not attached to node kind-worker2"). The kubelet turns a
    long wait into its own `FailedMount` timeout message; `unattached_volumes()` lists names.
    """
    node = get_path(pod, "spec", "nodeName") or ""
    ns = get_path(pod, "metadata", "namespace") or "default"
    for vol_name, claim in claim_volumes(pod):
        pvc = twin.store.peek("PersistentVolumeClaim", ns, claim)
        if pvc is None:
            return False, f'persistentvolumeclaim "{claim}" not found'
        if not is_bound(pvc):
            return False, f'persistentvolumeclaim "{claim}" is not bound'
        pv = bound_volume(twin, pvc)
        if pv is None:
            return False, f'persistentvolume "{pvc["spec"]["volumeName"]}" not found'
        if not node or not is_attached(twin, pv, node):
            return False, f'volume "{vol_name}" is not attached to node {node or "<none>"}'
    return True, None


def unattached_volumes(twin: Twin, pod: dict[str, Any]) -> list[str]:
    """Names of the pod's PVC volumes not yet usable on its node (for FailedMount messages)."""
    node = get_path(pod, "spec", "nodeName") or ""
    ns = get_path(pod, "metadata", "namespace") or "default"
    out = []
    for vol_name, claim in claim_volumes(pod):
        pvc = twin.store.peek("PersistentVolumeClaim", ns, claim)
        pv = bound_volume(twin, pvc) if pvc is not None else None
        if pv is None or not node or not is_attached(twin, pv, node):
            out.append(vol_name)
    return sorted(out)


def claim_request(pvc: dict[str, Any]) -> int:
    from sregym.twin.machinery.quantity import QuantityError, memory_bytes

    try:
        return memory_bytes(get_path(pvc, "spec", "resources", "requests", "storage", default="0"))
    except (QuantityError, TypeError):
        return 0


def volume_capacity(pv: dict[str, Any]) -> int:
    from sregym.twin.machinery.quantity import QuantityError, memory_bytes

    try:
        return memory_bytes(get_path(pv, "spec", "capacity", "storage", default="0"))
    except (QuantityError, TypeError):
        return 0


def _claim_ref_matches(pv: dict[str, Any], pvc: dict[str, Any]) -> bool:
    ref = get_path(pv, "spec", "claimRef") or {}
    meta = pvc.get("metadata") or {}
    if ref.get("name") != meta.get("name") or (ref.get("namespace") or "default") != meta.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.get("uid")


def find_static_volume(twin: Twin, pvc: dict[str, Any],
                       accept: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any] | None:
    """The PV the binder would pick for a claim: pre-bound first, else the smallest Available
    volume of the same class whose modes, size, volumeMode and label selector all fit.
    `accept` adds a caller's test (the scheduler's node-affinity check)."""
    from sregym.twin.machinery.selectors import selector_from_spec

    spec = pvc.get("spec") or {}
    wanted_class = claim_class_name(twin, pvc)
    wanted_modes = set(spec.get("accessModes") or [])
    wanted_size = claim_request(pvc)
    wanted_mode = spec.get("volumeMode") or "Filesystem"
    selector = selector_from_spec(spec["selector"]) if spec.get("selector") else None
    if spec.get("volumeName"):
        pv = twin.store.peek("PersistentVolume", None, spec["volumeName"])
        if pv is None or is_terminating(pv):
            return None
        ref = get_path(pv, "spec", "claimRef")
        if ref and not _claim_ref_matches(pv, pvc):
            return None
        return pv if accept is None or accept(pv) else None
    best: tuple[int, str] | None = None
    chosen: dict[str, Any] | None = None
    for pv in twin.store.scan("PersistentVolume"):
        if is_terminating(pv):
            continue
        pv_spec = pv.get("spec") or {}
        ref = pv_spec.get("claimRef")
        if ref:
            if _claim_ref_matches(pv, pvc):
                if accept is None or accept(pv):
                    return pv  # pre-bound to this claim by an admin
            continue
        if get_path(pv, "status", "phase") not in (None, "Available"):
            continue
        if (pv_spec.get("storageClassName") or "") != wanted_class:
            continue
        if not wanted_modes <= set(pv_spec.get("accessModes") or []):
            continue
        if (pv_spec.get("volumeMode") or "Filesystem") != wanted_mode:
            continue
        size = volume_capacity(pv)
        if size < wanted_size:
            continue
        if selector is not None and not selector.matches((pv.get("metadata") or {}).get("labels")):
            continue
        if accept is not None and not accept(pv):
            continue
        key = (size, pv["metadata"]["name"])
        if best is None or key < best:
            best, chosen = key, pv
    return chosen
