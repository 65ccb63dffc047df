"""The `serviceaccounts/token` subresource: `authentication.k8s.io/v1 TokenRequest`.

`kubectl create token SA -n NS` POSTs a TokenRequest and prints `status.token`. The twin answers
like the real registry (`TokenREST.Create`): the ServiceAccount must exist; the audiences default to
the API server's (`https://kubernetes.default.svc.cluster.local`), the lifetime to one hour and it
may not be under ten minutes; a bound object (Pod or Secret) must exist and match its uid. The
token is JWT-shaped with the real claims (issuer, subject `system:serviceaccount:NS:SA`,
`kubernetes.io` private claims) and the same key id as the pods' projected tokens; its signature
and `jti` are drawn from the twin's `serviceaccount-tokens` RNG stream, so a seed reproduces them.

The token authenticates against the twin's API as `system:serviceaccount:NS:SA` (until it
expires or the ServiceAccount is deleted), and that user gets what the stored RBAC objects bind to
it (`machinery/rbac_objects.py`), as on a real cluster: this is how `--backend kube` hands the agent
a real ServiceAccount credential, tested against a served twin.
"""

from __future__ import annotations

import base64
import hashlib
import json
import weakref
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from sregym.errors import ApiError, BadRequest, Conflict, MethodNotAllowed, invalid, not_found
from sregym.twin.api.kube.encoding import decode_body, error_response, respond
from sregym.twin.api.kube.handlers import RequestContext, subresource
from sregym.twin.api.kube.limits import read_request_body
from sregym.twin.api.kube.wall_fields import present_instant
from sregym.twin.topology import CLUSTER_DOMAIN

ISSUER = f"https://kubernetes.default.svc.{CLUSTER_DOMAIN}"
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
RNG_STREAM = "serviceaccount-tokens"
_BINDABLE = {"Pod": ("pods", "Pod"), "Secret": ("secrets", "Secret")}
# Per twin: token -> (namespace, ServiceAccount name, uid, expiry in simulated seconds).
_ISSUED: weakref.WeakKeyDictionary[Any, dict[str, tuple[str, str, str, float]]] = weakref.WeakKeyDictionary()


def issued_subject(twin: Any, token: str) -> str | None:
    """The user a TokenRequest token authenticates as: None when the twin never issued it, it
    expired, or its ServiceAccount was deleted (or recreated: another uid)."""
    record = _ISSUED.get(twin, {}).get(token)
    if record is None:
        return None
    namespace, name, uid, expires = record
    account = twin.store.peek("ServiceAccount", namespace, name)
    if account is None or account["metadata"].get("uid", "") != uid or twin.clock.now >= expires:
        return None
    return f"system:serviceaccount:{namespace}:{name}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def key_id(seed: int) -> str:
    """The signing key's id: the one the pods' projected tokens carry (userland/fs.py)."""
    return _b64url(hashlib.sha256(f"kid\x00{seed}".encode()).digest())[:43]


