"""Extension points of the Kubernetes API server.

The generic REST machinery (routing, CRUD, list, watch, auth) dispatches subresources and virtual
resources it does not handle itself to handlers registered here, so pod logs, exec, metrics and
access reviews live in their own modules.

- `SUBRESOURCES[(plural, subresource)]`: `async def handler(request, ctx, namespace, name)`
  returning a Starlette `Response`, for HTTP subresources such as `("pods", "log")`.
- `WEBSOCKET_SUBRESOURCES[(plural, subresource)]`: `async def handler(websocket, ctx, namespace,
  name)` for streaming subresources such as `("pods", "exec")` (the server accepts nothing itself:
  the handler negotiates the subprotocol and accepts).
- `VIRTUAL[(group, plural)]`: `async def handler(request, ctx, namespace, name)` for resources
  served by code (`("metrics.k8s.io", "pods")`, `("authorization.k8s.io",
  "selfsubjectaccessreviews")` ...); `name` is None for collection requests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


@dataclass
class RequestContext:
    """Who is asking and against which twin."""

    twin: Twin
    user: str  # "admin" | "agent" | "anonymous"
    # Serialises access to the twin between the request handlers and the clock task.
    lock: Any = None

    @property
    def is_admin(self) -> bool:
        return self.user == "admin"


Handler = Callable[..., Awaitable[Any]]

SUBRESOURCES: dict[tuple[str, str], Handler] = {}
WEBSOCKET_SUBRESOURCES: dict[tuple[str, str], Handler] = {}
VIRTUAL: dict[tuple[str, str], Handler] = {}


def subresource(plural: str, name: str) -> Callable[[Handler], Handler]:
    def wrap(fn: Handler) -> Handler:
        SUBRESOURCES[(plural, name)] = fn
        return fn
    return wrap


def websocket_subresource(plural: str, name: str) -> Callable[[Handler], Handler]:
    def wrap(fn: Handler) -> Handler:
        WEBSOCKET_SUBRESOURCES[(plural, name)] = fn
        return fn
    return wrap


def virtual(group: str, plural: str) -> Callable[[Handler], Handler]:
    def wrap(fn: Handler) -> Handler:
        VIRTUAL[(group, plural)] = fn
        return fn
    return wrap
