"""A process's own open-file limit (`RLIMIT_NOFILE`) against the sockets it has open.

Why: `ulimit -n 1024` in a wrapper command (`sh -c 'ulimit -n 1024 && exec frontend'`) gives one
process a limit far below containerd's 1048576, and nothing on the node looks wrong: the node's
file table (`fs.file-max`, ENFILE) has room, only that process fails. Once its open descriptors
(its own baseline plus every connection held to it, `held_connections.py`) reach the limit,
`accept4()` fails with EMFILE: the kernel still completes handshakes into the listen backlog, so
clients connect and then wait for an answer that never comes (their requests time out), and a Go
net/http server logs `http: Accept error: accept tcp [::]:5000: accept4: too many open files;
retrying in 5ms`, doubling the delay up to 1 s.

The limit is what the container's shell left in `ctx.extras["rlimits"]` (`userland/ulimit.py`)
before it exec'd the server; without a `ulimit` it is containerd's default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.held_connections import held_connections

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

CONTAINERD_NOFILE = 1048576
# Descriptors a Go service has open before any client connects: stdio, the epoll fd, its
# listeners, pooled gRPC/HTTP client connections and the tracer's exporter.
BASE_OPEN_FILES = 40
ACCEPT_STAGE = "accept"


def nofile_limit(instance: Any) -> int:
    """The soft RLIMIT_NOFILE the container's main process runs with."""
    limits = instance.ctx.extras.get("rlimits") or {}
    value = limits.get("n", CONTAINERD_NOFILE)
    return CONTAINERD_NOFILE if value is None else int(value)


def open_files(twin: Twin, instance: Any, ip: str) -> int:
    """Descriptors the process has open: its baseline plus the connections held to its ports."""
    table = held_connections(twin)
    held = sum(table.inbound(ip, port) for port, _protocol in instance.listening) if table.active() else 0
    return BASE_OPEN_FILES + held


def accept_blocked(twin: Twin, instance: Any, ip: str) -> bool:
    """Whether the process is at its open-file limit, so `accept()` fails with EMFILE."""
    limit = nofile_limit(instance)
    if limit >= CONTAINERD_NOFILE or not held_connections(twin).active():
        return False
    return open_files(twin, instance, ip) >= limit


__all__ = ["ACCEPT_STAGE", "BASE_OPEN_FILES", "CONTAINERD_NOFILE", "accept_blocked", "nofile_limit", "open_files"]
