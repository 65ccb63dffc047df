"""Persistent volumes: the PV controller (binding and dynamic provisioning), the ephemeral volume
and protection controllers, and the attach/detach controller.

Binding follows kube-controller-manager's persistentvolume-binder: a claim binds to the smallest
fitting Available PV of its class, or a volume is provisioned for it; a claim whose class says
`WaitForFirstConsumer` waits (event `WaitForFirstConsumer`) until the scheduler has picked a node
for a pod using it (annotation `volume.kubernetes.io/selected-node`). Provisioned volumes are CSI
block devices named `pvc-<claim uid>`, which is what makes the attach/detach controller matter: a
ReadWriteOnce volume attached to one node cannot attach to another while a pod there still uses
it, and the pod on the second node waits with a `FailedAttachVolume` Multi-Attach event.
"""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import get_path, is_terminating
from sregym.twin.workloads.volumes import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_PROVISIONED_BY,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    NO_PROVISIONER,
    PV_PROTECTION,
    PVC_PROTECTION,
    attachment_name,
    bound_volume,
    claim_class,
    claim_class_name,
    claim_volumes,
    find_static_volume,
    is_attachable,
    is_delayed_binding,
    multi_attach_allowed,
    pod_uses_volumes,
    unique_volume_name,
)

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

PV_CONTROLLER = "persistentvolume-controller"
ATTACH_CONTROLLER = "attachdetach-controller"
# The PV controller re-syncs every claim this often; periodic events repeat at this pace.
RESYNC_SECONDS = 15.0
# Writes neither volume controller reads: a steady cluster's Events and heartbeat Leases.
QUIET_KINDS = ("Event", "Lease")


class _ClaimUsers:
    """Index of pods that reference PVCs, kept current by the store, so the volume controllers
    never scan every pod of a 500-pod cluster on every tick."""

    def __init__(self, twin: Twin) -> None:
        self._index = twin.store.add_index("Pod", lambda pod: ("claims",) if claim_volumes(pod) else ())

    @property
    def pods(self) -> set[tuple[str, str]]:
        return set(self._index.names("claims"))


def claim_users(twin: Twin) -> _ClaimUsers:
    users = twin.services.claim_users
    if users is None:
        users = _ClaimUsers(twin)
        twin.services.claim_users = users
    return users