def _read_request(body: Any, namespace: str, name: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("the body must be an authentication.k8s.io/v1 TokenRequest object")
    api_version = body.get("apiVersion", "authentication.k8s.io/v1")
    kind = body.get("kind", "TokenRequest")
    if api_version != "authentication.k8s.io/v1":
        raise BadRequest(f"the API version in the data ({api_version}) does not match the expected API "
                         "version (authentication.k8s.io/v1)")
    if kind != "TokenRequest":
        raise BadRequest(f"the kind in the data ({kind}) does not match the expected kind (TokenRequest)")
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    if meta.get("name") and meta["name"] != name:
        raise invalid("TokenRequest", name, [("FieldValueInvalid", "metadata.name",
                                               f'Invalid value: "{meta["name"]}": must match the service '
                                               "account name if specified")], "authentication.k8s.io")
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise invalid("TokenRequest", name, [("FieldValueInvalid", "metadata.namespace",
                                               f'Invalid value: "{meta["namespace"]}": must match the '
                                               "service account namespace if specified")],
                      "authentication.k8s.io")
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    return dict(spec)


def _validated_spec(spec: dict[str, Any], name: str) -> dict[str, Any]:
    """Defaulting then validation, as for a real TokenRequest."""
    audiences = spec.get("audiences") or [ISSUER]
    if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
        raise BadRequest("json: cannot unmarshal into Go struct field TokenRequestSpec.spec.audiences of "
                         "type []string")
    expiration = spec.get("expirationSeconds")
    if expiration is None:
        expiration = DEFAULT_EXPIRATION
    if isinstance(expiration, bool) or not isinstance(expiration, int):
        raise BadRequest("json: cannot unmarshal into Go struct field TokenRequestSpec.spec."
                         "expirationSeconds of type int64")
    if expiration < MIN_EXPIRATION:
        raise invalid("TokenRequest", name, [("FieldValueInvalid", "spec.expirationSeconds",
                                               f"Invalid value: {expiration}: may not specify a duration "
                                               "less than 10 minutes")], "authentication.k8s.io")
    if expiration > MAX_EXPIRATION:
        raise invalid("TokenRequest", name, [("FieldValueInvalid", "spec.expirationSeconds",
                                               f"Invalid value: {expiration}: may not specify a duration "
                                               "larger than 2^32 seconds")], "authentication.k8s.io")
    bound = spec.get("boundObjectRef")
    if bound is not None and not isinstance(bound, dict):
        raise BadRequest("json: cannot unmarshal into Go struct field TokenRequestSpec.spec.boundObjectRef "
                         "of type v1.BoundObjectReference")
    return {"audiences": list(audiences), "expirationSeconds": expiration, "boundObjectRef": bound}


def _bound_object(ctx: RequestContext, namespace: str, sa_name: str,
                  ref: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(kind, object) of the bound object; errors as the real registry reports them."""
    api_version = str(ref.get("apiVersion") or "")
    kind = str(ref.get("kind") or "")
    group = api_version.rpartition("/")[0]
    if group or kind not in _BINDABLE:
        version = api_version.rpartition("/")[2]
        raise BadRequest(f'cannot bind token for serviceaccount "{sa_name}" to object of type '
                         f"{group}/{version}, Kind={kind}")
    plural, kind_name = _BINDABLE[kind]
    obj = ctx.twin.store.peek(kind_name, namespace, str(ref.get("name") or ""))
    if obj is None:
        raise not_found(plural, str(ref.get("name") or ""))
    uid = ref.get("uid")
    if uid and uid != obj["metadata"].get("uid"):
        raise Conflict(f'Operation cannot be fulfilled on {kind} "{ref.get("name")}": the UID in the bound '
                       f"object reference ({uid}) does not match the UID in record. The object might "
                       "have been deleted and then recreated",
                       details={"name": str(ref.get("name") or ""), "kind": kind})
    return kind, obj


def issue_token(ctx: RequestContext, namespace: str, name: str, body: Any) -> dict[str, Any]:
    """The TokenRequest the API server answers with (status.token filled in)."""
    twin = ctx.twin
    spec = _validated_spec(_read_request(body, namespace, name), name)
    account = twin.store.peek("ServiceAccount", namespace, name)
    if account is None:
        raise not_found("serviceaccounts", name)
    private: dict[str, Any] = {
        "namespace": namespace,
        "serviceaccount": {"name": name, "uid": account["metadata"].get("uid", "")},
    }
    if spec["boundObjectRef"] is not None:
        kind, obj = _bound_object(ctx, namespace, name, spec["boundObjectRef"])
        meta = obj["metadata"]
        private[kind.lower()] = {"name": meta["name"], "uid": meta.get("uid", "")}
        node_name = (obj.get("spec") or {}).get("nodeName") if kind == "Pod" else None
        node = twin.store.peek("Node", None, node_name) if node_name else None
        if node is not None:
            private["node"] = {"name": node_name, "uid": node["metadata"].get("uid", "")}
    # The JWT's times are epoch numbers inside an opaque string, so the field presenter cannot
    # see them: they are minted on the client's clock here (api/wall_time.py).
    issued = int(present_instant(int(twin.clock.now)))
    rng = twin.rng.stream(RNG_STREAM)
    claims = {
        "aud": spec["audiences"],
        "exp": issued + spec["expirationSeconds"],
        "iat": issued,
        "iss": ISSUER,
        "jti": twin.rng.uuid(RNG_STREAM),
        "kubernetes.io": private,
        "nbf": issued,
        "sub": f"system:serviceaccount:{namespace}:{name}",
    }
    header = {"alg": "RS256", "kid": key_id(twin.seed)}
    signature = rng.getrandbits(2048).to_bytes(256, "big")
    token = ".".join([_b64url(json.dumps(header, separators=(",", ":"), sort_keys=True).encode()),
                      _b64url(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode()),
                      _b64url(signature)])
    _ISSUED.setdefault(twin, {})[token] = (namespace, name, account["metadata"].get("uid", ""),
                                           twin.clock.now + spec["expirationSeconds"])
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
        "spec": spec,
        "status": {"token": token,
                   "expirationTimestamp": twin.clock.iso(twin.clock.now + spec["expirationSeconds"])},
    }


@subresource("serviceaccounts", "token")
async def service_account_token(request: Request, ctx: RequestContext, namespace: str | None,
                                name: str) -> Response:
    try:
        if request.method != "POST":
            raise MethodNotAllowed("the server does not allow this method on the requested resource",
                                   details={"group": "authentication.k8s.io", "kind": "TokenRequest"})
        body = decode_body(await read_request_body(request), request.headers.get("content-type"))
        result = issue_token(ctx, namespace or "default", name, body)
    except ApiError as err:
        return error_response(err)
    return respond(result, 201, accept=request.headers.get("accept"))


__all__ = ["ISSUER", "issue_token", "issued_subject", "key_id", "service_account_token"]
