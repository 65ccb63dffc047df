"""`pods/portforward`: what `kubectl port-forward` talks to.

kubectl 1.32 opens `GET .../pods/NAME/portforward` as a WebSocket with the subprotocol
`SPDY/3.1+portforward.k8s.io` (feature `PortForwardWebsockets`, on by default since 1.31): the
API server's tunnelling handler then carries a SPDY/3.1 session (`spdy.py`) in the WebSocket's
binary messages, exactly the session the kubelet would speak over a direct `Upgrade: SPDY/3.1`.
(The SPDY-only transport is an HTTP/1.1 connection hijack that the twin's ASGI server cannot
do; a plain POST gets the API server's answer for a request that was not upgraded.)

For every local connection kubectl opens two streams with the same `requestid` and `port`
headers: `streamtype: error` (which it half-closes at once and reads to the end) and
`streamtype: data` (the TCP byte stream). The server replies to each SYN_STREAM, connects to
`localhost:PORT` inside the pod (`dataplane.loopback`) and relays bytes until either side is
done, then closes both streams. When nothing listens on the port the kubelet writes its error to
the error stream (`error forwarding port 9999 to pod <sandbox>, uid : failed to execute
portforward in network namespace ...: connection refused`), which kubectl 1.32 prints as
`an error occurred forwarding 8080 -> 9999: ...` before it exits with `lost connection to pod`.
PINGs (client-go sends one every 10 s) are echoed. The Python client's channel protocol
(`v4.channel.k8s.io`) is served by `portforward_channels`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from sregym.errors import ApiError, BadRequest, not_found
from sregym.twin.api.kube import portforward_channels, spdy
from sregym.twin.api.kube.encoding import error_response
from sregym.twin.api.kube.handlers import RequestContext, subresource, websocket_subresource
from sregym.twin.api.kube.pod_exec import deny
from sregym.twin.dataplane.loopback import LoopbackConnection, listens, refused_message, sandbox_id
from sregym.twin.machinery.objects import get_path

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

TUNNEL_PREFIX = "SPDY/3.1+"
PROTOCOL = "portforward.k8s.io"


def preflight(ctx: RequestContext, namespace: str | None, name: str) -> dict[str, Any]:
    """What the API server checks before it upgrades (the pod exists and has a node)."""
    pod = ctx.twin.store.peek("Pod", namespace or "default", name)
    if pod is None:
        raise not_found("pods", name)
    if not get_path(pod, "spec", "nodeName"):
        raise BadRequest(f"pod {name} does not have a host assigned")
    return pod


@dataclass
class _Forward:
    """One forwarded connection: its two streams and the pod-side connection."""

    port: int
    error_id: int = 0
    data_id: int = 0
    conn: LoopbackConnection | None = None
    done: bool = False
    port_error: str = ""


class PortForwardSession:
    """The server half of one SPDY session: feed it the client's bytes, it calls `send`."""

    def __init__(self, ctx: RequestContext, pod: dict[str, Any],
                 send: Callable[[bytes], Awaitable[None]]) -> None:
        self.ctx = ctx
        self.pod = pod
        self.send = send
        self.codec = spdy.HeaderCodec()
        self.reader = spdy.FrameReader(self.codec)
        self.forwards: dict[str, _Forward] = {}
        self.by_stream: dict[int, str] = {}
        self.finished = False

    async def receive(self, chunk: bytes) -> None:
        for frame in self.reader.feed(chunk):
            await self._frame(frame)

    async def _frame(self, frame: spdy.Frame) -> None:
        if frame.kind == spdy.SYN_STREAM:
            await self._open(frame)
        elif frame.kind == 0:
            await self._data(frame)
        elif frame.kind == spdy.RST_STREAM:
            key = self.by_stream.get(frame.stream_id)
            fwd = self.forwards.get(key or "")
            if fwd is not None and frame.stream_id == fwd.data_id:
                await self._finish(fwd, data_open=False)
        elif frame.kind == spdy.PING:
            await self.send(spdy.ping(frame.value))
        elif frame.kind == spdy.GOAWAY:
            self.finished = True

    async def _open(self, frame: spdy.Frame) -> None:
        headers = frame.headers
        kind = headers.get("streamtype", "")
        key = headers.get("requestid") or str(frame.stream_id)
        self.by_stream[frame.stream_id] = key
        await self.send(spdy.syn_reply(self.codec, frame.stream_id))
        fwd = self.forwards.get(key)
        if fwd is None:
            text = headers.get("port", "")
            port = int(text) if text.isdigit() and 0 < int(text) < 65536 else 0
            fwd = self.forwards[key] = _Forward(port)
            if not port:
                fwd.port_error = f"unable to parse '{text}' as a port"
        if kind == "error":
            fwd.error_id = frame.stream_id
        elif kind == "data":
            fwd.data_id = frame.stream_id
        if fwd.error_id and fwd.data_id:
            await self._connect(fwd)

    async def _connect(self, fwd: _Forward) -> None:
        pod = self.ctx.twin.store.peek("Pod", get_path(self.pod, "metadata", "namespace"),
                                       get_path(self.pod, "metadata", "name")) or self.pod
        if fwd.port_error:
            await self._finish(fwd, error=fwd.port_error)
            return
        if not listens(self.ctx.twin, pod, fwd.port):
            await self._finish(fwd, error=f"error forwarding port {fwd.port} to pod {sandbox_id(pod)}, "
                                          f"uid : {refused_message(pod, fwd.port)}")
            return
        fwd.conn = LoopbackConnection(self.ctx.twin, pod, fwd.port)

    async def _data(self, frame: spdy.Frame) -> None:
        fwd = self.forwards.get(self.by_stream.get(frame.stream_id, ""))
        if fwd is None or fwd.done or frame.stream_id != fwd.data_id:
            return  # the error stream's half-close, or data after the end
        if fwd.conn is not None and frame.data:
            reply = fwd.conn.feed(frame.data)
            if reply:
                await self.send(spdy.data(fwd.data_id, reply))
        if frame.fin or (fwd.conn is not None and fwd.conn.closed):
            await self._finish(fwd)

    async def _finish(self, fwd: _Forward, *, error: str = "", data_open: bool = True) -> None:
        """Close both streams as the kubelet does when a forwarded connection ends."""
        if fwd.done:
            return
        fwd.done = True
        if error:
            await self.send(spdy.data(fwd.error_id, error.encode()))
        await self.send(spdy.data(fwd.error_id, b"", fin=True))
        if data_open and fwd.data_id:
            await self.send(spdy.data(fwd.data_id, b"", fin=True))


