"""Access reviews: what `kubectl auth can-i` and `kubectl auth whoami` ask the API server.

These resources are never stored: a POST is answered on the spot from the same authorizer the
server uses for every request (`authz.authorize` / `authz.rules_for`), so what `can-i` says is
exactly what the next request will experience.

- `authorization.k8s.io/v1 SelfSubjectAccessReview`: one yes/no question about a resource or a
  non-resource URL (`kubectl auth can-i list pods -n chaos-mesh`).
- `authorization.k8s.io/v1 SelfSubjectRulesReview`: the rules that apply in one namespace
  (`kubectl auth can-i --list`).
- `authentication.k8s.io/v1 SelfSubjectReview`: who the credential authenticates as
  (`kubectl auth whoami`).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from sregym.errors import BadRequest, MethodNotAllowed
from sregym.twin.api.kube.handlers import RequestContext, virtual
from sregym.twin.api.kube.limits import read_request_body
from sregym.twin.machinery import authz

# Groups every authenticated user belongs to, as the real authenticators report them.
_GROUPS = {
    authz.ADMIN: ["system:masters", "system:authenticated"],
    authz.AGENT: ["oncall", "system:authenticated"],
}

# What the built-in `system:discovery`, `system:public-info-viewer` and `system:basic-user`
# ClusterRoles grant every authenticated user: discovery and health endpoints.
_DISCOVERY_URLS = ("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                   "/openapi/*", "/readyz", "/version", "/version/")
_PUBLIC_URLS = ("/healthz", "/livez", "/readyz", "/version", "/version/")
_OIDC_URLS = ("/.well-known/openid-configuration", "/.well-known/openid-configuration/",
              "/openid/v1/jwks", "/openid/v1/jwks/")


def user_info(user: str) -> dict[str, Any]:
    """The `UserInfo` the authenticator attaches to requests made with this credential."""
    if user not in _GROUPS and user.startswith("system:serviceaccount:"):  # a TokenRequest token
        namespace = user.split(":")[2]
        return {"username": user, "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}",
                                             "system:authenticated"]}
    return {"username": user, "groups": list(_GROUPS.get(user, ["system:unauthenticated"]))}


async def _read_body(request: Request, kind: str) -> dict[str, Any]:
    if request.method != "POST":
        raise MethodNotAllowed("the server does not allow this method on the requested resource",
                               details={"group": "", "kind": kind})
    raw = await read_request_body(request)
    if not raw.strip():
        raise BadRequest("the body of the request was empty")
    if raw.startswith(_PROTOBUF_MAGIC):
        return _from_protobuf(raw, kind)
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        try:
            import yaml

            body = yaml.safe_load(raw)
        except Exception:
            raise BadRequest("the object provided is unrecognized (must be of type "
                             f"{kind}): couldn't get version/kind; json parse error") from None
    if not isinstance(body, dict):
        raise BadRequest(f"the object provided is unrecognized (must be of type {kind}): "
                         "json: cannot unmarshal into Go value of type struct")
    return body


# ------------------------------------------------------------------------------- protobuf
# client-go's typed clients (kubectl auth can-i / whoami) send these bodies as protobuf: the
# `k8s\0` magic, then a runtime.Unknown envelope (typeMeta=1, raw=2) around the object.
_PROTOBUF_MAGIC = b"k8s\x00"
_RESOURCE_ATTRIBUTES = ("namespace", "verb", "group", "version", "resource", "subresource", "name")


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def _fields(data: bytes) -> dict[int, bytes]:
    """Length-delimited fields of one protobuf message by number (last one wins); other wire
    types are skipped."""
    out: dict[int, bytes] = {}
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _value, i = _varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            length, i = _varint(data, i)
            if i + length > len(data):
                raise ValueError("truncated field")
            out[number] = data[i:i + length]
            i += length
        else:
            raise ValueError(f"unsupported wire type {wire}")
    return out


def _strings(data: bytes, names: tuple[str, ...]) -> dict[str, str]:
    fields = _fields(data)
    return {name: fields[n + 1].decode("utf-8", errors="replace")
            for n, name in enumerate(names) if fields.get(n + 1)}


def _from_protobuf(raw: bytes, kind: str) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded review request (only the fields the review reads)."""
    try:
        envelope = _fields(raw[len(_PROTOBUF_MAGIC):])
        obj = _fields(envelope.get(2, b""))
        spec_fields = _fields(obj.get(2, b"")) if kind != "SelfSubjectReview" else {}
        spec: dict[str, Any] = {}
        if kind == "SelfSubjectAccessReview":
            if 1 in spec_fields:
                spec["resourceAttributes"] = _strings(spec_fields[1], _RESOURCE_ATTRIBUTES)
            if 2 in spec_fields:
                spec["nonResourceAttributes"] = _strings(spec_fields[2], ("path", "verb"))
        elif kind == "SelfSubjectRulesReview":
            spec = _strings(obj.get(2, b""), ("namespace",))
    except ValueError:
        raise BadRequest(f"the object provided is unrecognized (must be of type {kind}): "
                         "failed to decode protobuf") from None
    return {"apiVersion": "", "kind": kind, "metadata": {}, "spec": spec}


