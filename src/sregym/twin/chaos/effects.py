"""What an active experiment does to one flow, request, name lookup or file operation.

These are the answers of `twin.services.chaos` to the data plane (D1), DNS (D5) and the
datastores (D2). They describe the *cause* as Chaos Mesh configures it (netem numbers, an errno,
an HTTP rewrite); the caller turns it into symptoms (timeouts, retries, error logs).
"""

from __future__ import annotations

import errno as errno_codes
import os
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class NetworkEffect:
    """netem/tc/iptables effect on the path between two pods, both directions combined.

    `delay_ms`/`jitter_ms` add to the round trip (a delay shaped in both directions counts twice);
    `loss`, `duplicate`, `corrupt` are packet fractions in [0, 1]; `partition` means packets are
    dropped (connections time out); `bandwidth` is the tightest rate limit in bytes per second.
    """

    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss: float = 0.0
    duplicate: float = 0.0
    corrupt: float = 0.0
    partition: bool = False
    bandwidth: float | None = None
    sources: tuple[str, ...] = ()  # "<namespace>/<name>" of the experiments involved

    def combine(self, other: NetworkEffect) -> NetworkEffect:
        bandwidths = [b for b in (self.bandwidth, other.bandwidth) if b is not None]
        return NetworkEffect(
            delay_ms=self.delay_ms + other.delay_ms,
            jitter_ms=self.jitter_ms + other.jitter_ms,
            loss=1 - (1 - self.loss) * (1 - other.loss),
            duplicate=1 - (1 - self.duplicate) * (1 - other.duplicate),
            corrupt=1 - (1 - self.corrupt) * (1 - other.corrupt),
            partition=self.partition or other.partition,
            bandwidth=min(bandwidths) if bandwidths else None,
            sources=tuple(dict.fromkeys((*self.sources, *other.sources))),
        )


@dataclass(frozen=True)
class HttpEffect:
    """An HTTPChaos rule matching a request to the destination pod.

    `target` is "Request" or "Response". `abort` drops the connection (the client sees a reset /
    EOF); `delay_ms` holds the request or response; `replace` and `patch` hold Chaos Mesh's rewrite
    blocks as written in the CR (`code`, `headers`, `body` base64, `path`, `method`, `queries`).
    """

    target: str = "Request"
    abort: bool = False
    delay_ms: float = 0.0
    replace: dict[str, Any] = field(default_factory=dict)
    patch: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    match_code: int | None = None  # `code`: a Response rule only rewrites responses with this status
    response_headers: dict[str, Any] = field(default_factory=dict)

    @property
    def status_code(self) -> int | None:
        code = self.replace.get("code")
        return int(code) if code is not None else None


@dataclass(frozen=True)
class IOEffect:
    """An IOChaos fault on a path of a selected container's volume.

    `latency_ms` delays each matching operation; `errno` (when non-zero) fails it with that error,
    for a `percent` share of operations limited to `methods` (empty = every file operation).
    """

    action: str = "latency"
    latency_ms: float = 0.0
    errno: int = 0
    percent: float = 100.0
    methods: tuple[str, ...] = ()
    attr: dict[str, Any] = field(default_factory=dict)
    volume_path: str = ""
    source: str = ""

    @property
    def error_name(self) -> str:
        """`EIO` for 5."""
        return errno_codes.errorcode.get(self.errno, f"E{self.errno}") if self.errno else ""

    @property
    def message(self) -> str:
        """The libc text a program prints: `input/output error` style as Go's syscall.Errno."""
        return os.strerror(self.errno).lower() if self.errno else ""

    def applies_to(self, method: str | None) -> bool:
        return not self.methods or method is None or method in self.methods
