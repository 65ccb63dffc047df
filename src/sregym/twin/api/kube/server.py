"""The Kubernetes API server of the twin: an ASGI (Starlette) app over the twin's store.

One catch-all route parses the path itself (`paths.parse`) and dispatches: public endpoints
(`/version`, health), discovery and OpenAPI, then resources — generic REST verbs (`rest`), watches
(`watch`), `status`/`scale`, and everything registered in `handlers` (pod logs, exec, metrics,
access reviews). Authentication is by bearer token (`tokens` maps token → "admin"/"agent");
authorization is `authz.authorize`. Every failure leaves as a `Status` object with the right HTTP
code — an unexpected exception is logged and still answered with a `Status`, never a traceback.

Handlers run on the event loop and touch the twin synchronously (see `serve.py`): a request is
atomic with respect to the clock, which only ticks between requests.
"""

from __future__ import annotations

import logging
from time import perf_counter
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from sregym.errors import ApiError, BadRequest, Forbidden, InternalError, NotFound, Unauthorized
from sregym.twin.api.kube import (
    apiserver_metrics,
    discovery,
    handlers,
    invisible,
    nonresource,
    openapi,
    paths,
    rest,
)
from sregym.twin.api.kube.encoding import decode_body, error_response, respond
from sregym.twin.api.kube.field_validation import warning_header
from sregym.twin.api.kube.handlers import RequestContext
from sregym.twin.api.kube.limits import read_request_body
from sregym.twin.api.kube.rest import Call, unknown_resource
from sregym.twin.api.kube.token_request import issued_subject
from sregym.twin.api.kube.watch import WatchRegistry, watch
from sregym.twin.api.wall_time import WallAnchor, bind
from sregym.twin.machinery.authz import authorize, forbidden_message, hidden_groups
from sregym.twin.machinery.kinds import ResourceKind
from sregym.twin.machinery.rbac_objects import bind_store
from sregym.twin.userland.fs import projected_token_subject

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

log = logging.getLogger("sregym.twin.api")

_METHOD_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


