"""Device-scoped IOChaos: failing sectors that belong to the disk, not to the pod.

Chaos Mesh's IOChaos is a FUSE layer injected into the selected pods' mount namespaces: a pod
created after the experiment was applied is not affected, so recreating a pod "fixes" it. A
failing disk behaves differently — its bad sectors stay bad whichever pod mounts it next. The
twin models that with an opt-in on the IOChaos object (annotation `chaos.sregym.io/scope:
device`, set only on objects in the hidden chaos-mesh namespace): when a record of such an
experiment is injected, the volume the selected container has at `spec.volumePath` is resolved
to its backing disk — the PersistentVolume (`pv:<name>`), or for other volumes the pod's own
volume (`pod:<ns>/<pod>/<volume>`) — and every later file operation on that disk, from any pod,
gets the experiment's fault. The kernel of the node the PV is attached to (its VolumeAttachment)
logs the block-layer errors. Deleting (or pausing) the experiment clears the disk: it stands for
replacing the disk's sectors, so `recover` restores a healthy cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.injection import Injection
from sregym.twin.machinery.objects import get_path

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SCOPE_ANNOTATION = "chaos.sregym.io/scope"
DEVICE_SCOPE = "device"
DATA_DEVICE = "sdb"  # where the node's PersistentVolumes live (see nodeos.volume_device)


def is_device_scoped(obj: dict[str, Any]) -> bool:
    return get_path(obj, "metadata", "annotations", SCOPE_ANNOTATION) == DEVICE_SCOPE


def _mount_volume(pod: dict[str, Any], path: str, container: str | None = None) -> str | None:
    """The name of the pod volume mounted at (or above) `path`, longest mount path first."""
    best: tuple[int, str] | None = None
    for c in get_path(pod, "spec", "containers", default=[]) or []:
        if container is not None and c.get("name") != container:
            continue
        for mount in c.get("volumeMounts") or []:
            mount_path = (mount.get("mountPath") or "").rstrip("/") or "/"
            if path == mount_path or path.startswith(mount_path.rstrip("/") + "/") or mount_path == "/":
                if best is None or len(mount_path) > best[0]:
                    best = (len(mount_path), str(mount.get("name") or ""))
    return best[1] if best else None


def disk_key(twin: Twin, pod: dict[str, Any], path: str, container: str | None = None) -> str | None:
    """The disk behind `path` in the pod: `pv:<name>` for a bound claim, else the pod's volume;
    None when nothing is mounted there or the claim is not bound yet."""
    volume_name = _mount_volume(pod, path.rstrip("/") or "/", container)
    if volume_name is None:
        return None
    volume = next((v for v in get_path(pod, "spec", "volumes", default=[]) or []
                   if v.get("name") == volume_name), {})
    ns = get_path(pod, "metadata", "namespace", default="default")
    claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
    if claim:
        pvc = twin.store.peek("PersistentVolumeClaim", ns, claim)
        name = get_path(pvc or {}, "spec", "volumeName")
        if not name or get_path(pvc or {}, "status", "phase") != "Bound":
            return None
        return f"pv:{name}"
    return f"pod:{ns}/{get_path(pod, 'metadata', 'name', default='')}/{volume_name}"


@dataclass
class BadDisks:
    """Disks with failing sectors: disk key → the device-scoped experiment that broke them."""

    twin: Twin
    by_disk: dict[str, Injection] = field(default_factory=dict)
    resolved: set[tuple[str, str]] = field(default_factory=set)  # (experiment uid, "ns/pod")

    def sync(self, injections: list[Injection]) -> bool:
        """Follow the published injections; returns True when the set of bad disks changed."""
        live = {i.uid: i for i in injections if i.kind == "IOChaos" and i.scope == DEVICE_SCOPE}
        changed = False
        for disk in sorted(self.by_disk):
            current = live.get(self.by_disk[disk].uid)
            if current is None:
                del self.by_disk[disk]
                changed = True
            elif current is not self.by_disk[disk]:
                self.by_disk[disk] = current  # same experiment, republished
        self.resolved = {r for r in self.resolved if r[0] in live}
        for uid in sorted(live):
            injection = live[uid]
            for pod_key in sorted(injection.pods):
                if (uid, pod_key) in self.resolved:
                    continue
                ns, name = pod_key.split("/", 1)
                pod = self.twin.store.peek("Pod", ns, name)
                if pod is None:
                    continue
                containers = sorted(injection.containers.get(pod_key) or ()) or [None]
                path = injection.spec.get("volumePath") or "/"
                for container in containers:
                    disk = disk_key(self.twin, pod, path, container)
                    if disk is not None:
                        break
                if disk is None:
                    continue  # claim not bound yet: try again next tick
                self.resolved.add((uid, pod_key))
                if self.by_disk.get(disk) is not injection:
                    self.by_disk[disk] = injection
                    changed = True
        return changed

    def lookup(self, pod: dict[str, Any], path: str, container: str | None = None) -> Injection | None:
        if not self.by_disk:
            return None
        disk = disk_key(self.twin, pod, path, container)
        return self.by_disk.get(disk) if disk is not None else None

    def attached_nodes(self, disk: str) -> list[str]:
        """Nodes that have the disk attached now (CSI VolumeAttachments; for a pod's own volume
        the pod's node)."""
        if disk.startswith("pv:"):
            pv = disk[3:]
            return sorted({str(get_path(va, "spec", "nodeName")) for va in self.twin.store.scan("VolumeAttachment")
                           if get_path(va, "spec", "source", "persistentVolumeName") == pv
                           and get_path(va, "status", "attached") and get_path(va, "spec", "nodeName")})
        ns, rest = disk[5:].split("/", 1)
        pod = self.twin.store.peek("Pod", ns, rest.split("/", 1)[0])
        node = get_path(pod or {}, "spec", "nodeName")
        return [str(node)] if node else []
