"""The pod's network namespace: every container of a pod shares one, so a port bound by one
container cannot be bound by another (EADDRINUSE).

Why: a sidecar that listens on the main container's port is a classic broken rollout. Whichever
container binds second fails at start, logs its bind error, exits and crash-loops, and the pod never
becomes Ready. The kubelet asks `port_holder` before a process's `Listen` takes effect and, when the
port is taken, ends the process with `bind_failure`'s text and exit code.
"""

from __future__ import annotations

from sregym.twin.node.runtime import PodRuntime
from sregym.twin.node.shell import Listen


def port_holder(runtime: PodRuntime, container: str, port: int, protocol: str) -> str | None:
    """The other running container of the pod listening on `port`/`protocol`, if any."""
    for name, record in runtime.containers.items():
        instance = record.current
        if name == container or instance is None or not instance.running:
            continue
        if (port, protocol) in instance.listening:
            return name
    return None


def go_bind_error(port: int, protocol: str = "TCP") -> str:
    """The error Go's `net.Listen` returns for a taken port (most servers print it as is)."""
    return f"listen {protocol.lower()} :{port}: bind: address already in use"


def bind_failure(listen: Listen) -> tuple[str, int]:
    """What the process prints (stderr) and exits with when its bind fails."""
    text = listen.bind_error or go_bind_error(listen.port, listen.protocol)
    return (text if text.endswith("\n") else text + "\n"), listen.bind_exit_code
