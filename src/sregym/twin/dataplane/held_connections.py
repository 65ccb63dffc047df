"""Long-lived TCP connections that in-cluster programs open and keep open.

Why: a client that holds thousands of idle connections costs nothing per request, yet every one
of them is an open file in the accepting process and a conntrack entry on each node it crosses.
Two kinds of outage come from that alone: the server reaches its per-process open-file limit
(`RLIMIT_NOFILE`, see `open_files.py`) and its `accept()` fails with EMFILE, or the client's node
fills its conntrack table and drops every new flow (`chaos/node_kernel.py`).

A program registers what it holds with `hold(twin, container_id, pod, flows)`; each `Flow` is a
number of connections to one listening address with the nodes at both ends. Holdings of a
container that is no longer running are forgotten when read, so a deleted client releases its
connections the moment its container stops, as the kernel closes a dead process's sockets.
`version` changes whenever the table does (the router's cross-tick cache reads it).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


@dataclass(frozen=True)
class Flow:
    """`count` established connections from a pod on `src_node` to `dst_ip:dst_port`."""

    dst_ip: str
    dst_port: int
    src_node: str
    dst_node: str
    count: int


@dataclass
class _Holding:
    namespace: str
    pod: str
    container: str
    flows: tuple[Flow, ...]


class HeldConnections:
    """Per-twin table of held connections, keyed by the holding container's id."""

    def __init__(self, twin: Twin) -> None:
        self._twin = weakref.ref(twin)
        self._holdings: dict[str, _Holding] = {}
        self.version = 0

    def hold(self, container_id: str, namespace: str, pod: str, container: str,
             flows: tuple[Flow, ...]) -> None:
        """Replace what `container_id` holds with `flows` (empty: release everything)."""
        current = self._holdings.get(container_id)
        if current is not None and current.flows == flows:
            return
        if flows:
            self._holdings[container_id] = _Holding(namespace, pod, container, flows)
        else:
            self._holdings.pop(container_id, None)
        self.version += 1

    def _live(self) -> list[Flow]:
        """Every flow of a container still running (a stopped one's sockets are closed)."""
        twin = self._twin()
        runtime = twin.services.runtime if twin is not None else None
        flows: list[Flow] = []
        for container_id in sorted(self._holdings):
            holding = self._holdings[container_id]
            instance = runtime.instance(holding.namespace, holding.pod, holding.container) \
                if runtime is not None else None
            if instance is None or not instance.running or instance.container_id != container_id:
                del self._holdings[container_id]
                self.version += 1
                continue
            flows.extend(holding.flows)
        return flows

    def inbound(self, ip: str, port: int) -> int:
        """Connections held to the listener at ip:port (each an open socket of its process)."""
        return sum(f.count for f in self._live() if f.dst_ip == ip and f.dst_port == port)

    def node_flows(self, node: str) -> int:
        """Conntrack entries the held connections keep on `node` (one per flow through it)."""
        return sum(f.count for f in self._live() if node in (f.src_node, f.dst_node))

    def active(self) -> bool:
        return bool(self._holdings)


_TABLES: weakref.WeakKeyDictionary[Any, HeldConnections] = weakref.WeakKeyDictionary()


def held_connections(twin: Twin) -> HeldConnections:
    """The twin's table (made on first use)."""
    table = _TABLES.get(twin)
    if table is None:
        table = HeldConnections(twin)
        _TABLES[twin] = table
    return table


def version(twin: Twin) -> int:
    table = _TABLES.get(twin)
    return -1 if table is None else table.version


__all__ = ["Flow", "HeldConnections", "held_connections", "version"]