def _echo(body: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """The object as the server returns it: the request's spec, fresh metadata."""
    metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    out_meta = {k: v for k, v in metadata.items() if k in ("name", "labels", "annotations")}
    out_meta["creationTimestamp"] = None
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    return {"kind": kind, "apiVersion": api_version, "metadata": out_meta, "spec": spec}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def non_resource_allowed(user: str, verb: str, path: str) -> bool:
    """Non-resource URLs: admin may do anything; others may GET discovery and health URLs."""
    if user == authz.ADMIN:
        return True
    if user not in _GROUPS or verb != "get":
        return False
    for pattern in (*_DISCOVERY_URLS, *_OIDC_URLS):
        if pattern.endswith("*"):
            if path.startswith(pattern[:-1]):
                return True
        elif path == pattern:
            return True
    return False


def review_access(user: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Answer a SubjectAccessReview spec for `user`: the `status` block."""
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    if isinstance(resource, dict):
        resource = dict(resource)
        if not resource.get("group") and "." in _text(resource.get("resource")):
            # kubectl sends `podchaos.chaos-mesh.org` as typed when discovery does not resolve
            # it; it names the group all the same.
            resource["resource"], _, resource["group"] = _text(resource["resource"]).partition(".")
        # RBAC alone: about a hidden namespace or group the agent hears what it would hear about
        # one that does not exist.
        allowed, reason = authz.rbac_authorize(
            user, _text(resource.get("verb")), _text(resource.get("group")),
            _text(resource.get("resource")), _text(resource.get("namespace")) or None,
            _text(resource.get("name")) or None, _text(resource.get("subresource")) or None)
    elif isinstance(non_resource, dict):
        allowed = non_resource_allowed(user, _text(non_resource.get("verb")),
                                       _text(non_resource.get("path")))
        reason = ""
    else:
        raise BadRequest("exactly one of nonResourceAttributes or resourceAttributes must be "
                         "specified")
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


def rules_in(user: str, namespace: str) -> dict[str, Any]:
    """The `status` of a SelfSubjectRulesReview: resource and non-resource rules that apply in
    `namespace` (the same in every namespace, hidden or absent ones included: the agent's rules
    come from a ClusterRoleBinding)."""
    rules: list[authz.PolicyRule] = list(authz.rules_for(user))
    if user not in _GROUPS and user.startswith("system:serviceaccount:"):  # what RBAC objects bind to it
        from sregym.twin.machinery.rbac_objects import bound_rules

        rules.extend(authz.PolicyRule(g, r, v) for g, r, v in bound_rules(user, namespace))
    if user in _GROUPS or user.startswith("system:serviceaccount:"):  # system:basic-user
        rules.extend(authz.BASIC_USER_RULES)
    resource_rules = [r.to_json() for r in rules]
    non_resource_rules: list[dict[str, Any]] = []
    if user == authz.ADMIN:
        non_resource_rules.append({"verbs": ["*"], "nonResourceURLs": ["*"]})
    if user in _GROUPS:
        non_resource_rules.extend([
            {"verbs": ["get"], "nonResourceURLs": list(_OIDC_URLS)},
            {"verbs": ["get"], "nonResourceURLs": list(_DISCOVERY_URLS)},
            {"verbs": ["get"], "nonResourceURLs": list(_PUBLIC_URLS)},
        ])
    return {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
            "incomplete": False}


@virtual("authorization.k8s.io", "selfsubjectaccessreviews")
async def self_subject_access_review(request: Request, ctx: RequestContext,
                                     namespace: str | None, name: str | None) -> JSONResponse:
    body = await _read_body(request, "SelfSubjectAccessReview")
    out = _echo(body, "authorization.k8s.io/v1", "SelfSubjectAccessReview")
    out["status"] = review_access(ctx.user, out["spec"])
    return JSONResponse(out, status_code=201)


@virtual("authorization.k8s.io", "selfsubjectrulesreviews")
async def self_subject_rules_review(request: Request, ctx: RequestContext,
                                    namespace: str | None, name: str | None) -> JSONResponse:
    body = await _read_body(request, "SelfSubjectRulesReview")
    out = _echo(body, "authorization.k8s.io/v1", "SelfSubjectRulesReview")
    target = _text(out["spec"].get("namespace"))
    if not target:
        raise BadRequest("no namespace on request")
    out["status"] = rules_in(ctx.user, target)
    return JSONResponse(out, status_code=201)


@virtual("authentication.k8s.io", "selfsubjectreviews")
async def self_subject_review(request: Request, ctx: RequestContext,
                              namespace: str | None, name: str | None) -> JSONResponse:
    body = await _read_body(request, "SelfSubjectReview")
    out = _echo(body, "authentication.k8s.io/v1", "SelfSubjectReview")
    out.pop("spec", None)
    out["status"] = {"userInfo": user_info(ctx.user)}
    return JSONResponse(out, status_code=201)
