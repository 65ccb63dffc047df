"""A container's memory-backed filesystems: `/dev/shm` and `emptyDir: {medium: Memory}` mounts.

containerd gives every pod sandbox a `/dev/shm` tmpfs of 64 MiB (`shm` in `df`), unless an
emptyDir with `medium: Memory` is mounted there, which the kubelet sizes to its `sizeLimit`, else
to the pod's memory limit (every container limited), else to the node's allocatable memory.
Writes past a tmpfs's size fail with ENOSPC. What is written there is RAM: the pages are charged
to the writer's cgroup, so they count into the container's working set and `memory.current`
(and towards its OOM kill) for as long as the files stay.

What is not modelled: the kubelet's eviction of a pod whose memory-backed emptyDir exceeds its
`sizeLimit` (writes stop at the limit instead), and the sandbox-wide lifetime of `/dev/shm`
(its files here live as long as the container instance, like its writable layer).
"""

from __future__ import annotations

import weakref
from typing import Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import memory_bytes

SHM_SIZE = 64 << 20  # containerd's default /dev/shm
SHM = "/dev/shm"

# twin -> {(namespace, pod, container): (container id, bytes held in its tmpfs mounts)}
_CHARGES: weakref.WeakKeyDictionary[Any, dict[tuple[str, str, str], tuple[str, int]]] = \
    weakref.WeakKeyDictionary()


def _container(pod: dict[str, Any], name: str) -> dict[str, Any]:
    for item in get_path(pod, "spec", "containers", default=None) or []:
        if item.get("name") == name:
            return item
    return {}


def _memory_volume_size(twin: Any, pod: dict[str, Any], volume: dict[str, Any]) -> int:
    limit = (volume.get("emptyDir") or {}).get("sizeLimit")
    if limit:
        return memory_bytes(str(limit))
    limits = [get_path(c, "resources", "limits", "memory", default=None)
              for c in get_path(pod, "spec", "containers", default=None) or []]
    if limits and all(limits):
        return sum(memory_bytes(str(v)) for v in limits)
    node = twin.store.peek("Node", None, str(get_path(pod, "spec", "nodeName", default="") or "")) \
        if twin is not None else None
    allocatable = get_path(node or {}, "status", "allocatable", "memory", default="16Gi")
    return memory_bytes(str(allocatable)) or 16 << 30


def tmpfs_mounts(twin: Any, pod: dict[str, Any], container: str) -> dict[str, tuple[str, int]]:
    """Mount point -> (df's filesystem name, size in bytes) of each memory-backed mount."""
    mounts: dict[str, tuple[str, int]] = {SHM: ("shm", SHM_SIZE)}  # replaced by a volume mounted there
    volumes = {v.get("name"): v for v in get_path(pod, "spec", "volumes", default=None) or []}
    for mount in _container(pod, container).get("volumeMounts") or []:
        volume = volumes.get(mount.get("name")) or {}
        if (volume.get("emptyDir") or {}).get("medium") == "Memory":
            path = str(mount.get("mountPath") or "").rstrip("/") or "/"
            mounts[path] = ("tmpfs", _memory_volume_size(twin, pod, volume))
    return mounts


def mount_of(mounts: dict[str, tuple[str, int]], path: str) -> str | None:
    """The memory-backed mount holding `path`, if any (the deepest one)."""
    found = None
    for mount in mounts:
        if path.startswith(mount + "/") and (found is None or len(mount) > len(found)):
            found = mount
    return found


def used_bytes(files: dict[str, str], mount: str) -> int:
    prefix = mount + "/"
    return sum(len(content.encode("utf-8", "surrogateescape")) for path, content in files.items()
               if path.startswith(prefix))


def held_bytes(ctx: Any) -> int:
    """Bytes the exec'd container's tmpfs mounts hold (shmem of its cgroup)."""
    return sum(used_bytes(ctx.files, mount) for mount in ctx.extras.get("tmpfs") or {})


def room(ctx: Any, path: str, extra: int | None) -> bool:
    """Whether `extra` more bytes fit in the tmpfs holding `path`; with None, whether `path` is
    on a tmpfs at all (False off tmpfs either way)."""
    mounts = ctx.extras.get("tmpfs") or {}
    mount = mount_of(mounts, path)
    if mount is None:
        return False
    return extra is None or used_bytes(ctx.files, mount) + extra <= mounts[mount][1]


def tmpfs_rows(ctx: Any) -> list[tuple[str, int, int, str]]:
    """`df` rows (filesystem, size, used, mount point): /dev/shm first, then emptyDir mounts."""
    mounts = ctx.extras.get("tmpfs") or tmpfs_mounts(ctx.twin, ctx.pod or {}, ctx.container)
    return [(name, size, min(size, used_bytes(ctx.files, mount)), mount)
            for mount, (name, size) in mounts.items()]


def shm_row(ctx: Any) -> tuple[str, int, int, str]:
    """The `/dev/shm` row of `df`."""
    return next(row for row in tmpfs_rows(ctx) if row[3] == SHM)


def charge(ctx: Any) -> None:
    """After an exec: what the container's tmpfs mounts hold is memory of its cgroup."""
    twin, pod = ctx.twin, ctx.pod
    runtime = twin.services.runtime if twin is not None else None
    if runtime is None or pod is None:
        return
    meta = pod.get("metadata") or {}
    key = (str(meta.get("namespace", "")), str(meta.get("name", "")), ctx.container)
    instance = runtime.instance(*key)
    if instance is None:
        return
    held = held_bytes(ctx)
    charges = _CHARGES.get(twin)
    if charges is None:
        if not held:
            return
        charges = _CHARGES.setdefault(twin, {})
        runtime.add_usage_hook(lambda ns, name, container, inst, table=charges: _usage(table, ns, name, container,
                                                                                        inst))
    charges[key] = (instance.container_id, held)
    pod_runtime = runtime.pod(key[0], key[1])
    if pod_runtime is not None:
        pod_runtime.next_wake = twin.clock.now


def _usage(table: dict[tuple[str, str, str], tuple[str, int]], namespace: str, pod: str, container: str,
           instance: Any) -> tuple[float, float]:
    held = table.get((namespace, pod, container))
    if held is None or held[0] != instance.container_id:
        return 0.0, 0.0
    return 0.0, float(held[1])


__all__ = ["SHM", "SHM_SIZE", "charge", "held_bytes", "mount_of", "room", "shm_row", "tmpfs_mounts", "tmpfs_rows", "used_bytes"]
