"""A TCP connection made inside a pod's network namespace to its own `localhost:PORT`.

This is how the kubelet (through containerd) serves `kubectl port-forward` and how the API
server's pod proxy reaches a pod: the connection never crosses a Service, a NetworkPolicy or a
NetworkChaos (those act on the pod's eth0, not on its loopback), so only "does a container of
the pod listen on that port" decides whether it connects. A port nobody listens on is refused,
and containerd reports it with the pod sandbox id and the CNI network namespace path.

`LoopbackConnection` turns the bytes a client writes into what the process answers: an HTTP/1.x
server (a data-plane program with an HTTP protocol, or a declared HTTP listener) answers each
request exactly as an in-cluster `curl` would be answered (`dataplane.http.answer`); any other
server (gRPC, Redis, MongoDB ...) closes the connection on bytes it does not understand, which a
client sees as an empty reply.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.connect import RTT_SAME_NODE_MS, ConnectResult
from sregym.twin.dataplane.http import REASONS, answer
from sregym.twin.node.runtime import runtime_of

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

MAX_REQUEST_BYTES = 1 << 20  # a request head+body larger than this is answered 431/closed
_METHODS = (b"GET", b"HEAD", b"POST", b"PUT", b"PATCH", b"DELETE", b"OPTIONS", b"CONNECT", b"TRACE")


def sandbox_id(pod: dict[str, Any]) -> str:
    """The containerd pod sandbox id (64 hex digits), stable for the pod's lifetime."""
    uid = (pod.get("metadata") or {}).get("uid", "")
    return hashlib.sha256(f"sandbox/{uid}".encode()).hexdigest()


def netns_path(pod: dict[str, Any]) -> str:
    """The CNI network namespace the sandbox runs in (`/var/run/netns/cni-<uuid>`)."""
    uid = (pod.get("metadata") or {}).get("uid", "")
    h = hashlib.sha256(f"netns/{uid}".encode()).hexdigest()
    return f"/var/run/netns/cni-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def refused_message(pod: dict[str, Any], port: int) -> str:
    """containerd's error for a port nobody listens on, as the kubelet relays it."""
    sandbox = sandbox_id(pod)
    return (f'failed to execute portforward in network namespace "{netns_path(pod)}": failed to '
            f'connect to localhost:{port} inside namespace "{sandbox}", IPv4: dial tcp4 '
            f"127.0.0.1:{port}: connect: connection refused IPv6 dial tcp6 [::1]:{port}: connect: "
            "connection refused ")


def listens(twin: Twin, pod: dict[str, Any], port: int) -> bool:
    ip = (pod.get("status") or {}).get("podIP") or ""
    return bool(ip) and runtime_of(twin).listener(ip, int(port)) is not None


@dataclass
class HttpRequest:
    method: str
    target: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def keep_alive(self) -> bool:
        token = self.headers.get("connection", "").lower()
        return token != "close" if self.version == "HTTP/1.1" else token == "keep-alive"


def parse_request(buf: bytearray) -> HttpRequest | None:
    """Take one complete request off the front of `buf` (None until it is complete)."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = bytes(buf[:end]).decode("latin-1").split("\r\n")
    parts = head[0].split(" ")
    if len(parts) != 3:
        raise ValueError("malformed request line")
    headers: dict[str, str] = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    if len(buf) < end + 4 + length:
        return None
    body = bytes(buf[end + 4:end + 4 + length])
    del buf[:end + 4 + length]
    return HttpRequest(parts[0], parts[1], parts[2], headers, body)


def render_response(status: int, headers: dict[str, str], body: bytes, *, head_only: bool = False,
                    close: bool = False) -> bytes:
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, '')}".rstrip()]
    out = dict(headers)
    out["Content-Length"] = str(len(body))
    if close:
        out["Connection"] = "close"
    lines += [f"{k}: {v}" for k, v in sorted(out.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else body)


@dataclass
class LoopbackConnection:
    """One established connection to `localhost:port` in the pod; feed it client bytes."""

    twin: Twin
    pod: dict[str, Any]
    port: int
    closed: bool = False
    requests: int = 0
    _buf: bytearray = field(default_factory=bytearray)

    def feed(self, chunk: bytes) -> bytes:
        """What the server writes back after receiving `chunk`; sets `closed` when it hangs up."""
        if self.closed:
            return b""
        self._buf += chunk
        out = bytearray()
        while not self.closed and self._buf:
            if not any(self._buf.startswith(m[:len(self._buf)]) for m in _METHODS):
                self.closed = True  # not HTTP: the server drops the connection
                break
            try:
                request = parse_request(self._buf)
            except ValueError:
                out += render_response(400, {"Content-Type": "text/plain; charset=utf-8"},
                                       b"400 Bad Request", close=True)
                self.closed = True
                break
            if request is None:
                if len(self._buf) > MAX_REQUEST_BYTES:
                    self.closed = True
                break
            out += self.serve(request)
        return bytes(out)

    def serve(self, request: HttpRequest) -> bytes:
        self.requests += 1
        # Go's net/http serves HEAD with the GET handler and drops the body.
        result = self.exchange("GET" if request.method == "HEAD" else request.method, request.target,
                               headers=request.headers, body=request.body.decode("utf-8", "replace") or None)
        if result.error:
            self.closed = True  # empty reply / reset: the server closes without answering
            return b""
        close = not request.keep_alive
        if close:
            self.closed = True
        headers = {k: v for k, v in result.headers.items() if k.lower() != "content-length"}
        return render_response(result.status, headers, result.body.encode(),
                               head_only=request.method == "HEAD", close=close)

    def exchange(self, method: str, target: str, *, headers: dict[str, str] | None = None,
                 body: str | None = None) -> Any:
        """The listening process's answer to one request (a `dataplane.http.HttpResult`); the
        request's headers and body reach the handler as they would over the network."""
        ip = (self.pod.get("status") or {}).get("podIP") or ""
        conn = ConnectResult(ok=True, dst_pod=self.pod, dst_ip=ip, host="127.0.0.1", port=self.port,
                             resolved_ip=ip, target_port=self.port, src_ip=ip,
                             latency_ms=RTT_SAME_NODE_MS / 4)
        plane = self.twin.services.dataplane
        if plane is None:
            from sregym.twin.dataplane.http import HttpResult

            return HttpResult(error="empty_reply", message="Empty reply from server", connect=conn)
        path, _, query = target.partition("?")
        return answer(plane, conn, "http", self.port, path or "/", method=method, query=query, headers=headers,
                      body=body)


__all__ = ["HttpRequest", "LoopbackConnection", "listens", "netns_path", "parse_request",
           "refused_message", "render_response", "sandbox_id"]