class KubeApi:
    """Per-app state: the twin, the credentials, and the open watch streams."""

    def __init__(self, twin: Twin, tokens: dict[str, str]) -> None:
        self.twin = twin
        self.tokens = dict(tokens)
        self.watches = WatchRegistry()

    # ------------------------------------------------------------- auth
    def authenticate(self, headers: Any) -> str:
        header = headers.get("authorization") or ""
        scheme, _, token = header.partition(" ")
        user = self.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if user is None and scheme.lower() == "bearer":
            user = issued_subject(self.twin, token.strip())  # a TokenRequest token
        if user is None and scheme.lower() == "bearer":
            user = projected_token_subject(self.twin, token)  # a token mounted in a pod
        if user is None:
            raise Unauthorized("Unauthorized")
        return user

    # --------------------------------------------------------- dispatch
    async def handle(self, request: Request) -> Response:
        path = request.url.path.rstrip("/") or "/"
        if nonresource.serves(path):
            return nonresource.answer(self, request, path)
        if path == "/version":
            return respond(discovery.version_info())
        user = self.authenticate(request.headers)
        ctx = RequestContext(self.twin, user)
        accept = request.headers.get("accept")
        kinds = self.twin.kinds
        if request.method not in _METHOD_VERBS:
            raise not_allowed(request.method)
        group_doc = path.startswith("/apis/") and path.count("/") == 2
        if path in ("/api", "/apis", "/") or path.startswith("/openapi") or group_doc:
            if request.method != "GET":
                raise not_allowed(request.method)
            return self._discovery(path, user, accept, request)
        rp = paths.parse(path)
        if rp is None:
            raise unknown_resource()
        if not rp.plural:
            doc = discovery.api_resource_list(kinds, user, rp.group, rp.version)
            if doc is None or request.method != "GET":
                raise unknown_resource()
            return respond(doc, accept=accept)
        kind = self._resolve(rp, user)
        if rp.namespace is not None and not kind.namespaced:
            raise unknown_resource()
        call = Call(ctx, rp, kind, request.query_params, accept)
        call.user_agent = request.headers.get("user-agent", "")
        if invisible.hidden_target(user, kind, rp):
            answer = invisible.answer_as_absent(call, request.method)
            if answer is not None:
                return answer
        if kind.virtual:
            response = await self._virtual(call, request)
        elif rp.subresource:
            response = await self._subresource(call, request)
        else:
            response = await self._resource(call, request)
        header = warning_header(kind.warning) if kind.warning else None
        if header is not None:  # a deprecated resource: kubectl prints `Warning: <text>`, before
            response.raw_headers.insert(0, (b"warning", header))  # any field-validation warnings
        return response

    def _resolve(self, rp: paths.ResourcePath, user: str) -> ResourceKind:
        if rp.group in hidden_groups(user):
            raise unknown_resource()
        try:
            kind = self.twin.kinds.by_resource(rp.group, rp.version, rp.plural)
        except NotFound:
            raise unknown_resource() from None
        if kind.hidden_from_agent and hidden_groups(user):
            raise unknown_resource()
        return kind

    def _discovery(self, path: str, user: str, accept: str | None, request: Request) -> Response:
        kinds = self.twin.kinds
        if path == "/":
            return respond({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez",
                                      "/openapi/v2", "/openapi/v3", "/readyz", "/version"]})
        if path in ("/api", "/apis"):
            fmt = discovery.aggregated_format(accept)
            if fmt is not None:
                doc = discovery.aggregated(kinds, user, core=path == "/api", version=fmt)
                media = discovery.AGGREGATED_V2 if fmt == "v2" else discovery.AGGREGATED_V2BETA1
                return respond(doc, content_type=media)
            if path == "/api":
                host = request.headers.get("host") or "127.0.0.1:6443"
                return respond(discovery.api_versions(host), accept=accept)
            return respond(discovery.api_group_list(kinds, user), accept=accept)
        if path.startswith("/apis/"):
            doc = discovery.api_group_doc(kinds, user, path.split("/")[2])
            if doc is None:
                raise unknown_resource()
            return respond(doc, accept=accept)
        if path == "/openapi/v3":
            return respond(openapi.v3_root(kinds, user))
        if path.startswith("/openapi/v3/"):
            rest_path = path[len("/openapi/v3/"):].split("/")
            if rest_path[0] == "api" and len(rest_path) == 2:
                doc = openapi.v3_document(kinds, user, "", rest_path[1])
            elif rest_path[0] == "apis" and len(rest_path) == 3:
                doc = openapi.v3_document(kinds, user, rest_path[1], rest_path[2])
            else:
                doc = None
            if doc is None:
                raise unknown_resource()
            return respond(doc)
        if path == "/openapi/v2":
            if accept and "protobuf" in accept and "json" not in accept:
                return Response(openapi.V2_PROTOBUF, media_type=openapi.V2_PROTOBUF_TYPE)
            return respond(openapi.v2_document(kinds, user))
        raise unknown_resource()

    async def _body(self, request: Request, *, optional: bool = False) -> Any:
        raw = await read_request_body(request)
        if optional and not raw.strip():
            return None
        return decode_body(raw, request.headers.get("content-type"))

    async def _resource(self, call: Call, request: Request) -> Response:
        from sregym.twin.api.kube.malformed import MalformedBody, reword

        try:
            return await self._resource_verbs(call, request)
        except MalformedBody as exc:  # worded by who decodes it: the codec or the patch handler
            raise reword(exc, call.kind.kind, request.method,
                         request.headers.get("content-type")) from None

    async def _resource_verbs(self, call: Call, request: Request) -> Response:
        rp = call.rp
        method = request.method
        name = rp.name
        is_watch = rp.legacy_watch or (request.query_params.get("watch") or "").lower() in ("true", "1")
        if call.kind.namespaced and name is not None and not rp.namespace:
            raise unknown_resource()
        if method == "GET":
            if is_watch:
                return watch(call, self.watches, name)
            return rest.get(call, name) if name else rest.list_(call)
        if rp.legacy_watch:
            raise not_allowed(method)
        if method == "POST":
            if name:
                raise not_allowed(method)
            return rest.create(call, await self._body(request))
        if method == "PUT":
            if not name:
                raise not_allowed(method)
            return rest.update(call, name, await self._body(request))
        if method == "PATCH":
            if not name:
                raise not_allowed(method)
            return rest.patch(call, name, await self._body(request),
                              request.headers.get("content-type"))
        body = await self._body(request, optional=True)
        return rest.delete(call, name, body) if name else rest.delete_collection(call, body)

    async def _subresource(self, call: Call, request: Request) -> Response:
        rp = call.rp
        name = rp.name or ""
        sub = rp.subresource or ""
        if call.kind.namespaced and not rp.namespace:
            raise unknown_resource()
        if sub in ("status", "scale"):
            body = await self._body(request) if request.method in ("PUT", "PATCH") else None
            handler = rest.status if sub == "status" else rest.scale
            return handler(call, request.method, name, body, request.headers.get("content-type"))
        base = sub.split("/")[0]
        custom = handlers.SUBRESOURCES.get((call.kind.plural, base))
        if custom is None or base not in call.kind.subresources:
            raise unknown_resource()
        call.require(_METHOD_VERBS[request.method], name, base)
        return await custom(request, call.ctx, rp.namespace, name)

    async def _virtual(self, call: Call, request: Request) -> Response:
        handler = handlers.VIRTUAL.get((call.kind.group, call.kind.plural))
        if handler is None:
            raise unknown_resource()
        verb = _METHOD_VERBS[request.method]
        if request.method == "GET" and not call.rp.name:
            verb = "list"
        if verb not in call.kind.verbs:
            raise not_allowed(request.method)
        call.require(verb, call.rp.name)
        return await handler(request, call.ctx, call.rp.namespace, call.rp.name)

    # -------------------------------------------------------- websocket
    async def handle_websocket(self, websocket: WebSocket) -> None:
        try:
            user = self.authenticate(websocket.headers)
            rp = paths.parse(websocket.url.path)
            if rp is None or not rp.plural or not rp.name or not rp.subresource:
                raise unknown_resource()
            kind = self._resolve(rp, user)
            invisible.check_stream(user, kind, rp)
            handler = handlers.WEBSOCKET_SUBRESOURCES.get((kind.plural, rp.subresource))
            if handler is None:
                raise unknown_resource()
            allowed, _ = authorize(user, "create", kind.group, kind.plural, rp.namespace, rp.name,
                                   rp.subresource)
            if not allowed:
                raise Forbidden(forbidden_message(user, "create", kind.group, kind.plural,
                                                  rp.namespace, rp.name, rp.subresource))
        except ApiError as exc:
            await websocket.close(code=1008, reason=exc.message[:120])
            return
        try:
            await handler(websocket, RequestContext(self.twin, user), rp.namespace, rp.name)
        except Exception:
            log.exception("websocket handler failed for %s", websocket.url.path)
            try:
                await websocket.close(code=1011)
            except Exception:  # the socket may already be gone
                return


