"""`pods/ephemeralcontainers`: how `kubectl debug POD --image=...` adds a debugging container.

GET returns the Pod; PATCH (kubectl sends a strategic merge patch) and PUT change only
`spec.ephemeralContainers` and answer with the Pod. As on a real API server, ephemeral containers
can be added but never changed or removed, their names must be unique among all the pod's
containers, and they may not declare ports, probes or resources; anything else the patch touches
outside `spec.ephemeralContainers` is ignored. The kubelet then starts the new container
(`status.ephemeralContainerStatuses`, see `sregym.twin.node.ephemeral`).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from sregym.errors import BadRequest, invalid, not_found
from sregym.twin.admission.defaults import default_container
from sregym.twin.api.kube.encoding import decode_body, patch_type_of, respond
from sregym.twin.api.kube.handlers import RequestContext, subresource
from sregym.twin.api.kube.limits import read_request_body
from sregym.twin.machinery.objects import clone

_FORBIDDEN_FIELDS = ("ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
                     "resources")


@subresource("pods", "ephemeralcontainers")
async def ephemeral_containers(request: Request, ctx: RequestContext, namespace: str | None,
                               name: str) -> Response:
    store = ctx.twin.store
    ns = namespace or "default"
    stored = store.peek("Pod", ns, name)
    if stored is None:
        raise not_found("pods", name)
    accept = request.headers.get("accept")
    if request.method == "GET":
        return respond(stored, accept=accept)
    if request.method not in ("PATCH", "PUT"):
        from sregym.twin.api.kube.server import not_allowed

        raise not_allowed(request.method)
    body = decode_body(await read_request_body(request), request.headers.get("content-type"))
    if request.method == "PATCH":
        from sregym.twin.machinery.kinds import BUILTIN_KINDS
        from sregym.twin.machinery.patch import apply_patch

        kind = next(k for k in BUILTIN_KINDS if k.kind == "Pod" and not k.group)
        patch_type = patch_type_of(request.headers.get("content-type"))
        if patch_type not in ("json", "merge", "strategic"):
            raise BadRequest(f"patch type {patch_type} is not supported for ephemeral containers")
        wanted = apply_patch(clone(stored), body, patch_type, kind)
    else:
        if not isinstance(body, dict):
            raise BadRequest("the body of the request was in an unknown format")
        wanted = body
    containers = [c for c in ((wanted.get("spec") or {}).get("ephemeralContainers") or [])
                  if isinstance(c, dict)]
    updated = clone(stored)
    updated["spec"]["ephemeralContainers"] = _validated(stored, name, containers)
    if not updated["spec"]["ephemeralContainers"]:
        updated["spec"].pop("ephemeralContainers")
    result = store.update(updated, user=ctx.user, subresource="ephemeralcontainers")
    return respond(result, accept=accept)


def _validated(pod: dict[str, Any], name: str, containers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    spec = pod.get("spec") or {}
    existing = {c.get("name"): c for c in spec.get("ephemeralContainers") or []}
    others = {c.get("name") for group in ("containers", "initContainers") for c in spec.get(group) or []}
    causes: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for index, container in enumerate(containers):
        field = f"spec.ephemeralContainers[{index}]"
        cname = str(container.get("name") or "")
        if not cname:
            causes.append(("FieldValueRequired", f"{field}.name", "Required value"))
            continue
        if cname in others or cname in seen:
            causes.append(("FieldValueDuplicate", f"{field}.name", f'Duplicate value: "{cname}"'))
        seen.add(cname)
        if cname in existing:
            out.append(existing[cname])
            continue
        if not container.get("image"):
            causes.append(("FieldValueRequired", f"{field}.image", "Required value"))
        for key in _FORBIDDEN_FIELDS:
            if container.get(key):
                causes.append(("FieldValueForbidden", f"{field}.{key}",
                               "Forbidden: cannot be set for an Ephemeral Container"))
        fresh = clone(container)
        default_container(fresh)
        out.append(fresh)
    sent = {c.get("name"): c for c in containers}
    for cname, old in existing.items():
        if cname not in sent:
            causes.append(("FieldValueForbidden", "spec.ephemeralContainers",
                           f'Forbidden: existing ephemeral containers "{cname}" may not be removed'))
        elif _changed(old, sent[cname]):
            causes.append(("FieldValueForbidden", "spec.ephemeralContainers",
                           f'Forbidden: existing ephemeral containers "{cname}" may not be changed'))
    if causes:
        raise invalid("Pod", name, causes)
    return out


def _changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether `new` differs from `old` beyond the defaults the server filled in."""
    filled = clone(new)
    default_container(filled)
    return filled != old
