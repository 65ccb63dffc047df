"""The `proxy` subresources of Services, Pods and Nodes: the API server as an HTTP proxy.

`/api/v1/namespaces/NS/services/[SCHEME:]NAME[:PORT]/proxy/PATH` and
`/api/v1/namespaces/NS/pods/[SCHEME:]NAME[:PORT]/proxy/PATH` forward the request to a pod's
listener and relay its answer (status, headers, body) unchanged, so `kubectl get --raw` through
them prints what the application serves. Errors are the API server's own:

- a name that is not `[scheme:]name[:port]` ⇒ 400 `invalid service request "..."`;
- a Service port number the Service does not have ⇒ 503 `no service port 9 found for service "x"`;
- a Service whose Endpoints have no ready address for the port ⇒ 503 `no endpoints available for
  service "x"`;
- a pod without an IP ⇒ 400 `address not allowed`;
- nothing listening ⇒ 503 `error trying to reach service: dial tcp IP:PORT: connect: connection
  refused` (the proxy transport's wrapping of the dial error); a server that hangs up ⇒ `EOF`.

The API server runs on the control-plane node and dials the pod IP directly (no Service VIP), so a
NetworkPolicy that does not admit the control-plane node's address drops it (503 `... i/o
timeout`, answered at once where a real server waits for its 30 s dial timeout); the pod's own
answer comes from `dataplane.loopback` (the same emulation an in-cluster `curl` gets).
`/api/v1/nodes/NAME/proxy/PATH` reaches the kubelet (`kubelet_proxy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from sregym.errors import ApiError, BadRequest, not_found
from sregym.twin.api.kube.encoding import error_response
from sregym.twin.api.kube.handlers import RequestContext, subresource
from sregym.twin.dataplane import netpolicy
from sregym.twin.dataplane.loopback import LoopbackConnection, listens
from sregym.twin.machinery.objects import get_path

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "upgrade", "content-length"}


class ServiceUnavailable(ApiError):
    """503 with reason ServiceUnavailable (what the proxy answers when it cannot reach a backend)."""

    code = 503
    reason = "ServiceUnavailable"


def split_scheme_name_port(text: str) -> tuple[str, str, str] | None:
    """`[scheme:]name[:port]` as the API server splits it, or None when malformed."""
    parts = text.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme, name, port


def proxied_path(request: Request) -> str:
    """What follows `/proxy` in the request path (with the query string)."""
    path = request.url.path
    marker = path.find("/proxy", path.find("/", len("/api/v1/")))
    rest = path[marker + len("/proxy"):] if marker >= 0 else "/"
    rest = rest or "/"
    query = request.url.query
    return rest + (f"?{query}" if query else "")


def service_backend(twin: Twin, namespace: str, ident: str) -> tuple[str, dict[str, Any], int]:
    """(scheme, pod, port) a Service proxy request goes to, or the API server's error."""
    split = split_scheme_name_port(ident)
    if split is None:
        raise BadRequest(f"invalid service request {ident!r}".replace("'", '"'))
    scheme, name, port_text = split
    service = twin.store.peek("Service", namespace, name)
    if service is None:
        raise not_found("services", name)
    port_name = port_text
    if port_text.isdigit():
        for port in get_path(service, "spec", "ports") or []:
            if int(port.get("port") or 0) == int(port_text):
                port_name = port.get("name") or ""
                break
        else:
            raise ServiceUnavailable(f'no service port {int(port_text)} found for service "{name}"')
    endpoints = twin.store.peek("Endpoints", namespace, name)
    if endpoints is None:
        raise not_found("endpoints", name)
    subsets = endpoints.get("subsets") or []
    if not subsets:
        raise ServiceUnavailable(f'no endpoints available for service "{name}"')
    for subset in subsets:
        addresses = subset.get("addresses") or []
        if not addresses:
            continue
        for port in subset.get("ports") or []:
            if (port.get("name") or "") == port_name:
                address = sorted(addresses, key=lambda a: a.get("ip") or "")[0]
                pod = _pod_for(twin, namespace, address)
                if pod is not None:
                    return scheme or "http", pod, int(port.get("port") or 0)
    raise ServiceUnavailable(f'no endpoints available for service "{ident}"')


