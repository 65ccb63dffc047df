"""The benchmark's own namespaces answered as if they did not exist.

The agent credential must not be able to tell `sregym-system` or `chaos-mesh` from a namespace
nobody created: a 403 where a real cluster says 404 would name them as well as any label. So,
for a user from whom they are hidden, a request aimed at one is answered the way the API server
answers the same request about an absent namespace:

- the RBAC decision comes first and is the ordinary one (`authz.rbac_authorize`): a verb the
  credential lacks is still a 403 with the usual text, exactly as for a made-up namespace;
- a named object (or its subresource: logs, exec, status, scale ...) is `<resource> "<name>" not
  found`; the Namespace object itself is `namespaces "<name>" not found`;
- a create is decoded and checked like any other (a malformed body is still a 400), then refused
  by namespace lifecycle admission: `namespaces "<ns>" not found` (`rest.create` reads `call.absent`);
- lists, watches and deletecollections run the ordinary code with the RBAC-only check; the
  listing already leaves hidden namespaces out (api/kube/listing.py), so they come back empty.

The `chaos-mesh.org` group is absent from discovery and its paths are 404 (server.py `_resolve`),
and access reviews use the RBAC-only decision (access_review.py), so `kubectl auth can-i` prints
for a hidden namespace what it prints for an absent one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.errors import ApiError, Forbidden, NotFound, not_found
from sregym.twin.api.kube.encoding import respond
from sregym.twin.machinery.authz import forbidden_message, hidden_namespaces, rbac_authorize

if TYPE_CHECKING:
    from starlette.responses import Response

    from sregym.twin.api.kube.paths import ResourcePath
    from sregym.twin.api.kube.rest import Call
    from sregym.twin.machinery.kinds import ResourceKind

_VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
          "DELETE": "delete"}


def hidden_target(user: str, kind: ResourceKind, rp: ResourcePath) -> bool:
    """Whether the request is aimed into (or at) a namespace hidden from `user`."""
    hidden = hidden_namespaces(user)
    if not hidden:
        return False
    if kind.namespaced:
        return rp.namespace in hidden
    return kind.key == ("", "Namespace") and rp.name in hidden


def _missing(kind: ResourceKind, rp: ResourcePath) -> NotFound:
    name = rp.name or ""
    if kind.virtual:  # metrics.k8s.io names its objects namespace/name
        return NotFound(f'{kind.kind.lower()}.{kind.group} "{rp.namespace}/{name}" not found',
                        details={"name": f"{rp.namespace}/{name}", "group": kind.group,
                                 "kind": kind.kind.lower()})
    return not_found(kind.plural, name, kind.group)


def answer_as_absent(call: Call, method: str) -> Response | None:
    """Answer a request aimed at a hidden namespace as for an absent one: raise the error, return
    the response, or None when the ordinary (filtered) code gives the right answer itself."""
    call.absent = True
    rp, kind = call.rp, call.kind
    if rp.name:
        sub = (rp.subresource or "").split("/")[0] or None
        call.require(_VERBS.get(method, "get"), rp.name, sub)
        raise _missing(kind, rp)
    if method == "POST":
        return None  # decoded like any create first (a malformed body is a 400), then refused: rest.create
    if kind.virtual and method == "GET":
        call.require("list")
        return respond({"kind": f"{kind.kind}List", "apiVersion": kind.api_version, "metadata": {},
                        "items": []}, accept=call.accept)
    return None


def check_stream(user: str, kind: ResourceKind, rp: ResourcePath) -> None:
    """exec/attach/port-forward over a websocket into a hidden namespace: the RBAC answer, then
    the pod is not found."""
    if not hidden_target(user, kind, rp):
        return
    sub = rp.subresource or None
    if not rbac_authorize(user, "create", kind.group, kind.plural, rp.namespace, rp.name, sub)[0]:
        raise Forbidden(forbidden_message(user, "create", kind.group, kind.plural, rp.namespace,
                                          rp.name, sub))
    error: ApiError = _missing(kind, rp)
    raise error


__all__ = ["answer_as_absent", "check_stream", "hidden_target"]
