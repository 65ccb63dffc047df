"""Hooking the computed `/proc` and `/sys/fs/cgroup` into an exec's view of files.

Commands read `ctx.files` (a path -> content map) and `ls` walks `ctx.extras["fs"]`. Both get the
same `ProcProvider`: the map answers lookups of `/proc/...` paths it does not hold by asking the
provider, without ever storing them, so iterating the map (what the exec wrote, what `find`
walks) never sees them and nothing of `/proc` reaches the container's writable layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.userland.procfiles import ProcProvider

if TYPE_CHECKING:
    from sregym.twin.userland.context import ExecContext


class VirtualFiles(dict[str, str]):
    """`ShellContext.files` with the provider's files readable by path."""

    provider: ProcProvider | None = None

    def _virtual(self, key: Any) -> str | None:
        provider = self.provider
        if provider is None or not isinstance(key, str) or not provider.handles(key):
            return None
        return provider.read(key)

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        found = super().get(key)
        if found is None:
            found = self._virtual(key)
        return default if found is None else found

    def __missing__(self, key: str) -> str:
        found = self._virtual(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or self._virtual(key) is not None


def attach_proc(ctx: ExecContext) -> None:
    """Give the exec's file map and tree one provider computing `/proc` from the runtime."""
    provider = ProcProvider(ctx)
    files = VirtualFiles(ctx.files)
    files.provider = provider
    ctx.files = files
    if ctx.fs is not None:
        ctx.fs.nodes.provider = provider
    ctx.extras["fs"] = ctx.fs


__all__ = ["VirtualFiles", "attach_proc"]
