"""What a program yields instead of acting: output, sleeps, sockets opened and closed, memory use."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass


@dataclass(frozen=True)
class Output:
    """Bytes written to a stream ("stdout" or "stderr"); `text` may hold several lines."""

    stream: str
    text: str


@dataclass(frozen=True)
class Sleep:
    """Advance the program's own clock; `FOREVER` blocks until the container is killed."""

    seconds: float


@dataclass(frozen=True)
class Listen:
    """Start accepting TCP (or UDP) connections on a port.

    `http_paths`: None means the port is not HTTP (a probe's HTTP GET fails to parse a response);
    an empty tuple means every path answers 200; otherwise only those paths answer 200, others 404.
    `grpc_health`: the port serves grpc.health.v1 and reports SERVING.
    """

    port: int
    protocol: str = "TCP"
    http_paths: tuple[str, ...] | None = ()
    grpc_health: bool = False
    handler: str = ""  # a registered HTTP handler answers the port (dataplane/port_pages.py)
    # What the program prints and exits with when the port is already bound in its network
    # namespace (EADDRINUSE); empty means Go's `listen tcp :<port>: bind: address already in use`.
    bind_error: str = ""
    bind_exit_code: int = 1


@dataclass(frozen=True)
class Unlisten:
    port: int
    protocol: str = "TCP"


@dataclass(frozen=True)
class Usage:
    """The process's steady resource use from now on (None leaves a figure unchanged)."""

    memory_bytes: int | None = None
    cpu_cores: float | None = None


Effect = Output | Sleep | Listen | Unlisten | Usage
Program = Generator[Effect, None, int]