def not_allowed(method: str) -> ApiError:
    from sregym.errors import MethodNotAllowed

    return MethodNotAllowed(f"the server does not allow this method on the requested resource ({method})",
                            details={})


def _load_handler_modules() -> None:
    """Import every module of this package, so handlers registered by decorator (pod logs,
    exec, metrics, access reviews) are in place before the first request."""
    from sregym.registry import import_all

    import_all("sregym.twin.api.kube")


def create_app(twin: Twin, *, tokens: dict[str, str], wall: WallAnchor | None = None) -> Starlette:
    """The Kubernetes API as an ASGI app over `twin`. `tokens` maps bearer token → user name;
    `wall` presents timestamps on the client's clock (None: simulated time as stored)."""
    _load_handler_modules()
    api = KubeApi(twin, tokens)

    async def endpoint(request: Request) -> Response:
        bind(wall)  # for this request's task, streamed bodies included (api/wall_time.py)
        bind_store(twin.store)  # ServiceAccount tokens: the stored RBAC objects decide
        started = perf_counter()
        response = await answer(request)
        apiserver_metrics.record(api, request.method, request.url.path, request.query_params,
                                 request.headers.get("content-type") or "", response.status_code, started)
        return response

    async def answer(request: Request) -> Response:
        try:
            return await api.handle(request)
        except ApiError as exc:
            headers = {"WWW-Authenticate": 'Bearer realm="kubernetes"'} if exc.code == 401 else None
            return error_response(exc, headers=headers)
        except Exception as exc:
            log.exception("%s %s failed", request.method, request.url.path)
            if request.method in ("POST", "PUT", "PATCH"):
                return error_response(BadRequest(f"the request could not be processed: {exc!r}"))
            return error_response(InternalError(f"Internal error occurred: {exc!r}"))

    async def ws_endpoint(websocket: WebSocket) -> None:
        bind(wall)
        bind_store(twin.store)
        started = perf_counter()
        await api.handle_websocket(websocket)
        apiserver_metrics.record(api, "GET", websocket.url.path, websocket.query_params, "", 101, started)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    app = Starlette(routes=[Route("/{path:path}", endpoint, methods=methods),
                            WebSocketRoute("/{path:path}", ws_endpoint)])
    app.state.kube = api
    return app


__all__ = ["KubeApi", "create_app"]
