"""The time a client pod's own clock shows: the twin's time plus its node's offset and TimeChaos.

Why: a TLS client checks a certificate's validity window against the clock of the machine it
runs on, not against true time. A worker whose time sync stopped and whose clock moved
(`date -s`, `NodeOS.set_clock_offset`) makes every valid certificate look expired (or not yet
valid) to the clients on it, while the same certificate verifies fine from every other node.
`tls_validity.check_validity` takes that local time; the data plane's handshakes, `curl` in a pod
and in-pod checkers ask here for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


def clock_offset(twin: Twin, pod: dict[str, Any] | None, container: str | None = None) -> float:
    """Seconds `pod`'s clock is off the twin's: its node's offset plus any TimeChaos on it."""
    if pod is None:
        return 0.0
    chaos = twin.services.chaos
    if chaos is not None and hasattr(chaos, "time_offset"):
        return float(chaos.time_offset(pod, container))
    nodeos = twin.services.nodeos
    node = (pod.get("spec") or {}).get("nodeName") or ""
    return float(nodeos.clock_offset(node)) if nodeos is not None and node else 0.0


def client_now(twin: Twin, pod: dict[str, Any] | None, now: float | None = None,
               container: str | None = None) -> float:
    """What `pod`'s clock reads at the twin's `now` (default: the twin's current time)."""
    base = twin.clock.now if now is None else now
    return base + clock_offset(twin, pod, container)


__all__ = ["client_now", "clock_offset"]
