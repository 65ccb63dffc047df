"""The generic REST verbs over the store: get, list, create, update, patch, delete,
deletecollection, and the `status` and `scale` subresources.

Every function here runs synchronously on the server's loop (the twin is single-threaded), checks
the caller's permission first, and raises `ApiError`s that the server turns into `Status`
responses. Writes carry the caller's name (`admin`/`agent`) as the store's `user`, so admission
plugins see who wrote, and name the field manager recorded in `managedFields` (the `fieldManager`
parameter, else the User-Agent's product). Server-side apply (`application/apply-patch+yaml`)
tracks field ownership and answers conflicts (`machinery/serverside_apply.py`).
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import QueryParams
from starlette.responses import Response

from sregym.errors import ApiError, BadRequest, Forbidden, Gone, Invalid, NotFound, Timeout, invalid
from sregym.errors import not_found as missing
from sregym.twin.api.kube.encoding import patch_type_of, respond, success_status, wants_table
from sregym.twin.api.kube.field_validation import check_body, check_patched, warning_header
from sregym.twin.api.kube.handlers import RequestContext
from sregym.twin.api.kube.limits import check_json_patch, check_object
from sregym.twin.api.kube.listing import field_selector_for, label_selector_for, list_page
from sregym.twin.api.kube.object_shape import check_patched_shape, check_shape, json_type, not_found
from sregym.twin.api.kube.paths import ResourcePath
from sregym.twin.api.kube.tables import INCLUDE_OBJECT, table
from sregym.twin.machinery.authz import authorize, forbidden_message, hidden_namespaces, rbac_authorize
from sregym.twin.machinery.conversion import converter_for, served_form
from sregym.twin.machinery.kinds import ResourceKind
from sregym.twin.machinery.managedfields import Writer, manager_for_user, manager_from_user_agent
from sregym.twin.machinery.objects import clone
from sregym.twin.machinery.selectors import selector_to_string

SCALE_KIND = ResourceKind("autoscaling", "v1", "Scale", "scale")
_PROPAGATION = ("Orphan", "Background", "Foreground")
# Registries that hand back the deleted object rather than a Status (ReturnDeletedObject).
_RETURNS_DELETED = {("", "Pod")}


class Call:
    """One resolved request: who, what kind, which object, with which query and Accept."""

    def __init__(self, ctx: RequestContext, rp: ResourcePath, kind: ResourceKind,
                 query: QueryParams, accept: str | None) -> None:
        self.ctx = ctx
        self.rp = rp
        self.kind = kind
        self.query = query
        self.accept = accept
        self.user_agent = ""
        self.warnings: list[str] = []  # sent as `Warning: 299` headers with the answer
        # Aimed at a namespace hidden from the caller: authorize by RBAC alone (api/kube/invisible.py).
        self.absent = False

    @property
    def store(self) -> Any:
        return self.ctx.twin.store

    @property
    def namespace(self) -> str | None:
        return self.rp.namespace if self.kind.namespaced else None

    @property
    def user(self) -> str:
        return self.ctx.user

    def require(self, verb: str, name: str | None = None, subresource: str | None = None,
                namespace: str | None = None) -> None:
        ns = namespace if namespace is not None else self.namespace
        check = rbac_authorize if self.absent else authorize
        allowed, _reason = check(self.user, verb, self.kind.group, self.kind.plural, ns, name,
                                 subresource)
        if not allowed:
            raise Forbidden(forbidden_message(self.user, verb, self.kind.group, self.kind.plural, ns,
                                              name, subresource),
                            details={"name": name or "", "group": self.kind.group,
                                     "kind": self.kind.plural})

    def writer(self, subresource: str | None = None, *, applied: bool = False) -> Writer:
        """The field manager of this write: `fieldManager`, else the User-Agent's product."""
        manager = self.query.get("fieldManager") or manager_from_user_agent(self.user_agent) \
            or manager_for_user(self.user)
        recorded = subresource if subresource in ("status", "scale") else None
        return Writer(manager, recorded, applied)

    def respond(self, obj: Any, status: int = 200) -> Response:
        response = respond(obj, status, accept=self.accept)
        for text in self.warnings:
            header = warning_header(text)
            if header is not None:
                response.raw_headers.append((b"warning", header))
        return response

    # ------------------------------------------------------------- params
    def dry_run(self, body: dict[str, Any] | None = None) -> bool:
        values = list(self.query.getlist("dryRun"))
        if isinstance(body, dict) and isinstance(body.get("dryRun"), list):
            values += [str(v) for v in body["dryRun"]]
        for value in values:
            if value != "All":
                raise BadRequest(f'dryRun: Unsupported value: "{value}": supported values: "All"')
        return bool(values)

    def int_param(self, name: str, value: Any = None) -> int | None:
        raw = self.query.get(name) if value is None else value
        if raw in (None, ""):
            return None
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise BadRequest(f'{name}: Invalid value: "{raw}": must be an integer') from None

    def include_object(self) -> str:
        value = self.query.get("includeObject") or "Metadata"
        if value not in INCLUDE_OBJECT:
            raise BadRequest(f'includeObject: Unsupported value: "{value}"')
        return value

    def present(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The object as served at this endpoint's version."""
        if obj.get("apiVersion") == self.kind.api_version and obj.get("kind") == self.kind.kind:
            return obj
        if converter_for(self.kind) is not None:
            return served_form(self.kind, obj)
        return {**obj, "apiVersion": self.kind.api_version, "kind": self.kind.kind}

    def as_table(self, objects: list[dict[str, Any]], list_meta: dict[str, Any]) -> dict[str, Any]:
        include = self.include_object()
        conv = converter_for(self.kind)
        if conv is None:
            return table(self.kind, objects, now=self.ctx.twin.clock.now, include_object=include,
                         list_meta=list_meta)
        # The printers read the storage version (the real server prints its internal type); the
        # rows still carry the object as served at this endpoint's version.
        result = table(self.kind, [conv.to_storage(o) for o in objects], now=self.ctx.twin.clock.now,
                       include_object=include, list_meta=list_meta)
        if include == "Object":
            for row, obj in zip(result.get("rows") or [], objects, strict=False):
                row["object"] = obj
        return result

    def stored(self, name: str) -> dict[str, Any]:
        obj = self.store.peek(self.kind, self.namespace, name)
        if obj is None:
            raise not_found(self.kind, name)
        return obj



def unknown_resource() -> NotFound:
    return NotFound("the server could not find the requested resource",
                    details={"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]})


# ---------------------------------------------------------------------- reads
def get(call: Call, name: str) -> Response:
    call.require("get", name)
    obj = call.present(call.stored(name))
    if wants_table(call.accept):
        return call.respond(call.as_table([obj], {"resourceVersion": obj["metadata"].get(
            "resourceVersion", "")}))
    return call.respond(obj)


def list_(call: Call) -> Response:
    call.require("list")
    store = call.store
    check_list_resource_version(call)
    limit = call.int_param("limit") or 0
    page = list_page(store, call.kind, call.namespace,
                     labels=label_selector_for(call.query.get("labelSelector")),
                     fields=field_selector_for(call.kind, call.query.get("fieldSelector")),
                     hidden_namespaces=hidden_namespaces(call.user), limit=max(0, limit),
                     continue_token=call.query.get("continue"))
    meta: dict[str, Any] = {"resourceVersion": str(store.resource_version)}
    if page.continue_token:
        meta["continue"] = page.continue_token
        if page.remaining is not None:
            meta["remainingItemCount"] = page.remaining
    items = [call.present(o) for o in page.items]
    if wants_table(call.accept):
        return call.respond(call.as_table(items, meta))
    return call.respond({"kind": call.kind.list_kind or f"{call.kind.kind}List",
                         "apiVersion": call.kind.api_version, "metadata": meta, "items": items})


def check_list_resource_version(call: Call) -> None:
    rv = call.query.get("resourceVersion")
    match = call.query.get("resourceVersionMatch")
    if match and match not in ("NotOlderThan", "Exact"):
        raise BadRequest(f'resourceVersionMatch: Unsupported value: "{match}": supported values: '
                         '"Exact", "NotOlderThan"')
    if match and not rv:
        raise BadRequest("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
                         "unless resourceVersion is provided")
    if not rv:
        return
    try:
        wanted = int(rv)
    except ValueError:
        raise BadRequest(f'resourceVersion: Invalid value: "{rv}": must be a valid resource version') \
            from None
    current = call.store.resource_version
    if wanted > current:
        raise Timeout(f"Too large resource version: {wanted}, current: {current}",
                      details={"causes": [{"reason": "ResourceVersionTooLarge",
                                           "message": "Too large resource version"}],
                               "retryAfterSeconds": 1})
    if match == "Exact" and wanted != current:
        raise Gone(f"too old resource version: {wanted} ({current})")


# --------------------------------------------------------------------- writes



def _check_field_params(call: Call, *, apply: bool = False) -> None:
    validation = call.query.get("fieldValidation")
    if validation and validation not in ("Strict", "Warn", "Ignore"):
        raise BadRequest(f"fieldValidation: Unsupported value: \"{validation}\": supported values: "
                         '"Ignore", "Strict", "Warn"')
    manager = call.query.get("fieldManager")
    if apply and not manager:
        raise BadRequest("PATCH, application/apply-patch+yaml requests must include fieldManager "
                         "query parameter")
    if manager is not None and len(manager) > 128:
        raise BadRequest("fieldManager: Too long: may not be longer than 128")


def create(call: Call, body: Any) -> Response:
    if call.kind.namespaced and not call.rp.namespace:
        raise unknown_resource()
    call.require("create")
    _check_field_params(call)
    obj = check_shape(call, check_body(call, body))
    check_object(obj, call.kind.kind, call.kind.group)
    if call.absent:  # a namespace hidden from the caller: admission's answer for an absent one
        raise missing("namespaces", call.rp.namespace or "")
    created = call.store.create(obj, namespace=call.namespace, dry_run=call.dry_run(),
                                user=call.user, writer=call.writer())
    return call.respond(call.present(created), 201)


def update(call: Call, name: str, body: Any, subresource: str | None = None) -> Response:
    call.require("update", name, subresource)
    _check_field_params(call)
    obj = check_shape(call, check_body(call, body), name=name)
    call.stored(name)
    check_object(obj, call.kind.kind, call.kind.group)
    updated = call.store.update(obj, dry_run=call.dry_run(), user=call.user, subresource=subresource,
                                writer=call.writer(subresource))
    return call.respond(call.present(updated))


def _apply_patch(current: dict[str, Any], patch: Any, patch_type: str,
                 kind: ResourceKind) -> dict[str, Any]:
    from sregym.twin.machinery.patch import apply_patch

    return apply_patch(current, patch, patch_type, kind)


def patch(call: Call, name: str, raw: Any, content_type: str | None,
          subresource: str | None = None) -> Response:
    patch_type = patch_type_of(content_type)
    call.require("patch", name, subresource)
    _check_field_params(call, apply=patch_type == "apply")
    if patch_type == "strategic" and call.kind.custom:
        from sregym.twin.api.kube.encoding import UnsupportedMediaType

        raise UnsupportedMediaType("strategic merge patch is not supported for custom resources; "
                                   "use a JSON merge patch or a JSON patch")
    if patch_type == "json" and not isinstance(raw, list):
        raise BadRequest("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    if patch_type != "json" and not isinstance(raw, dict):
        raise BadRequest(f"error decoding patch: the patch must be a JSON object, got "
                         f"{json_type(raw)}")
    dry_run = call.dry_run()
    stored = call.store.peek(call.kind, call.namespace, name)
    if patch_type == "apply":
        from sregym.twin.api.kube.apply import server_side_apply

        return server_side_apply(call, name, raw, stored, subresource=subresource, dry_run=dry_run)
    if call.query.get("force") is not None:
        raise BadRequest("force: Forbidden: may not be specified for non-apply patch")
    if stored is None:
        raise not_found(call.kind, name)
    current = clone(stored)
    converted = converter_for(call.kind) is not None
    if converted:  # a patch applies to the object as served at the endpoint's version
        current = served_form(call.kind, current)
    if patch_type == "json":
        check_json_patch(current, raw)
    patched = _apply_patch(current, raw, patch_type, call.kind)
    check_patched(call, patched, raw, patch_type)
    check_patched_shape(call, stored, patched, name)
    if converted:
        patched["apiVersion"] = call.kind.api_version
    check_object(patched, call.kind.kind, call.kind.group)
    updated = call.store.update(patched, dry_run=dry_run, user=call.user, subresource=subresource,
                                writer=call.writer(subresource))
    return call.respond(call.present(updated))



def delete(call: Call, name: str, body: Any) -> Response:
    call.require("delete", name)
    options = body if isinstance(body, dict) else {}
    if body is not None and not isinstance(body, dict):
        raise BadRequest("the body of a DELETE must be a DeleteOptions object")
    grace = call.int_param("gracePeriodSeconds", options.get("gracePeriodSeconds")) \
        if call.query.get("gracePeriodSeconds") is None else call.int_param("gracePeriodSeconds")
    policy = call.query.get("propagationPolicy") or options.get("propagationPolicy")
    orphan = call.query.get("orphanDependents") or options.get("orphanDependents")
    if policy is None and orphan is not None:
        policy = "Orphan" if str(orphan).lower() == "true" else "Background"
    if policy is not None and policy not in _PROPAGATION:
        raise Invalid(f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                      f'"{policy}": supported values: "Foreground", "Background", "Orphan"')
    if grace is not None and grace < 0:
        grace = 0
    preconditions = options.get("preconditions") or None
    if preconditions is not None and not isinstance(preconditions, dict):
        raise BadRequest("preconditions must be an object with uid and/or resourceVersion")
    dry_run = call.dry_run(options)
    stored = call.stored(name)
    result = call.store.delete(call.kind, call.namespace, name, propagation=policy,
                               grace_period=grace, dry_run=dry_run, user=call.user,
                               preconditions=preconditions)
    still = call.store.peek(call.kind, call.namespace, name)
    if dry_run or (still is not None and still["metadata"].get("uid") == stored["metadata"].get("uid")) \
            or call.kind.key in _RETURNS_DELETED:
        return call.respond(call.present(result))
    return call.respond(success_status({"name": name, "group": call.kind.group,
                                        "kind": call.kind.plural,
                                        "uid": stored["metadata"].get("uid", "")}))


def delete_collection(call: Call, body: Any) -> Response:
    if call.kind.namespaced and not call.rp.namespace:
        raise unknown_resource()
    call.require("deletecollection")
    options = body if isinstance(body, dict) else {}
    labels = label_selector_for(call.query.get("labelSelector"))
    fields = field_selector_for(call.kind, call.query.get("fieldSelector"))
    page = list_page(call.store, call.kind, call.namespace, labels=labels, fields=fields,
                     hidden_namespaces=hidden_namespaces(call.user))
    grace = call.int_param("gracePeriodSeconds") if call.query.get("gracePeriodSeconds") \
        else call.int_param("gracePeriodSeconds", options.get("gracePeriodSeconds"))
    policy = call.query.get("propagationPolicy") or options.get("propagationPolicy")
    if policy is not None and policy not in _PROPAGATION:
        raise Invalid(f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                      f'"{policy}": supported values: "Foreground", "Background", "Orphan"')
    dry_run = call.dry_run(options)
    deleted = []
    for obj in list(page.items):
        meta = obj["metadata"]
        try:
            deleted.append(call.present(call.store.delete(
                call.kind, meta.get("namespace"), meta["name"], propagation=policy,
                grace_period=grace, dry_run=dry_run, user=call.user)))
        except NotFound:
            continue
    return call.respond({"kind": call.kind.list_kind or f"{call.kind.kind}List",
                         "apiVersion": call.kind.api_version,
                         "metadata": {"resourceVersion": str(call.store.resource_version)},
                         "items": deleted})


# ---------------------------------------------------------------- subresources
def status(call: Call, method: str, name: str, body: Any, content_type: str | None) -> Response:
    if "status" not in call.kind.subresources:
        raise unknown_resource()
    if method == "GET":
        call.require("get", name, "status")
        return call.respond(call.present(call.stored(name)))
    if method == "PUT":
        return update(call, name, body, subresource="status")
    if method == "PATCH":
        return patch(call, name, body, content_type, subresource="status")
    raise _method_not_allowed(method)


def _replicas_of(obj: dict[str, Any]) -> int:
    replicas = (obj.get("spec") or {}).get("replicas")
    return int(replicas) if isinstance(replicas, int) else 1


def scale_of(obj: dict[str, Any]) -> dict[str, Any]:
    """The autoscaling/v1 Scale view of a Deployment/ReplicaSet/StatefulSet/RC."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    selector = spec.get("selector")
    if isinstance(selector, dict) and ("matchLabels" in selector or "matchExpressions" in selector):
        selector_text = selector_to_string(selector)
    elif isinstance(selector, dict):
        selector_text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    else:
        selector_text = ""
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                          "creationTimestamp") if k in meta},
        "spec": {"replicas": _replicas_of(obj)},
        "status": {"replicas": int((obj.get("status") or {}).get("replicas") or 0),
                   "selector": selector_text},
    }


def scale(call: Call, method: str, name: str, body: Any, content_type: str | None) -> Response:
    if "scale" not in call.kind.subresources:
        raise unknown_resource()
    if method == "GET":
        call.require("get", name, "scale")
        return call.respond(scale_of(call.stored(name)))
    if method not in ("PUT", "PATCH"):
        raise _method_not_allowed(method)
    verb = "update" if method == "PUT" else "patch"
    call.require(verb, name, "scale")
    stored = call.stored(name)
    current = scale_of(stored)
    if method == "PUT":
        if not isinstance(body, dict):
            raise BadRequest("the body must be an autoscaling/v1 Scale object")
        wanted = body
    else:
        patch_type = patch_type_of(content_type)
        if patch_type == "json" and not isinstance(body, list):
            raise BadRequest("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        if patch_type != "json" and not isinstance(body, dict):
            raise BadRequest("error decoding patch: the patch must be a JSON object")
        wanted = _apply_patch(clone(current), body, "merge" if patch_type == "apply" else patch_type,
                              SCALE_KIND)
    wanted_meta = wanted.get("metadata") if isinstance(wanted.get("metadata"), dict) else {}
    rv = wanted_meta.get("resourceVersion")
    if rv and rv != stored["metadata"].get("resourceVersion"):
        from sregym.errors import conflict

        raise conflict(call.kind.resource, name)
    replicas = (wanted.get("spec") or {}).get("replicas") if isinstance(wanted.get("spec"), dict) else None
    if replicas is None:
        replicas = 0
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        raise BadRequest(f"json: cannot unmarshal {json_type(replicas)} into Go struct field "
                         "ScaleSpec.spec.replicas of type int32")
    if replicas < 0:
        raise invalid("Scale", name, [("FieldValueInvalid", "spec.replicas",
                                       f"Invalid value: {replicas}: must be greater than or equal to 0")],
                      "autoscaling")
    new = clone(stored)
    new.setdefault("spec", {})["replicas"] = replicas
    updated = call.store.update(new, dry_run=call.dry_run(), user=call.user,
                                writer=call.writer("scale"))
    return call.respond(scale_of(updated))


def _method_not_allowed(method: str) -> ApiError:
    from sregym.errors import MethodNotAllowed

    return MethodNotAllowed(f"the server does not allow this method on the requested resource "
                            f"({method})")


__all__ = ["SCALE_KIND", "Call", "create", "delete", "delete_collection", "get", "list_", "patch",
           "scale", "scale_of", "status", "unknown_resource", "update"]
