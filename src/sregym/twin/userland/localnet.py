"""Connections a container makes to its own pod: `127.0.0.1`, `::1`, `localhost`, its pod IP.

The kernel routes them over the pod's loopback: no Service, NetworkPolicy or NetworkChaos is
crossed (those act on eth0), so only "does a container of this pod listen on that port" decides.
A port nobody listens on is refused at once (RST from the local stack), which curl reports as
exit 7 in well under a millisecond. An accepted connection is answered by the listening process
through the same `dataplane.http.answer` every other client gets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.connect import ConnectResult

if TYPE_CHECKING:
    from sregym.twin.node.shell import Invocation

LOOPBACK_MS = 0.04


def is_local(call: Invocation, ip: str) -> bool:
    pod_ip = str(((call.ctx.pod or {}).get("status") or {}).get("podIP") or "")
    return ip.startswith("127.") or ip in ("::1", "localhost") or (bool(pod_ip) and ip == pod_ip)


def local_connection(call: Invocation, ip: str, port: int, protocol: str = "TCP") -> ConnectResult | None:
    """The attempt to reach ip:port inside the pod, or None when ip is not the pod's own."""
    if call.ctx.pod is None or call.ctx.twin is None or not is_local(call, ip):
        return None
    pod = call.ctx.pod
    pod_ip = str((pod.get("status") or {}).get("podIP") or "")
    runtime = call.ctx.twin.services.runtime
    found = runtime.listener(pod_ip, int(port), protocol) if runtime is not None and pod_ip else None
    raw = ConnectResult(ok=found is not None, dst_pod=pod, dst_ip=pod_ip, host=ip, port=int(port),
                        resolved_ip=ip, target_port=int(port), src_ip=ip, latency_ms=LOOPBACK_MS,
                        error=None if found is not None else "refused", stage="loopback",
                        message="" if found is not None else f"dial tcp {ip}:{port}: connect: connection refused")
    return raw


def local_http(call: Invocation, conn: ConnectResult, scheme: str, port: int, path: str, method: str) -> Any:
    """What the pod's own listener answers (`dataplane.http.HttpResult`), or None without a data
    plane (the caller then uses what the socket declares)."""
    from sregym.twin.dataplane.http import answer

    plane = call.ctx.twin.services.dataplane if call.ctx.twin is not None else None
    if plane is None or not hasattr(plane, "proc_at"):
        return None
    target, _, query = path.partition("?")
    return answer(plane, conn, scheme, port, target or "/", method=method, query=query)


__all__ = ["is_local", "local_connection", "local_http"]