def _pod_for(twin: Twin, namespace: str, address: dict[str, Any]) -> dict[str, Any] | None:
    ref = address.get("targetRef") or {}
    if ref.get("kind") == "Pod" and ref.get("name"):
        pod = twin.store.peek("Pod", ref.get("namespace") or namespace, ref["name"])
        if pod is not None:
            return pod
    ip = address.get("ip")
    for pod in twin.store.scan("Pod", namespace):
        if get_path(pod, "status", "podIP") == ip:
            return pod
    return None


def pod_backend(twin: Twin, namespace: str, ident: str) -> tuple[str, dict[str, Any], int]:
    split = split_scheme_name_port(ident)
    if split is None:
        raise BadRequest(f"invalid pod request {ident!r}".replace("'", '"'))
    scheme, name, port_text = split
    pod = twin.store.peek("Pod", namespace, name)
    if pod is None:
        raise not_found("pods", name)
    port = int(port_text) if port_text.isdigit() else 0
    if not port_text:
        for container in get_path(pod, "spec", "containers") or []:
            ports = container.get("ports") or []
            if ports:
                port = int(ports[0].get("containerPort") or 0)
                break
    elif not port_text.isdigit():
        for container in get_path(pod, "spec", "containers") or []:
            for p in container.get("ports") or []:
                if p.get("name") == port_text:
                    port = int(p.get("containerPort") or 0)
    if not get_path(pod, "status", "podIP"):
        raise BadRequest("address not allowed")
    return scheme or "http", pod, port or 80


def control_plane_ip(twin: Twin) -> str:
    """The address the API server dials pods from (its node's InternalIP)."""
    for node in twin.store.scan("Node"):
        if "node-role.kubernetes.io/control-plane" in (get_path(node, "metadata", "labels") or {}):
            for address in get_path(node, "status", "addresses") or []:
                if address.get("type") == "InternalIP":
                    return str(address.get("address") or "")
    return ""


def forward(twin: Twin, scheme: str, pod: dict[str, Any], port: int, method: str,
            target: str) -> Response:
    """Dial the pod and relay one request's answer."""
    ip = get_path(pod, "status", "podIP")
    if not netpolicy.allowed(twin, None, control_plane_ip(twin), pod, port):
        raise ServiceUnavailable(f"error trying to reach service: dial tcp {ip}:{port}: i/o timeout")
    if not listens(twin, pod, port):
        raise ServiceUnavailable(f"error trying to reach service: dial tcp {ip}:{port}: connect: "
                                 "connection refused")
    if scheme == "https":
        raise ServiceUnavailable("error trying to reach service: http: server gave HTTP response to "
                                 "HTTPS client")
    result = LoopbackConnection(twin, pod, port).exchange(method, target)
    if result.error:
        raise ServiceUnavailable("error trying to reach service: EOF")
    headers = {k: v for k, v in result.headers.items() if k.lower() not in _HOP_BY_HOP}
    body = b"" if method == "HEAD" else result.body.encode()
    return Response(body, status_code=result.status, headers=headers)


@subresource("services", "proxy")
async def service_proxy(request: Request, ctx: RequestContext, namespace: str | None,
                        name: str) -> Response:
    try:
        scheme, pod, port = service_backend(ctx.twin, namespace or "default", name)
        return forward(ctx.twin, scheme, pod, port, request.method, proxied_path(request))
    except ApiError as err:
        return error_response(err)


@subresource("pods", "proxy")
async def pod_proxy(request: Request, ctx: RequestContext, namespace: str | None, name: str) -> Response:
    try:
        scheme, pod, port = pod_backend(ctx.twin, namespace or "default", name)
        return forward(ctx.twin, scheme, pod, port, request.method, proxied_path(request))
    except ApiError as err:
        return error_response(err)


__all__ = ["ServiceUnavailable", "forward", "pod_backend", "proxied_path", "service_backend",
           "split_scheme_name_port"]
