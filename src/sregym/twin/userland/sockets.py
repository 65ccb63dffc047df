"""Which network namespace's socket counts an exec sees: its pod's, or the node's from a host
shell (`nsenter -t 1 -n`, a hostNetwork pod). `node.sockstat` computes both."""

from __future__ import annotations

from typing import Any

from sregym.twin.node.sockstat import SockStat, node_sockstat, pod_sockstat
from sregym.twin.userland.node_host import host_node


def namespace_sockstat(ctx: Any) -> SockStat:
    twin = ctx.twin
    if twin is None:
        return SockStat()
    host = host_node(ctx) or (
        ((ctx.pod or {}).get("spec") or {}).get("hostNetwork") and ctx.node)
    if host:
        return node_sockstat(twin, str(host))
    meta = (ctx.pod or {}).get("metadata") or {}
    return pod_sockstat(twin, str(meta.get("namespace", "")), str(meta.get("name", "")))


__all__ = ["namespace_sockstat"]