def negotiate(websocket: WebSocket) -> str | None:
    offered = [p.strip() for p in websocket.scope.get("subprotocols") or []]
    return next((p for p in offered if p == TUNNEL_PREFIX + PROTOCOL), None)


@websocket_subresource("pods", "portforward")
async def portforward_websocket(websocket: WebSocket, ctx: RequestContext, namespace: str | None,
                                name: str) -> None:
    try:
        pod = preflight(ctx, namespace, name)
    except ApiError as err:
        await deny(websocket, err)
        return
    protocol = negotiate(websocket)
    offered = [p.strip() for p in websocket.scope.get("subprotocols") or []]
    if protocol is None:
        channel = next((p for p in offered if p in portforward_channels.PROTOCOLS), None)
        if channel is not None:
            try:
                ports = portforward_channels.requested_ports(websocket.query_params)
            except ApiError as err:
                await deny(websocket, err)
                return
            await websocket.accept(subprotocol=channel)
            try:
                await portforward_channels.serve_channels(websocket, ctx, pod, ports)
            except WebSocketDisconnect:
                return
            return
        await deny(websocket, BadRequest(
            f"unable to upgrade: unable to negotiate protocol: client supports {offered}, "
            f"server accepts {[TUNNEL_PREFIX + PROTOCOL, *portforward_channels.PROTOCOLS]}"))
        return
    await websocket.accept(subprotocol=protocol)

    async def send(payload: bytes) -> None:
        await websocket.send_bytes(payload)

    session = PortForwardSession(ctx, pod, send)
    try:
        while not session.finished:
            message = await websocket.receive()
            if message.get("type") == "websocket.disconnect":
                return
            chunk = message.get("bytes")
            if chunk:
                await session.receive(chunk)
    except (WebSocketDisconnect, spdy.ProtocolError):
        return
    await websocket.close()


@subresource("pods", "portforward")
async def portforward_http(request: Request, ctx: RequestContext, namespace: str | None,
                           name: str) -> Response:
    """A request that was not upgraded: the same checks, then the API server's refusal."""
    try:
        preflight(ctx, namespace, name or "")
    except ApiError as err:
        return error_response(err)
    return error_response(BadRequest("Upgrade request required"))


__all__ = ["PortForwardSession", "portforward_websocket", "preflight"]