@controller
class PersistentVolumeBinder(Controller):
    """PV/PVC binding, dynamic provisioning, ephemeral claims and storage-object protection."""

    name = "persistentvolume-binder"
    order = 55
    user = "system:serviceaccount:kube-system:persistent-volume-binder"
    # A function of claims, volumes, pods, classes and nodes; its only timer is the resync of
    # its periodic events (`next_due`).
    quiet_kinds = QUIET_KINDS

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._users = claim_users(twin)
        self._last_event: dict[tuple[str, str], float] = {}
        self._resync_due = math.inf

    def next_due(self) -> float:
        return self._resync_due

    def reconcile(self) -> None:
        self._resync_due = math.inf
        store = self.twin.store
        in_use = self._claims_in_use()
        for pvc in list(store.scan("PersistentVolumeClaim")):
            self._sync_claim(pvc, in_use)
        for pv in list(store.scan("PersistentVolume")):
            self._sync_volume(pv)

    # ------------------------------------------------------------ pod users
    def _claims_in_use(self) -> set[tuple[str, str]]:
        """Claims referenced by a pod that has not finished (what pvc-protection checks); also
        creates missing generic ephemeral claims."""
        used: set[tuple[str, str]] = set()
        for ns, name in sorted(self._users.pods):
            pod = self.twin.store.peek("Pod", ns, name)
            if pod is None:
                continue
            if get_path(pod, "status", "phase") in ("Succeeded", "Failed"):
                continue
            for _vol, claim in claim_volumes(pod):
                used.add((ns, claim))
            if not is_terminating(pod):
                self._ensure_ephemeral_claims(pod)
        return used

    def _ensure_ephemeral_claims(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        for vol in get_path(pod, "spec", "volumes", default=None) or []:
            template = (vol.get("ephemeral") or {}).get("volumeClaimTemplate")
            if not template:
                continue
            claim = f"{meta['name']}-{vol.get('name', '')}"
            if self.twin.store.peek("PersistentVolumeClaim", meta.get("namespace"), claim) is not None:
                continue
            obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {**(template.get("metadata") or {}), "name": claim,
                                "namespace": meta.get("namespace"),
                                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                                     "uid": meta.get("uid"), "controller": True,
                                                     "blockOwnerDeletion": True}]},
                   "spec": dict(template.get("spec") or {})}
            try:
                self.twin.store.create(obj, user="system:serviceaccount:kube-system:ephemeral-volume-controller")
            except ApiError:
                self.requeue()
                continue

    # ------------------------------------------------------------------ claims
    def _sync_claim(self, pvc: dict[str, Any], in_use: set[tuple[str, str]]) -> None:
        meta = pvc["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        if is_terminating(pvc):
            if PVC_PROTECTION in (meta.get("finalizers") or []) and (ns, name) not in in_use:
                self._drop_finalizer("PersistentVolumeClaim", ns, name, PVC_PROTECTION)
            return
        volume_name = get_path(pvc, "spec", "volumeName")
        if volume_name:
            self._sync_bound_claim(pvc, volume_name)
            return
        if get_path(pvc, "status", "phase") != "Pending":
            self._set_claim_status(pvc, {"phase": "Pending"})
        sc_name = claim_class_name(self.twin, pvc)
        sc = claim_class(self.twin, pvc)
        if is_delayed_binding(self.twin, pvc):
            node = get_path(pvc, "metadata", "annotations", ANN_SELECTED_NODE)
            if not node:
                self._periodic_event(pvc, "Normal", "WaitForFirstConsumer",
                                     "waiting for first consumer to be created before binding")
                return
            pv = find_static_volume(self.twin, pvc, accept=lambda v: _pv_fits_node(self.twin, v, node))
        else:
            pv = find_static_volume(self.twin, pvc)
        if pv is not None:
            self._bind(pvc, pv)
            return
        if not sc_name:
            self._periodic_event(pvc, "Normal", "FailedBinding",
                                 "no persistent volumes available for this claim and no storage class is set")
            return
        if sc is None:
            self._periodic_event(pvc, "Warning", "ProvisioningFailed",
                                 f'storageclass.storage.k8s.io "{sc_name}" not found')
            return
        provisioner = sc.get("provisioner") or ""
        if provisioner == NO_PROVISIONER:
            self._periodic_event(pvc, "Warning", "ProvisioningFailed",
                                 f"no volume plugin matched name: {NO_PROVISIONER}")
            return
        self._provision(pvc, sc, provisioner)

    def _sync_bound_claim(self, pvc: dict[str, Any], volume_name: str) -> None:
        pv = self.twin.store.peek("PersistentVolume", None, volume_name)
        phase = get_path(pvc, "status", "phase")
        if pv is None:
            if phase == "Bound":
                self._set_claim_status(pvc, {**(pvc.get("status") or {}), "phase": "Lost"})
                self.twin.events.warning(pvc, "ClaimLost",
                                         "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
                                         component=PV_CONTROLLER)
            elif phase != "Lost" and phase != "Pending":
                self._set_claim_status(pvc, {"phase": "Pending"})
            return
        ref = get_path(pv, "spec", "claimRef") or {}
        meta = pvc["metadata"]
        if not ref:
            self._bind(pvc, pv)  # pre-bound claim: complete the PV side
            return
        if ref.get("name") != meta["name"] or ref.get("namespace") != meta.get("namespace") or (
                ref.get("uid") and ref.get("uid") != meta.get("uid")):
            self._periodic_event(pvc, "Warning", "FailedBinding",
                                 f'volume "{volume_name}" already bound to a different claim.')
            return
        if phase != "Bound":
            self._bind(pvc, pv)

    def _bind(self, pvc: dict[str, Any], pv: dict[str, Any]) -> None:
        """Both halves of a binding, PV first (the real controller's order)."""
        store = self.twin.store
        meta = pvc["metadata"]
        pv_name = pv["metadata"]["name"]
        claim_ref = {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace"),
                     "name": meta["name"], "uid": meta.get("uid"), "apiVersion": "v1",
                     "resourceVersion": meta.get("resourceVersion")}
        set_by_controller = not get_path(pv, "spec", "claimRef")

        def bind_pv(obj: dict[str, Any]) -> None:
            ref = obj["spec"].get("claimRef") or {}
            if not ref.get("uid"):
                obj["spec"]["claimRef"] = claim_ref
            if set_by_controller:
                obj["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"

        try:
            store.mutate("PersistentVolume", None, pv_name, bind_pv, user=self.user)
            store.mutate("PersistentVolume", None, pv_name,
                         lambda o: o.setdefault("status", {}).update(phase="Bound"),
                         status=True, user=self.user)
            set_volume = not get_path(pvc, "spec", "volumeName")

            def bind_claim(obj: dict[str, Any]) -> None:
                obj["spec"]["volumeName"] = pv_name
                ann = obj["metadata"].setdefault("annotations", {})
                ann[ANN_BIND_COMPLETED] = "yes"
                if set_volume:
                    ann[ANN_BOUND_BY_CONTROLLER] = "yes"

            store.mutate("PersistentVolumeClaim", meta.get("namespace"), meta["name"], bind_claim,
                         user=self.user)
            current = store.peek("PersistentVolume", None, pv_name) or pv
            status = {"phase": "Bound",
                      "accessModes": list(get_path(current, "spec", "accessModes", default=None) or []),
                      "capacity": dict(get_path(current, "spec", "capacity", default=None) or {})}
            claim = store.peek("PersistentVolumeClaim", meta.get("namespace"), meta["name"])
            if claim is not None:
                self._set_claim_status(claim, status)
        except ApiError:
            self.requeue()
            return

    def _provision(self, pvc: dict[str, Any], sc: dict[str, Any], provisioner: str) -> None:
        """External provisioning in two steps a tick apart: the PV controller hands the claim to
        the provisioner, then the provisioner creates the volume and the controller binds it."""
        meta = pvc["metadata"]
        ann = meta.get("annotations") or {}
        if ann.get(ANN_STORAGE_PROVISIONER) != provisioner:
            def hand_over(obj: dict[str, Any]) -> None:
                a = obj["metadata"].setdefault("annotations", {})
                a[ANN_STORAGE_PROVISIONER] = provisioner
                a[ANN_BETA_STORAGE_PROVISIONER] = provisioner

            try:
                updated = self.twin.store.mutate("PersistentVolumeClaim", meta.get("namespace"), meta["name"],
                                                 hand_over, user=self.user) or pvc
            except ApiError:
                self.requeue()
                return
            self.twin.events.normal(
                updated, "ExternalProvisioning",
                f"Waiting for a volume to be created either by the external provisioner '{provisioner}' "
                "or manually by the system administrator. If volume creation is delayed, please verify "
                "that the provisioner is running and correctly registered.", component=PV_CONTROLLER)
            self.twin.events.normal(
                updated, "Provisioning",
                f'External provisioner is provisioning volume for claim "{meta.get("namespace")}/{meta["name"]}"',
                component=self._provisioner_identity(provisioner))
            return
        pv_name = f"pvc-{meta.get('uid', '')}"
        if self.twin.store.peek("PersistentVolume", None, pv_name) is None:
            pv = _provisioned_volume(pv_name, pvc, sc, provisioner,
                                     claim_class_name(self.twin, pvc))
            try:
                self.twin.store.create(pv, keep_status=True, user=self.user)
            except ApiError as exc:
                self.requeue()
                self.twin.events.warning(pvc, "ProvisioningFailed",
                                         f'failed to provision volume with StorageClass "{sc["metadata"]["name"]}": '
                                         f"{exc.message}", component=self._provisioner_identity(provisioner))
                return
            self.twin.events.normal(pvc, "ProvisioningSucceeded", f"Successfully provisioned volume {pv_name}",
                                    component=self._provisioner_identity(provisioner))
        pv = self.twin.store.peek("PersistentVolume", None, pv_name)
        claim = self.twin.store.peek("PersistentVolumeClaim", meta.get("namespace"), meta["name"])
        if pv is not None and claim is not None:
            self._bind(claim, pv)

    def _provisioner_identity(self, provisioner: str) -> str:
        """`<provisioner>_<provisioner pod>_<uuid>`, the event source external provisioners use."""
        ident = self.twin.services.provisioner_identities.get(provisioner)
        if ident is None:
            short = provisioner.rsplit("/", 1)[-1]
            pod = f"{short}-provisioner-{self.twin.rng.suffix(10, 'volumes')}-{self.twin.rng.suffix(5, 'volumes')}"
            ident = f"{provisioner}_{pod}_{self.twin.rng.uuid('volumes')}"
            self.twin.services.provisioner_identities[provisioner] = ident
        return ident

    # ----------------------------------------------------------------- volumes
    def _sync_volume(self, pv: dict[str, Any]) -> None:
        meta = pv["metadata"]
        name = meta["name"]
        phase = get_path(pv, "status", "phase")
        ref = get_path(pv, "spec", "claimRef") or {}
        if is_terminating(pv):
            if PV_PROTECTION in (meta.get("finalizers") or []) and phase != "Bound":
                self._drop_finalizer("PersistentVolume", None, name, PV_PROTECTION)
            return
        if not ref:
            wanted = "Available"
        else:
            claim = self.twin.store.peek("PersistentVolumeClaim", ref.get("namespace"), ref.get("name", ""))
            if claim is None and not ref.get("uid"):
                wanted = "Available"  # pre-bound by an admin, waiting for its claim
            elif claim is None or (ref.get("uid") and get_path(claim, "metadata", "uid") != ref.get("uid")):
                wanted = "Released"
            elif get_path(claim, "spec", "volumeName") == name:
                wanted = "Bound"
            else:
                wanted = phase or "Available"
        if wanted != phase:
            try:
                self.twin.store.mutate("PersistentVolume", None, name,
                                       lambda o: o.setdefault("status", {}).update(phase=wanted),
                                       status=True, user=self.user)
            except ApiError:
                self.requeue()
                return
        if wanted == "Released" and get_path(pv, "spec", "persistentVolumeReclaimPolicy") == "Delete":
            try:
                self.twin.store.delete("PersistentVolume", None, name, user=self.user)
            except ApiError:
                self.requeue()
                return

    # ----------------------------------------------------------------- helpers
    def _set_claim_status(self, pvc: dict[str, Any], status: dict[str, Any]) -> None:
        meta = pvc["metadata"]

        def change(obj: dict[str, Any]) -> None:
            obj["status"] = status

        try:
            self.twin.store.mutate("PersistentVolumeClaim", meta.get("namespace"), meta["name"], change,
                                   status=True, user=self.user)
        except ApiError:
            self.requeue()
            return

    def _drop_finalizer(self, kind: str, ns: str | None, name: str, finalizer: str) -> None:
        def change(obj: dict[str, Any]) -> None:
            rest = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
            if rest:
                obj["metadata"]["finalizers"] = rest
            else:
                obj["metadata"].pop("finalizers", None)

        try:
            self.twin.store.mutate(kind, ns, name, change, user=self.user)
        except ApiError:
            self.requeue()
            return

    def _periodic_event(self, obj: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        """Events the controller re-emits on each resync (their count grows every 15 s)."""
        key = (obj["metadata"].get("uid", ""), reason)
        last = self._last_event.get(key)
        now = self.twin.clock.now
        if last is not None and now - last < RESYNC_SECONDS:
            # Still wanted: the next run at or after the resync re-emits it.
            self._resync_due = min(self._resync_due, last + RESYNC_SECONDS)
            return
        self._last_event[key] = now
        self._resync_due = min(self._resync_due, now + RESYNC_SECONDS)
        self.twin.events.record(obj, event_type, reason, message, component=PV_CONTROLLER)


def _pv_fits_node(twin: Twin, pv: dict[str, Any], node_name: str) -> bool:
    from sregym.twin.workloads.placement import node_info, node_selector_term_matches

    required = get_path(pv, "spec", "nodeAffinity", "required")
    if not required:
        return True
    node = twin.store.peek("Node", None, node_name)
    if node is None:
        return False
    info = node_info(node)
    return any(node_selector_term_matches(t, info) for t in required.get("nodeSelectorTerms") or [])


def _provisioned_volume(name: str, pvc: dict[str, Any], sc: dict[str, Any], provisioner: str,
                        class_name: str) -> dict[str, Any]:
    meta = pvc["metadata"]
    spec = pvc.get("spec") or {}
    size = get_path(spec, "resources", "requests", "storage", default="1Gi")
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name,
                     "annotations": {ANN_PROVISIONED_BY: provisioner,
                                     "volume.kubernetes.io/provisioner-deletion-secret-name": "",
                                     "volume.kubernetes.io/provisioner-deletion-secret-namespace": ""},
                     "finalizers": [PV_PROTECTION]},
        "spec": {
            "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
            "capacity": {"storage": size},
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace"),
                         "name": meta["name"], "uid": meta.get("uid"), "apiVersion": "v1",
                         "resourceVersion": meta.get("resourceVersion")},
            "csi": {"driver": provisioner, "volumeHandle": name, "fsType": "ext4",
                    "volumeAttributes": {"storage.kubernetes.io/csiProvisionerIdentity": provisioner}},
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "storageClassName": class_name,
            "volumeMode": spec.get("volumeMode") or "Filesystem",
        },
        "status": {"phase": "Bound"},
    }


