"""A container's writable layer as overlayfs keeps it: a diff over the image and volume tree.

What an engineer changes inside a container must still be there at the next `kubectl exec` into
the same container instance: files written or edited, directories made (`mkdir /tmp/x`, empty
ones too), symlinks (`ln -s`), modes (`chmod +x`), mtimes (`touch`), and deletions, including
of the image's own files (`rm /etc/nginx/conf.d/default.conf`), which overlayfs records as
whiteouts. So an exec snapshots the tree it starts from (image + volumes + what the main process
wrote) before the layer is applied, and at its end the layer becomes the diff between that base
and the session's final tree. The layer stays a `{path: content}` dict of its regular files (the
contract byte accounting relies on, see `layer_bytes`) and carries the other entries and the
whiteouts beside it.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace
from typing import Any

from sregym.twin.userland.fs import ContainerFS, Node
from sregym.twin.userland.linkedfiles import link_prefixes
from sregym.twin.userland.mountpoints import mounts

Snapshot = dict[str, tuple[str, str, int, str, float]]


class Layer(dict[str, str]):
    """The regular files of a writable layer (path -> content) plus every changed entry with
    its metadata (`nodes`: files, directories, links) and the deleted paths (`whiteouts`)."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: dict[str, Node] = {}
        self.whiteouts: set[str] = set()


def layer_bytes(layer: dict[str, str] | None) -> int:
    """Bytes the layer's regular files hold (what a container's writable layer uses on disk)."""
    return sum(len(content.encode("utf-8", "surrogateescape")) for content in (layer or {}).values())


def kept(path: str) -> bool:
    """Whether a path belongs to the writable layer: not the kernel's or the runtime's
    pseudo-filesystems (`/proc`, `/sys`, `/dev`), except the `/dev/shm` tmpfs."""
    return path != "/" and (path.startswith("/dev/shm/") or not path.startswith(("/dev/", "/proc/", "/sys/")))


def _key(node: Node) -> tuple[str, str, int, str, float]:
    return (node.kind, node.content, node.mode, node.target, node.mtime)


def snapshot(fs: ContainerFS) -> Snapshot:
    """The tree as it stands (before the layer goes over it)."""
    return {path: _key(node) for path, node in dict.items(fs.nodes) if kept(path)}


def session_tree(fs: ContainerFS, files: dict[str, str], now: float) -> dict[str, Node]:
    """The session's final tree: the exec's `ContainerFS` (directories, links, modes, mtimes)
    with the contents of `files`; a file node whose path left `files` was removed, a path only
    in `files` was created (with its parent directories)."""
    state: dict[str, Node] = {}
    for path, node in dict.items(fs.nodes):
        if not kept(path):
            continue
        if node.kind == "file":
            if not dict.__contains__(files, path):
                continue
            content = dict.__getitem__(files, path)
            state[path] = node if content == node.content else replace(node, content=content, mtime=now)
        else:
            state[path] = node
    prefixes = link_prefixes(fs)
    for path, content in dict.items(files):
        if path in state or not kept(path) or not path.startswith("/"):
            continue
        if path.startswith(prefixes) or fs.nodes.get(path) is not None:
            continue  # read through a link: its real path is counted on its own
        state[path] = Node("file", content=content, mode=0o644, mtime=now)
        parent = posixpath.dirname(path)
        while parent != "/" and parent not in state:
            state[parent] = Node("dir", mode=0o755, mtime=now)
            parent = posixpath.dirname(parent)
    return state


def diff(base: Snapshot, state: dict[str, Node]) -> Layer:
    """The layer that turns `base` into `state`."""
    layer = Layer()
    for path, node in state.items():
        if base.get(path) != _key(node):
            layer.nodes[path] = replace(node)
            if node.kind == "file":
                layer[path] = node.content
    removed = {path for path in base if path not in state}
    layer.whiteouts = {path for path in removed if posixpath.dirname(path) not in removed}
    return layer


def apply_layer(fs: ContainerFS, layer: dict[str, str]) -> None:
    """Put a writable layer over the tree: whiteouts first, then entries, parents first."""
    if not isinstance(layer, Layer):  # a bare {path: content} map: files only
        fs.overlay(layer)
        return
    for path in sorted(layer.whiteouts):
        fs.remove_tree(path)
    for path in sorted(layer.nodes):
        node = layer.nodes[path]
        existing = dict.get(fs.nodes, path)
        if existing is not None and existing.kind == "dir" and node.kind != "dir":
            fs.remove_tree(path)
        fs.nodes[path] = replace(node)


def layer_after(ctx: Any) -> Layer | None:
    """The container's writable layer once this exec ends; None when it differs in nothing."""
    base = ctx.extras.get("base_tree")
    if ctx.fs is None or base is None:
        return None
    layer = diff(base, session_tree(ctx.fs, ctx.files, ctx.start_time))
    # A read-only volume (ConfigMap, Secret ...) is not the layer's: a tool that wrote there
    # anyway leaves nothing behind, and the volume shows its source's data again next time.
    frozen = tuple(point.rstrip("/") + "/" for point, ro in mounts(ctx).items() if ro)
    if frozen:
        for path in [p for p in layer.nodes if p.startswith(frozen)]:
            del layer.nodes[path]
            layer.pop(path, None)
        layer.whiteouts = {p for p in layer.whiteouts if not p.startswith(frozen)}
    return layer if layer.nodes or layer.whiteouts else None


__all__ = ["Layer", "apply_layer", "diff", "kept", "layer_after", "layer_bytes", "session_tree", "snapshot"]
