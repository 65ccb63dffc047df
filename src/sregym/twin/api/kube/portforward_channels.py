"""`pods/portforward` over the WebSocket channel protocol (`v4.channel.k8s.io`), which the official
Python client's `kubernetes.stream.portforward` speaks (kubectl uses SPDY, see `pod_portforward`).

The ports come in the query (`?ports=5000,6379`, the API server's PodPortForwardOptions); port
number i gets data channel 2i and error channel 2i+1, and the kubelet opens each by writing the
port as two little-endian bytes on both channels. Each port is one TCP connection into the pod
for the whole session: client bytes on the data channel go to `localhost:PORT` in the pod
(`dataplane.loopback`) and its answer comes back on the same channel; a port nobody listens on
gets the kubelet's error text on its error channel. When every port's connection has ended the
server closes the WebSocket, which the client reads as EOF.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket

from sregym.errors import BadRequest
from sregym.twin.dataplane.loopback import LoopbackConnection, listens, refused_message, sandbox_id

if TYPE_CHECKING:
    from sregym.twin.api.kube.handlers import RequestContext

PROTOCOLS = ("v4.channel.k8s.io",)


def requested_ports(params: Any) -> list[int]:
    """The `ports` (or kubelet-style `port`) query values, validated like PodPortForwardOptions."""
    ports: list[int] = []
    for key in ("ports", "port"):
        for value in params.getlist(key):
            for text in str(value).split(","):
                if not text.strip().isdigit() or not 0 < int(text) < 65536:
                    raise BadRequest(f'invalid port "{text}"')
                ports.append(int(text))
    if not ports:
        raise BadRequest('query parameter "port" is required')
    return ports


async def serve_channels(websocket: WebSocket, ctx: RequestContext, pod: dict[str, Any],
                         ports: list[int]) -> None:
    """Run one channel-protocol session on an accepted WebSocket until the client or every port
    is done."""
    conns: dict[int, LoopbackConnection | None] = {}
    for i, port in enumerate(ports):
        head = struct.pack("<H", port)
        await websocket.send_bytes(bytes([2 * i]) + head)
        await websocket.send_bytes(bytes([2 * i + 1]) + head)
        if listens(ctx.twin, pod, port):
            conns[i] = LoopbackConnection(ctx.twin, pod, port)
        else:
            conns[i] = None
            text = f"error forwarding port {port} to pod {sandbox_id(pod)}, uid : {refused_message(pod, port)}"
            await websocket.send_bytes(bytes([2 * i + 1]) + text.encode())
    while any(c is not None and not c.closed for c in conns.values()):
        message = await websocket.receive()
        if message.get("type") == "websocket.disconnect":
            return
        frame = message.get("bytes") or b""
        if not frame or frame[0] % 2 or frame[0] // 2 not in conns:
            continue
        conn = conns[frame[0] // 2]
        if conn is None or conn.closed:
            continue
        reply = conn.feed(frame[1:])
        if reply:
            await websocket.send_bytes(bytes([frame[0]]) + reply)
    await websocket.close()


__all__ = ["PROTOCOLS", "requested_ports", "serve_channels"]