@controller
class AttachDetachController(Controller):
    """Attach every volume a scheduled pod needs to its node; refuse a second node for RWO."""

    name = "attachdetach-controller"
    order = 75
    user = "system:serviceaccount:kube-system:attachdetach-controller"
    quiet_kinds = QUIET_KINDS  # a function of pods, claims, volumes and attachments; no timers

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._users = claim_users(twin)
        # (pv, node) pairs whose Multi-Attach error was already reported (reported once).
        self._reported: set[tuple[str, str]] = set()

    def reconcile(self) -> None:
        store = self.twin.store
        desired: dict[tuple[str, str], list[dict[str, Any]]] = {}
        volumes: dict[str, dict[str, Any]] = {}
        for ns, name in sorted(self._users.pods):
            pod = store.peek("Pod", ns, name)
            if pod is None or not pod_uses_volumes(pod):
                continue
            node = pod["spec"]["nodeName"]
            for _vol, claim in claim_volumes(pod):
                pvc = store.peek("PersistentVolumeClaim", ns, claim)
                pv = bound_volume(self.twin, pvc) if pvc is not None else None
                if pv is None or not is_attachable(pv):
                    continue
                volumes[pv["metadata"]["name"]] = pv
                desired.setdefault((pv["metadata"]["name"], node), []).append(pod)
        actual: dict[tuple[str, str], dict[str, Any]] = {}
        for va in store.scan("VolumeAttachment"):
            pv_name = get_path(va, "spec", "source", "persistentVolumeName")
            if pv_name:
                actual[(pv_name, get_path(va, "spec", "nodeName") or "")] = va
        if not desired and not actual:
            return
        for key, va in sorted(actual.items()):
            if key not in desired:
                self._detach(key, va)
                actual.pop(key)
        # Oldest user first, so the pod that asked first keeps a contested RWO volume.
        order = sorted(desired, key=lambda k: min(
            (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]) for p in desired[k]))
        for key in order:
            if key in actual:
                self._reported.discard(key)
                continue
            pv = volumes[key[0]]
            if not multi_attach_allowed(pv):
                others = [n for (v, n) in actual if v == key[0] and n != key[1]]
                if others:
                    if key not in self._reported:
                        self._report_multi_attach(pv, key[1], desired[key], others, desired)
                        self._reported.add(key)
                    continue
            va = self._attach(pv, key[1], desired[key])
            if va is not None:
                actual[key] = va
                self._reported.discard(key)
        self._reported &= set(desired)

    def _attach(self, pv: dict[str, Any], node: str, pods: list[dict[str, Any]]) -> dict[str, Any] | None:
        driver = get_path(pv, "spec", "csi", "driver") or ""
        pv_name = pv["metadata"]["name"]
        va = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
              "metadata": {"name": attachment_name(pv, node),
                           "annotations": {"csi.alpha.kubernetes.io/node-id": node}},
              "spec": {"attacher": driver, "nodeName": node, "source": {"persistentVolumeName": pv_name}},
              "status": {"attached": True}}
        try:
            created = self.twin.store.create(va, keep_status=True, user=self.user)
        except ApiError:
            self.requeue()
            return None
        entry = {"name": unique_volume_name(pv), "devicePath": ""}

        def add(obj: dict[str, Any]) -> None:
            attached = [a for a in get_path(obj, "status", "volumesAttached", default=None) or []
                        if a.get("name") != entry["name"]]
            obj.setdefault("status", {})["volumesAttached"] = sorted(
                [*attached, entry], key=lambda a: a["name"])

        with contextlib.suppress(ApiError):
            self.twin.store.mutate("Node", None, node, add, status=True, user=self.user)
        for pod in pods:
            self.twin.events.normal(pod, "SuccessfulAttachVolume",
                                    f'AttachVolume.Attach succeeded for volume "{pv_name}"',
                                    component=ATTACH_CONTROLLER)
        return created

    def _detach(self, key: tuple[str, str], va: dict[str, Any]) -> None:
        pv_name, node = key
        try:
            self.twin.store.delete("VolumeAttachment", None, va["metadata"]["name"], user=self.user)
        except ApiError:
            self.requeue()
            return
        pv = self.twin.store.peek("PersistentVolume", None, pv_name)
        unique = unique_volume_name(pv) if pv is not None else None

        def remove(obj: dict[str, Any]) -> None:
            attached = get_path(obj, "status", "volumesAttached", default=None) or []
            keep = [a for a in attached if a.get("name") != unique
                    and not str(a.get("name", "")).endswith(f"^{pv_name}")]
            if keep:
                obj["status"]["volumesAttached"] = keep
            else:
                obj.get("status", {}).pop("volumesAttached", None)

        try:
            self.twin.store.mutate("Node", None, node, remove, status=True, user=self.user)
        except ApiError:
            self.requeue()
            return

    def _report_multi_attach(self, pv: dict[str, Any], node: str, waiting: list[dict[str, Any]],
                             others: list[str], desired: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
        """`reportMultiAttachError`: each waiting pod learns which pods in its namespace hold the
        volume; pods of other namespaces are only counted."""
        pv_name = pv["metadata"]["name"]
        holders = [p for n in sorted(others) for p in desired.get((pv_name, n), [])]
        for pod in waiting:
            ns = pod["metadata"].get("namespace")
            if not holders:
                msg = "Volume is already exclusively attached to one node and can't be attached to another"
            else:
                local = [p["metadata"]["name"] for p in holders if p["metadata"].get("namespace") == ns]
                foreign = len(holders) - len(local)
                if local:
                    msg = f"Volume is already used by pod(s) {', '.join(local)}"
                    if foreign:
                        msg += f" and {foreign} pod(s) in different namespaces"
                else:
                    msg = f"Volume is already used by {foreign} pod(s) in different namespaces"
            self.twin.events.warning(pod, "FailedAttachVolume",
                                     f'Multi-Attach error for volume "{pv_name}" {msg}',
                                     component=ATTACH_CONTROLLER)
