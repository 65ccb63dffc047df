"""An exec's `files` map that resolves symbolic links, like the kernel's path lookup.

Most tools read and write `ctx.files` (path -> content) directly, so links must work there, not
only in `ls`: `cat /tmp/l` where `/tmp/l -> /tmp/a`, `echo y > /tmp/l` (writes `/tmp/a`),
`cat /bin/x` on a merged-/usr image where `/bin -> usr/bin`. The map stores contents under real
paths plus, for iteration (`grep -r`, `tar`), one entry per link path that reads as a file (its
*alias*). A lookup of a path it does not hold resolves the path through the tree's links; a write
lands on the real file and refreshes its aliases; removing a file removes its aliases (links to it
dangle, as they do on a real filesystem), removing a link removes only the link.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import Any

from sregym.twin.userland.fs import MAX_LINK_DEPTH, ContainerFS, normpath
from sregym.twin.userland.vfiles import VirtualFiles


def real_path(fs: ContainerFS, path: str, *, follow_last: bool = True) -> str | None:
    """Where `path` really is: links in every existing component followed; components that do
    not exist yet are kept as written (the place a write would create). None when links loop."""
    parts = [p for p in normpath(path).split("/") if p]
    parts.reverse()
    nodes = fs.nodes
    current = ""
    depth = 0
    while parts:
        part = parts.pop()
        if part == "..":
            current = current.rsplit("/", 1)[0]
            continue
        if part == ".":
            continue
        candidate = current + "/" + part
        node = nodes.get(candidate)
        if node is None:
            parts.reverse()
            return "/".join([candidate, *parts])
        if node.kind == "link" and (parts or follow_last):
            depth += 1
            if depth > MAX_LINK_DEPTH:
                return None
            target = node.target
            if target.startswith("/"):
                current = ""
            parts.extend(reversed([p for p in target.split("/") if p]))
            continue
        current = candidate
    return current or "/"


def link_prefixes(fs: ContainerFS) -> tuple[str, ...]:
    """Paths under which a lookup crosses a symlink (each link, and `link/` for what is below)."""
    links = [path for path, node in dict.items(fs.nodes) if node.kind == "link"]
    return tuple(links) + tuple(path + "/" for path in links)


class LinkedFiles(VirtualFiles):
    """`ShellContext.files` of an exec: reads and writes follow the tree's symlinks."""

    fs: ContainerFS | None = None
    _aliases: dict[str, str] | None = None  # link path -> its resolved target

    def _real(self, key: Any, follow_last: bool = True) -> str | None:
        if self.fs is None or not isinstance(key, str) or not key.startswith("/"):
            return None
        if self.provider is not None and self.provider.handles(key):
            return None  # `/proc` and the cgroup files: the provider resolves its own links
        return real_path(self.fs, key, follow_last=follow_last)

    def _held(self, key: Any) -> str | None:
        """The stored key that answers `key`: itself, or its real path."""
        if dict.__contains__(self, key):
            return key
        real = self._real(key)
        return real if real is not None and real != key and dict.__contains__(self, real) else None

    # ------------------------------------------------------------------ reads
    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        held = self._held(key)
        if held is not None:
            return dict.__getitem__(self, held)
        found = self._virtual(key)
        return default if found is None else found

    def __missing__(self, key: str) -> str:
        held = self._held(key)
        if held is not None:
            return dict.__getitem__(self, held)
        return super().__missing__(key)

    def __contains__(self, key: object) -> bool:
        return self._held(key) is not None or self._virtual(key) is not None

    # ----------------------------------------------------------------- writes
    def aliases(self, real: str) -> set[str]:
        """The link paths held in the map that resolve to `real` (a link to it, or a path
        through a link to one of its directories)."""
        if self.fs is None:
            return set()
        if self._aliases is None:  # each link's resolved target, until the links change
            self._aliases = {path: real_path(self.fs, path) or ""
                             for path, node in dict.items(self.fs.nodes) if node.kind == "link"}
        found = set()
        for link, target in self._aliases.items():
            if target == real:
                candidate = link
            elif target and real.startswith(target + "/"):
                candidate = link + real[len(target):]
            else:
                continue
            if candidate != real and dict.__contains__(self, candidate):
                found.add(candidate)
        return found

    def relinked(self, path: str | None = None) -> None:
        """The tree's links changed (`ln -s`): forget the alias index; a new link at `path` that
        reads as a file gets its alias entry."""
        self._aliases = None
        if path is not None and self.fs is not None:
            real = self._real(path)
            if real is not None and real != path and dict.__contains__(self, real):
                dict.__setitem__(self, path, dict.__getitem__(self, real))

    def __setitem__(self, key: str, value: str) -> None:
        real = self._real(key) or key
        dict.__setitem__(self, real, value)
        for alias in self.aliases(real):
            dict.__setitem__(self, alias, value)

    def _remove(self, key: str) -> bool:
        """Unlink `key`: a link goes alone; a file takes the names that read it through links."""
        parent = self._real(posixpath.dirname(key)) if key.startswith("/") else None
        real = posixpath.join(parent, posixpath.basename(key)) if parent else key
        node = self.fs.nodes.get(real) if self.fs is not None else None
        found = False
        for path in {key, real} | (set() if node is not None and node.kind == "link" else self.aliases(real)):
            if dict.__contains__(self, path):
                dict.__delitem__(self, path)
                found = True
        return found

    def __delitem__(self, key: str) -> None:
        if not self._remove(key):
            raise KeyError(key)

    def pop(self, key: str, *default: Any) -> Any:  # type: ignore[override]
        held = self._held(key)
        if held is None:
            if default:
                return default[0]
            raise KeyError(key)
        value = dict.__getitem__(self, held)
        self._remove(key)
        return value

    def setdefault(self, key: str, default: str = "") -> str:  # type: ignore[override]
        held = self._held(key)
        if held is not None:
            return dict.__getitem__(self, held)
        self[key] = default
        return default

    def update(self, *args: Any, **kwargs: str) -> None:  # type: ignore[override]
        items: Iterable[tuple[str, str]] = (dict(*args, **kwargs)).items()
        for key, value in items:
            self[key] = value


class LinkedDirs(set[str]):
    """`ShellContext.directories()` of an exec: a path through a link to a directory is one too
    (`cd /tmp/dl/sub`, `test -d /bin/`)."""

    fs: ContainerFS | None = None

    def __contains__(self, path: object) -> bool:
        if set.__contains__(self, path):
            return True
        if self.fs is None or not isinstance(path, str) or not path.startswith("/"):
            return False
        real = real_path(self.fs, path)
        return real is not None and real != path and set.__contains__(self, real)


def link_files(ctx: Any) -> None:
    """Make the exec's `files` resolve links through its tree (keeps the `/proc` provider)."""
    files = LinkedFiles(ctx.files)
    files.provider = getattr(ctx.files, "provider", None)
    files.fs = ctx.fs
    ctx.files = files


__all__ = ["LinkedDirs", "LinkedFiles", "link_files", "link_prefixes", "real_path"]
