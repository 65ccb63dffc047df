"""One view of the container's tree for the tools that walk it (`find`, `du`, `stat`, `cp -r`).

The exec's `ContainerFS` knows directories, symlinks, modes and mtimes; the session's `files`
dict knows what the shell wrote or removed since. `TreeView` merges the two: a file the session
created appears (with its parent directories), one it removed is gone, contents are the
session's. Symlinks are not followed unless asked, as `find -P` and `du` do by default.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from sregym.twin.node.shell import Invocation
from sregym.twin.userland.fs import ContainerFS, normpath


@dataclass
class Entry:
    kind: str  # "file" | "dir" | "link"
    size: int
    mode: int
    mtime: float
    target: str = ""


class TreeView:
    def __init__(self, call: Invocation) -> None:
        self.call = call
        self.files = call.ctx.files
        fs = call.ctx.extras.get("fs")
        self.fs: ContainerFS | None = fs if isinstance(fs, ContainerFS) else None
        self.now = call.now
        self.entries: dict[str, Entry] = {"/": Entry("dir", 4096, 0o755, self.now)}
        if self.fs is not None:
            for path, node in self.fs.nodes.items():
                if node.kind == "file" and path not in self.files:
                    continue  # removed by the session
                content = self.files.get(path, node.content) if node.kind == "file" else ""
                size = len(content.encode("utf-8", "surrogateescape")) if node.kind == "file" else node.size
                mtime = node.mtime if content == node.content else self.now
                self.entries[path] = Entry(node.kind, size, node.mode, mtime, node.target)
        for path, content in self.files.items():
            if path in self.entries or (self.fs is not None and self.fs.lookup(path) is not None):
                continue
            self.entries[path] = Entry("file", len(content.encode("utf-8", "surrogateescape")), 0o644,
                                       self.now)
            parent = posixpath.dirname(path)
            while parent not in self.entries:
                self.entries[parent] = Entry("dir", 4096, 0o755, self.now)
                parent = posixpath.dirname(parent)
        self._children: dict[str, list[str]] = {}
        for path in self.entries:
            if path != "/":
                self._children.setdefault(posixpath.dirname(path), []).append(posixpath.basename(path))
        for names in self._children.values():
            names.sort()

    def resolve(self, path: str, follow: bool = True) -> str | None:
        """The real path of an absolute `path`, or None if it does not exist."""
        path = normpath(path)
        if self.fs is not None:
            real = self.fs.resolve(path, follow_last=follow)
            if real is not None and real in self.entries:
                return real
        return path if path in self.entries else None

    def get(self, path: str, follow: bool = True) -> Entry | None:
        real = self.resolve(path, follow)
        return self.entries.get(real) if real is not None else None

    def children(self, real: str) -> list[str]:
        return self._children.get(real, [])

    def remove(self, real: str) -> None:
        """Delete an entry (and what is under it) from the session and the tree."""
        prefix = real.rstrip("/") + "/"
        # A name read through a link being removed goes alone; a real file takes its aliases along.
        links = tuple(p for p, e in self.entries.items() if e.kind == "link" and (p == real or p.startswith(prefix)))
        through = links + tuple(link + "/" for link in links)
        for path in [p for p in self.files if p == real or p.startswith(prefix)]:
            if path.startswith(through):
                dict.pop(self.files, path, None)
            else:
                self.files.pop(path, None)
        if self.fs is not None:
            self.fs.remove_tree(real)
        for path in [p for p in self.entries if p == real or p.startswith(prefix)]:
            del self.entries[path]
        siblings = self._children.get(posixpath.dirname(real))
        if siblings and posixpath.basename(real) in siblings:
            siblings.remove(posixpath.basename(real))


def remove_file(call: Invocation, path: str) -> None:
    """Unlink one file (an absolute path) from the session and from the exec's tree."""
    call.ctx.files.pop(path, None)
    fs = call.ctx.extras.get("fs")
    if isinstance(fs, ContainerFS):
        real = fs.resolve(path, follow_last=False)
        if real is not None and fs.nodes.get(real) is not None and fs.nodes[real].kind != "dir":
            del fs.nodes[real]
