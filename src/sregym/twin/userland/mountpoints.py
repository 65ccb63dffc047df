"""Which paths of an exec's tree are mount points, and which mounts are read-only.

Not everything in a container is its overlayfs: the kubelet bind-mounts `/etc/hosts`,
`/etc/hostname`, `/etc/resolv.conf` and `/dev/termination-log`, and each volumeMount is its own
filesystem. ConfigMap, Secret, downwardAPI and projected volumes are always mounted read-only
(since Kubernetes 1.10), others when the mount says `readOnly: true`. So `rm` of a mounted config
key fails with "Read-only file system" and `rm` of a mount point with "Device or resource busy",
as an engineer trying to edit a pod's config in place would see.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.userland.fs import ALPINE, SA_DIR, image_family, normpath

KUBELET_FILES = ("/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/dev/termination-log")
_API_DATA = ("configMap", "secret", "downwardAPI", "projected")


def mounts(ctx: Any) -> dict[str, bool]:
    """Mount point -> read-only, for the exec's container."""
    found: dict[str, bool] = dict.fromkeys(KUBELET_FILES, False) if ctx.pod is not None else {}
    pod = ctx.pod or {}
    volumes = {v.get("name"): v for v in get_path(pod, "spec", "volumes", default=[]) or [] if isinstance(v, dict)}
    container: dict[str, Any] = {}
    for group in ("containers", "initContainers", "ephemeralContainers"):
        for item in get_path(pod, "spec", group, default=[]) or []:
            if isinstance(item, dict) and item.get("name") == ctx.container:
                container = item
    for mount in container.get("volumeMounts") or []:
        if not isinstance(mount, dict) or not mount.get("mountPath"):
            continue
        volume = volumes.get(mount.get("name")) or {}
        found[normpath(str(mount["mountPath"]))] = bool(mount.get("readOnly")) or any(k in volume for k in _API_DATA)
    if ctx.files.get(SA_DIR + "/token") is not None and SA_DIR not in found:
        found[SA_DIR] = True
    return found


def read_only(ctx: Any, real: str) -> bool:
    """Whether `real` lies inside a read-only mount (the mount point itself is not inside)."""
    return any(ro and real.startswith(point.rstrip("/") + "/") for point, ro in mounts(ctx).items())


def busy(ctx: Any, real: str) -> bool:
    """Whether `real` is a mount point (unlinking it is EBUSY)."""
    return real in mounts(ctx)


def ebusy(ctx: Any) -> str:
    """EBUSY's text in the image's C library (musl's on Alpine, glibc's otherwise)."""
    return "Resource busy" if image_family(str(ctx.extras.get("image", ""))) == ALPINE else "Device or resource busy"


EROFS = "Read-only file system"

__all__ = ["EROFS", "KUBELET_FILES", "busy", "ebusy", "mounts", "read_only"]
