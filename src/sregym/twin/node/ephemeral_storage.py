"""A pod's local ephemeral storage, as the kubelet's summary API reports it.

The kubelet's eviction manager decides on the pod stats cAdvisor and the CRI give it: each
container's writable layer (`rootfs`, the files a container wrote outside its volumes) and its
log files (`logs`, `/var/log/pods/...`), and the pod's local volumes (disk-backed `emptyDir`s;
a `medium: Memory` emptyDir is tmpfs and counts as memory). The pod's ephemeral storage is their
sum. This module is the one place that computes it, from what the twin already records:

- the space files written from a container hold on the node's root disk (`chaos.diskio` claims,
  taken by `dd`, `fallocate`, shell redirections and the databases' writes), split by the
  container's volume mounts into its writable layer and its emptyDir volumes; those bytes are
  already on the node disk's used bytes, so `df` and node-exporter move with them;
- the container's log lines, in the CRI's on-disk format (timestamp, stream, tag, text). The log
  store keeps a bounded number of lines per instance, so logs stay small; they are part of the
  node's baseline usage and are not added to the disk again.

`release_pod(twin, pod)` gives a terminated pod's writable layers and emptyDirs back to the node
(the kubelet removes an evicted pod's containers and tears down its emptyDir volumes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import get_path

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

NODEFS = "sda"  # the node's root filesystem: writable layers, logs, emptyDirs
CRI_LINE_OVERHEAD = len("2024-06-01T00:00:00.000000000Z ") + len(" F ") + 1  # + stream + text


@dataclass
class ContainerStorage:
    rootfs: int = 0  # bytes in the writable layer
    logs: int = 0  # bytes of its log files
    inodes: int = 0  # files it created in its writable layer

    @property
    def used(self) -> int:
        """What the eviction manager compares with a container's `ephemeral-storage` limit."""
        return self.rootfs + self.logs


@dataclass
class PodStorage:
    containers: dict[str, ContainerStorage] = field(default_factory=dict)
    volumes: dict[str, int] = field(default_factory=dict)  # disk-backed emptyDir name -> bytes
    volume_inodes: int = 0

    @property
    def total(self) -> int:
        """The pod's ephemeral storage: writable layers, logs and local volumes."""
        return sum(c.used for c in self.containers.values()) + sum(self.volumes.values())

    @property
    def inodes(self) -> int:
        return sum(c.inodes for c in self.containers.values()) + self.volume_inodes


def _volume_of(pod: dict[str, Any], container: str, path: str) -> tuple[str, dict[str, Any]] | None:
    """The volume a container's path lies on (the longest mount prefix), or None for its
    writable layer."""
    volumes = {v.get("name"): v for v in get_path(pod, "spec", "volumes", default=[]) or []}
    best: tuple[int, str] | None = None
    for c in [*(get_path(pod, "spec", "containers", default=[]) or []),
              *(get_path(pod, "spec", "initContainers", default=[]) or [])]:
        if c.get("name") != container:
            continue
        for mount in c.get("volumeMounts") or []:
            root = (mount.get("mountPath") or "").rstrip("/")
            if (path == root or path.startswith(root + "/")) and (best is None or len(root) > best[0]):
                best = (len(root), str(mount.get("name")))
    if best is None:
        return None
    return best[1], volumes.get(best[1]) or {}


def _log_bytes(twin: Twin, container_ids: list[str]) -> int:
    from sregym.twin.node.logs import log_store

    store = log_store(twin)
    return sum(CRI_LINE_OVERHEAD + len(line.stream) + len(line.text.encode())
               for cid in container_ids for line in store.lines(cid))


def pod_storage(twin: Twin, pod: dict[str, Any]) -> PodStorage:
    """The pod's local ephemeral storage usage, per container and per emptyDir volume."""
    from sregym.twin.chaos.diskio import diskio_of
    from sregym.twin.node.runtime import runtime_of

    meta = pod.get("metadata") or {}
    uid = str(meta.get("uid", ""))
    out = PodStorage()
    names = [c.get("name") for c in get_path(pod, "spec", "containers", default=[]) or []]
    for name in names:
        out.containers[str(name)] = ContainerStorage()
    for v in get_path(pod, "spec", "volumes", default=[]) or []:
        empty = v.get("emptyDir")
        if empty is not None and (empty or {}).get("medium") != "Memory":
            out.volumes[str(v.get("name"))] = 0
    for (claim_uid, container, path), (_, device, nbytes) in diskio_of(twin).claims.items():
        if claim_uid != uid or device != NODEFS or nbytes <= 0:
            continue
        found = _volume_of(pod, container, path)
        if found is None:
            usage = out.containers.setdefault(container, ContainerStorage())
            usage.rootfs += nbytes
            usage.inodes += 1
        elif found[0] in out.volumes:
            out.volumes[found[0]] += nbytes
            out.volume_inodes += 1
    runtime = runtime_of(twin).pod(meta.get("namespace", "default"), meta.get("name", ""))
    if runtime is not None:
        for name, record in runtime.containers.items():
            if name not in out.containers:
                continue
            ids = [i.container_id for i in (record.previous, record.current) if i is not None]
            out.containers[name].logs = _log_bytes(twin, ids)
    return out


def release_pod(twin: Twin, pod: dict[str, Any]) -> int:
    """Free what a terminated pod held on the node's root disk (writable layers and emptyDirs,
    one inode per file); returns the bytes freed."""
    from sregym.twin.chaos.diskio import diskio_of
    from sregym.twin.chaos.nodeos import nodeos_of

    uid = str(get_path(pod, "metadata", "uid", default=""))
    diskio = diskio_of(twin)
    freed = 0
    for key, (node, device, nbytes) in list(diskio.claims.items()):
        if key[0] != uid or device != NODEFS:
            continue
        diskio.release(*key)
        disk = nodeos_of(twin).node(node).disks.get(device)
        if disk is not None:
            disk.inodes_used = max(0, disk.inodes_used - 1)
        freed += max(0, nbytes)
    return freed
