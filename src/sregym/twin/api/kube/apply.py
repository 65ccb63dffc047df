"""The `application/apply-patch+yaml` PATCH: server-side apply over HTTP.

What the handler adds to `machinery/serverside_apply.py`: the request's checks (apiVersion and
kind set, `fieldManager` given, `force` only as a boolean, no managedFields in the applied
configuration), create-if-absent with the create permission, which part of the object an apply
through the main resource or the `status` subresource may touch, and dry-run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.responses import Response

from sregym.errors import BadRequest, NotFound
from sregym.twin.api.kube.field_validation import check_body
from sregym.twin.api.kube.limits import check_object
from sregym.twin.api.kube.object_shape import check_patched_shape, check_shape, not_found
from sregym.twin.machinery.conversion import converter_for, served_form
from sregym.twin.machinery.managedfields import Writer
from sregym.twin.machinery.objects import clone
from sregym.twin.machinery.serverside_apply import server_side_apply as apply_config

if TYPE_CHECKING:  # rest.py imports this module lazily
    from sregym.twin.api.kube.rest import Call


def _force(call: Call) -> bool:
    raw = call.query.get("force")
    if raw is None or raw == "":
        return False
    if raw.lower() in ("true", "1"):
        return True
    if raw.lower() in ("false", "0"):
        return False
    raise BadRequest(f'force: Invalid value: "{raw}": must be a boolean')


def server_side_apply(call: Call, name: str, raw: Any, stored: dict[str, Any] | None, *,
                      subresource: str | None, dry_run: bool) -> Response:
    if not raw.get("apiVersion") or not raw.get("kind"):
        raise BadRequest("invalid object type: apiVersion and kind must be set in the applied configuration")
    meta = raw.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise BadRequest("metadata.managedFields must be nil")
    force = _force(call)
    config = check_shape(call, check_body(call, raw), name=name)
    manager = call.query.get("fieldManager") or ""
    if stored is None:
        if subresource is not None:
            raise not_found(call.kind, name)
        call.require("create", name)
    if subresource == "status":
        config = {"apiVersion": config["apiVersion"], "kind": config["kind"],
                  "metadata": {k: v for k, v in config["metadata"].items()
                               if k in ("name", "namespace", "resourceVersion")},
                  **({"status": config["status"]} if "status" in config else {})}
    elif "status" in call.kind.subresources:
        config.pop("status", None)
    recorded = subresource if subresource == "status" else None
    now = call.ctx.twin.clock.iso()
    writer = Writer(manager, recorded, applied=True)
    if stored is None:
        obj = apply_config(None, config, manager=manager, api_version=call.kind.api_version,
                           now=now, force=force)
        check_object(obj, call.kind.kind, call.kind.group)
        created = call.store.create(obj, namespace=call.namespace, dry_run=dry_run, user=call.user,
                                    writer=writer)
        return call.respond(call.present(created), 201)
    live = clone(stored)
    converted = converter_for(call.kind) is not None
    if converted:
        live = served_form(call.kind, live)
    obj = apply_config(live, config, manager=manager, api_version=call.kind.api_version, now=now,
                       force=force, subresource=recorded)
    check_patched_shape(call, stored, obj, name)
    if converted:
        obj["apiVersion"] = call.kind.api_version
    check_object(obj, call.kind.kind, call.kind.group)
    try:
        updated = call.store.update(obj, dry_run=dry_run, user=call.user, subresource=subresource,
                                    writer=writer)
    except NotFound:
        raise not_found(call.kind, name) from None
    return call.respond(call.present(updated))


__all__ = ["server_side_apply"]
