"""The exec's merged tree as the shell's path lookup and globbing read it.

The image and volume tree (`ContainerFS`: directories, symlinks, modes, the `/proc` provider)
plus the session's `files` map: a file the session wrote is there (with its parents), one it
removed is gone although its node may still be in the tree (`TreeView` applies the same rule).
"""

from __future__ import annotations

import posixpath
from operator import methodcaller
from typing import Any

from sregym.twin.userland.fs import ContainerFS


def _stored(files: Any, path: str) -> bool:
    return dict.__contains__(files, path)


def list_dir(fs: ContainerFS, files: Any, path: str) -> list[str] | None:
    """Names in directory `path` (symlinks followed), None when it is not a directory."""
    real = fs.resolve(path)
    node = fs.nodes.get(real) if real is not None else None
    if node is None:
        return _written_dir(files, path)
    if node.kind != "dir":
        return None
    names = set()
    for name in fs.children(real):  # type: ignore[arg-type]
        child = fs.nodes.get(posixpath.join(real, name))  # type: ignore[arg-type]
        if child is not None and child.kind == "file" and not _stored(files, posixpath.join(real, name)) \
                and not (fs.nodes.provider is not None and fs.nodes.provider.handles(posixpath.join(real, name))):
            continue  # removed by the session
        names.add(name)
    for prefix in {path.rstrip("/") + "/", real.rstrip("/") + "/"}:  # type: ignore[union-attr]
        for key in dict.keys(files):
            if key.startswith(prefix):
                names.add(key[len(prefix):].split("/", 1)[0])
    names.discard("")
    return sorted(names)


def _written_dir(files: Any, path: str) -> list[str] | None:
    """A directory that exists only because the session wrote files under it."""
    prefix = path.rstrip("/") + "/"
    names = {key[len(prefix):].split("/", 1)[0] for key in dict.keys(files) if key.startswith(prefix)}
    names.discard("")
    return sorted(names) if names else None


def _written_under(files: Any, path: str) -> bool:
    """Whether `_written_dir(files, path)` would name anything: the same test without collecting
    the names. A PATH search asks it for every directory of PATH that is not in the image, on every
    command a loop runs, so the stored keys are filtered in C and only the matches looked at."""
    prefix = path.rstrip("/") + "/"
    size = len(prefix)
    return any(len(key) > size and key[size] != "/"
               for key in filter(methodcaller("startswith", prefix), dict.keys(files)))


def entry(fs: ContainerFS, files: Any, path: str) -> tuple[str, int] | None:
    """(kind, mode) of `path` with symlinks followed: kind "dir" or "file"; None if missing."""
    found = fs.lookup(path)
    if found is not None:
        real, node = found
        if node.kind == "dir":
            return "dir", node.mode
        if node.kind == "file" and (_stored(files, real) or _stored(files, path)
                                    or (fs.nodes.provider is not None and fs.nodes.provider.handles(real))
                                    or path in files):
            return "file", node.mode
        if node.kind == "file":
            return None  # removed by the session
    if path in files:
        return "file", 0o644
    return ("dir", 0o755) if _written_under(files, path) else None
