"""Whether the shell may open a path for writing (`> file`, `>> file`) in an exec's tree.

A redirection into a directory that does not exist, onto a directory, or into a ConfigMap or
Secret volume fails in a real container before the command runs ("cannot create
/etc/config/app.conf: Read-only file system"); an engineer who tries to patch a mounted config
in place learns from that that the ConfigMap is what must change. The shell asks this check
through `ctx.extras["open_write"]` and words the answer itself (dash, ash and bash differ).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import Any

from sregym.twin.userland.linkedfiles import real_path
from sregym.twin.userland.mountpoints import mounts


def write_check(ctx: Any) -> Callable[[str], str | None]:
    """A check for `ctx`: absolute path -> None when it can be opened for writing, else the
    errno's name ("ENOENT", "ENOTDIR", "EISDIR", "EROFS")."""
    read_only: tuple[str, ...] | None = None

    def check(path: str) -> str | None:
        nonlocal read_only
        fs = ctx.fs
        if fs is None or path.startswith(("/proc/", "/sys/", "/dev/")):
            return None  # the kernel's files answer for themselves
        real = real_path(fs, path)
        if real is None:
            return "ELOOP"
        node = fs.nodes.get(real)
        if node is not None and node.kind == "dir":
            return "EISDIR"
        parent = posixpath.dirname(real)
        above = fs.nodes.get(parent)
        if above is None or above.kind != "dir":
            dirs = ctx.directories()
            if parent not in dirs:
                if above is not None or real in dirs:
                    return "ENOTDIR"
                probe = parent
                while probe != "/" and probe not in dirs and fs.nodes.get(probe) is None \
                        and not dict.__contains__(ctx.files, probe):
                    probe = posixpath.dirname(probe)
                return "ENOTDIR" if probe != "/" and probe not in dirs else "ENOENT"
        if read_only is None:
            read_only = tuple(point.rstrip("/") + "/" for point, ro in mounts(ctx).items() if ro)
        if read_only and real.startswith(read_only):
            return "EROFS"
        return None

    return check


__all__ = ["write_check"]
