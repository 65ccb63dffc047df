"""The kubelet's eviction decisions about local storage, for the eviction manager (`eviction.py`).

Two paths, as in pkg/kubelet/eviction of kubelet 1.32:

- **local storage limits** (`local_storage_eviction`, every pass, before any node threshold and
  independent of node pressure): a pod whose disk-backed emptyDir is over its `sizeLimit`, whose
  ephemeral storage is over the sum of its containers' `limits.ephemeral-storage`, or one of whose
  containers (writable layer + logs) is over its own limit is evicted at once, in that order of
  checks, with the kubelet's messages. These evictions carry no `DisruptionTarget` condition (the
  kubelet passes none for them);
- **disk pressure** (`reclaim_disk`): under a met `nodefs.available` / `imagefs.available` (a kind
  node's image filesystem is its root disk) or `nodefs.inodesFree` threshold the kubelet first
  reclaims node-level resources — dead containers and unused images (`Attempting to delete unused
  images`) — and evicts only if the threshold is still met, one pod per pass, ranked like
  `rankDiskPressureFunc`: pods whose usage exceeds their ephemeral-storage requests first, then
  lower priority, then larger usage above requests (for inodes: more files).

Besides, the image garbage collector (`image_gc`, every 5 min) frees unused images when the image
filesystem is 85 % used or more, down to 80 %, and reports `FreeDiskSpaceFailed` when it cannot.
What a pod uses comes from `node.ephemeral_storage`; evicted pods give their writable layers and
emptyDirs back to the node (the kubelet removes an evicted pod's containers and volumes).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.twin.controllers.kubelet_quantity import decimal_text, quantity_text
from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import memory_bytes
from sregym.twin.node.ephemeral_storage import PodStorage, pod_storage, release_pod

if TYPE_CHECKING:
    from sregym.twin.chaos.nodeos import Disk
    from sregym.twin.controllers.eviction import EvictionManager
    from sregym.twin.node.kubelet_config import Threshold

IMAGE_GC_PERIOD = 300.0
IMAGE_GC_HIGH = 85  # --image-gc-high-threshold
IMAGE_GC_LOW = 80  # --image-gc-low-threshold
EMPTYDIR_MESSAGE = 'Usage of EmptyDir volume "{}" exceeds the limit "{}". '
CONTAINER_MESSAGE = 'Container {} exceeded its local ephemeral storage limit "{}". '
POD_MESSAGE = "Pod ephemeral local storage usage exceeds the total limit of containers {}. "
# Images the kubelet never removes: the sandbox image is pinned.
PINNED = ("registry.k8s.io/pause",)


def _float32(value: float) -> float:
    """A threshold percentage as the kubelet holds it (a float32)."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


@dataclass(frozen=True)
class DiskSignal:
    """One met disk threshold: what the kubelet reclaims and the numbers its message prints."""

    signal: str  # nodefs.available | imagefs.available | nodefs.inodesFree
    resource: str  # ephemeral-storage | inodes
    fraction: float
    capacity: int
    available: int
    quantity: int | None = None  # an absolute threshold (`nodefs.available: 2Gi`) instead of a fraction

    @property
    def threshold(self) -> int:
        if self.quantity is not None:
            return self.quantity
        return int(self.capacity * _float32(self.fraction))

    def met(self) -> bool:
        return self.available < self.threshold

    def message_head(self) -> str:
        available = decimal_text(self.available) if self.resource == "inodes" else quantity_text(self.available)
        return (f"The node was low on resource: {self.resource}. "
                f"Threshold quantity: {quantity_text(self.threshold)}, available: {available}. ")


def disk_signals(disk: Disk, thresholds: tuple[Threshold, ...]) -> list[DiskSignal]:
    """The disk thresholds met on the node's root filesystem, the one to reclaim first."""
    out = []
    for t in thresholds:
        if t.signal.endswith("inodesFree"):
            observed = DiskSignal(t.signal, "inodes", t.fraction, disk.inodes, disk.inodes_free, t.quantity)
        else:
            observed = DiskSignal(t.signal, "ephemeral-storage", t.fraction, disk.size_bytes, disk.avail_bytes,
                                  t.quantity)
        if observed.met():
            out.append(observed)
    return out


