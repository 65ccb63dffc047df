"""The API server's non-resource endpoints beyond discovery: health checks and `/metrics`.

Authorization is RBAC on non-resource URLs, as on a kind cluster: everybody, even an
unauthenticated client, may GET `/healthz`, `/livez`, `/readyz` and `/version`
(system:public-info-viewer); the individual checks (`/readyz/etcd`) and `/metrics` need a role
that grants them, which the admin has and the agent's on-call role does not, so the agent gets
the real 403 `forbidden: User "agent" cannot get path "/metrics"`. A request with a bad token is
401 whatever the path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from sregym.errors import Forbidden, MethodNotAllowed
from sregym.twin.api.kube import apiserver_metrics, health
from sregym.twin.api.kube.access_review import non_resource_allowed

if TYPE_CHECKING:
    from sregym.twin.api.kube.server import KubeApi

ANONYMOUS = "system:anonymous"
PUBLIC = ("/healthz", "/livez", "/readyz", "/version", "/version/")
METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def serves(path: str) -> bool:
    return path == "/metrics" or health.is_health_path(path)


def answer(api: KubeApi, request: Request, path: str) -> Response:
    user = api.authenticate(request.headers) if request.headers.get("authorization") else ANONYMOUS
    if request.method not in ("GET", "HEAD"):
        raise MethodNotAllowed(f"the server does not allow this method on the requested resource "
                               f"({request.method})", details={})
    if path not in PUBLIC and not (user != ANONYMOUS and non_resource_allowed(user, "get", path)):
        raise Forbidden(f'forbidden: User "{user}" cannot get path "{path}"', details={})
    if path == "/metrics":
        text = apiserver_metrics.metrics_of(api).exposition(api.twin)
        return Response(text, media_type=METRICS_TYPE)
    params: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        params.setdefault(key, []).append(value)
    status, body = health.answer(path, params)
    return PlainTextResponse(body, status_code=status, headers={"X-Content-Type-Options": "nosniff"})


__all__ = ["answer", "serves"]
