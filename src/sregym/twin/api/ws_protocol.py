"""uvicorn's WebSocket protocol, tolerant of the subprotocol names Kubernetes clients offer.

kubectl 1.32 asks for `SPDY/3.1+portforward.k8s.io` (port-forward tunnelled over WebSocket). The
`/` and `.` in it are not RFC 7230 token characters, and the `websockets` library's server
handshake rejects the whole upgrade with 400 ("invalid Sec-WebSocket-Protocol header"), so
kubectl would fall back to SPDY. The Kubernetes API server (gorilla/websocket) just splits the
header on commas. uvicorn already passes the offered names to the app (split on commas) and
writes the accepted one into the 101 response itself, so the library's own parsing can simply
be skipped.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.server import ServerProtocol


class _LenientServerProtocol(ServerProtocol):
    def process_subprotocol(self, headers: Any) -> None:
        """Leave the choice to the ASGI app (uvicorn adds the accepted subprotocol)."""
        return None


class KubeWebSocketProtocol(WebSocketsSansIOProtocol):
    """`uvicorn.Config(ws=KubeWebSocketProtocol)` for the Kubernetes API server."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn.__class__ = _LenientServerProtocol


__all__ = ["KubeWebSocketProtocol"]