# ------------------------------------------------------------------ local storage limits
def _quantity(text: Any) -> int | None:
    if text in (None, ""):
        return None
    try:
        return memory_bytes(str(text))
    except (ValueError, TypeError):
        return None


def _limit_exceeded(pod: dict[str, Any], usage: PodStorage) -> str | None:
    """The kubelet's message if this pod is over one of its local storage limits."""
    for volume in get_path(pod, "spec", "volumes", default=[]) or []:
        empty = volume.get("emptyDir")
        if empty is None or (empty or {}).get("medium") == "Memory":
            continue
        size = _quantity((empty or {}).get("sizeLimit"))
        used = usage.volumes.get(str(volume.get("name")))
        if size and used is not None and used > size:
            return EMPTYDIR_MESSAGE.format(volume.get("name"), empty["sizeLimit"])
    limits = [(c.get("name"), get_path(c, "resources", "limits", "ephemeral-storage"))
              for c in get_path(pod, "spec", "containers", default=[]) or []]
    limits = [(name, text) for name, text in limits if _quantity(text) is not None]
    if limits:
        total = sum(_quantity(text) or 0 for _, text in limits)
        if usage.total > total:
            shown = str(limits[0][1]) if len(limits) == 1 else quantity_text(total)
            return POD_MESSAGE.format(shown)
    for name, text in limits:
        limit = _quantity(text) or 0
        container = usage.containers.get(str(name))
        if limit and container is not None and container.used > limit:
            return CONTAINER_MESSAGE.format(name, text)
    return None


def _has_local_limits(pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    if any(((v.get("emptyDir") or {}).get("sizeLimit")) for v in spec.get("volumes") or []):
        return True
    return any(get_path(c, "resources", "limits", "ephemeral-storage") for c in spec.get("containers") or [])


def local_storage_eviction(manager: EvictionManager, node: str) -> bool:
    """Evict every pod on `node` over a local storage limit; True if any was."""
    evicted = False
    for pod in manager.active_pods(node):
        if not _has_local_limits(pod):
            continue
        message = _limit_exceeded(pod, pod_storage(manager.twin, pod))
        if message is not None and manager.evict(pod, message, disruption=False):
            release_pod(manager.twin, pod)
            evicted = True
    return evicted


# -------------------------------------------------------------------- disk pressure
def _unused_images(manager: EvictionManager, node: str) -> list[dict[str, Any]]:
    obj = manager.twin.store.peek("Node", None, node) or {}
    used: set[str] = set()
    for pod in manager.twin.store.scan("Pod"):
        if get_path(pod, "spec", "nodeName") != node or get_path(pod, "status", "phase") in ("Succeeded", "Failed"):
            continue
        for c in [*(get_path(pod, "spec", "containers", default=[]) or []),
                  *(get_path(pod, "spec", "initContainers", default=[]) or [])]:
            used.add(str(c.get("image") or ""))
        for cs in get_path(pod, "status", "containerStatuses", default=[]) or []:
            used.update((str(cs.get("image") or ""), str(cs.get("imageID") or "")))
    out = []
    for image in get_path(obj, "status", "images", default=[]) or []:
        names = [str(n) for n in image.get("names") or []]
        short = {n.removeprefix("docker.io/library/").removeprefix("docker.io/") for n in names}
        if used & (set(names) | short) or any(n.startswith(PINNED) for n in names):
            continue
        out.append(image)
    return out


def delete_unused_images(manager: EvictionManager, node: str, *, wanted: int | None = None) -> int:
    """Remove unused images (oldest listed first) until `wanted` bytes are free (all without a
    target); their space goes back to the root disk. Returns the bytes freed."""
    victims, freed = [], 0
    for image in _unused_images(manager, node):
        if wanted is not None and freed >= wanted:
            break
        victims.append(tuple(image.get("names") or []))
        freed += int(image.get("sizeBytes") or 0)
    if not victims:
        return 0
    gone = set(victims)

    def drop(obj: dict[str, Any]) -> None:
        images = get_path(obj, "status", "images", default=[]) or []
        obj["status"]["images"] = [i for i in images if tuple(i.get("names") or []) not in gone]

    manager.post_status(node, drop)
    manager.nodeos.fill_disk(node, -freed)
    for names in victims:
        manager.nodeos.kubelet(node, f'"Removing image to free bytes" imageID="{names[0]}"',
                               source="image_gc_manager.go:487")
    return freed


def reclaim_disk(manager: EvictionManager, node: str, signals: list[DiskSignal],
                 thresholds: tuple[Threshold, ...]) -> None:
    """One pass under disk pressure: reclaim node-level resources, then evict one pod if the
    thresholds are still met."""
    first = signals[0]
    manager.nodeos.kubelet(node, '"Attempting to delete unused images"', source="image_gc_manager.go:434")
    delete_unused_images(manager, node)
    disk = manager.nodeos.disk(node, "sda")
    still = disk_signals(disk, thresholds)
    if not still:
        manager.nodeos.kubelet(node, '"Eviction manager: able to reduce resource pressure without evicting pods." '
                               f'resourceName="{first.resource}"', source="eviction_manager.go:383")
        return
    first = next((s for s in still if s.signal == first.signal), still[0])
    manager.nodeos.kubelet(node, f'"Eviction manager: must evict pod(s) to reclaim" resourceName="{first.resource}"',
                           source="eviction_manager.go:394")
    for pod, usage in _ranked(manager, node, first.resource):
        message = first.message_head()
        if first.resource != "inodes":
            for c in get_path(pod, "spec", "containers", default=[]) or []:
                name = str(c.get("name"))
                used = usage.containers[name].used if name in usage.containers else 0
                request_text = get_path(c, "resources", "requests", "ephemeral-storage")
                request = _quantity(request_text) or 0
                if used > request:
                    message += (f"Container {name} was using {quantity_text(used)}, request is "
                                f"{request_text if request else '0'}, has larger consumption of ephemeral-storage. ")
        if manager.evict(pod, message, disruption=True):
            release_pod(manager.twin, pod)
            return


def _ranked(manager: EvictionManager, node: str, resource: str) -> list[tuple[dict[str, Any], PodStorage]]:
    ranked = []
    for pod in manager.active_pods(node):
        usage = pod_storage(manager.twin, pod)
        if resource == "inodes":
            used, requested = usage.inodes, 0
        else:
            used = usage.total
            requested = sum(_quantity(get_path(c, "resources", "requests", "ephemeral-storage")) or 0
                            for c in get_path(pod, "spec", "containers", default=[]) or [])
        meta = pod["metadata"]
        key = (0 if used > requested else 1, int(get_path(pod, "spec", "priority") or 0), -(used - requested),
               meta.get("namespace", ""), meta["name"])
        ranked.append((key, pod, usage))
    ranked.sort(key=lambda item: item[0])
    return [(pod, usage) for _, pod, usage in ranked]


# ----------------------------------------------------------------------- image GC
def image_gc(manager: EvictionManager, node: str) -> None:
    """The image garbage collector's periodic pass over the image filesystem (the root disk)."""
    disk = manager.nodeos.disk(node, "sda")
    capacity, available = disk.size_bytes, disk.avail_bytes
    if capacity <= 0 or 100 - available * 100 // capacity < IMAGE_GC_HIGH:
        return
    amount = capacity * (100 - IMAGE_GC_LOW) // 100 - available
    freed = delete_unused_images(manager, node, wanted=amount)
    if freed < amount:
        obj = manager.twin.store.peek("Node", None, node)
        if obj is not None:
            manager.twin.events.warning(
                obj, "FreeDiskSpaceFailed",
                f"Failed to garbage collect required amount of images. Attempted to free {amount} bytes, "
                f"but only found {freed} bytes eligible to free.", component="kubelet", host=node)
