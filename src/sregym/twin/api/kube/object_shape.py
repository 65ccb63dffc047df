"""The shape checks the API server's decoder makes on a written object before validation.

Create, update, patch and server-side apply all need them (`rest.py` and `apply.py`): an object of
the wrong kind or API version, metadata of the wrong JSON type, or a patch that renames the object
is a 400 or 422 worded as upstream's decoder words it, before admission sees anything.
"""

from __future__ import annotations

from typing import Any

from sregym.errors import BadRequest, NotFound, invalid
from sregym.twin.machinery.kinds import ResourceKind


def not_found(kind: ResourceKind, name: str) -> NotFound:
    return NotFound(f'{kind.resource} "{name}" not found',
                    details={"name": name, "group": kind.group, "kind": kind.plural})


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def snippet(body: Any) -> str:
    import json

    text = json.dumps(body, separators=(",", ":"), default=str)
    return text if len(text) < 200 else text[:200] + "..."


def check_shape(call: Any, body: Any, *, name: str | None = None) -> dict[str, Any]:
    """Shape checks the decoder does before validation (mistyped fields are 400, not 422)."""
    if not isinstance(body, dict):
        raise BadRequest(f"Object of type {type(body).__name__} is not a {call.kind.kind}: "
                         "the body must be a JSON or YAML object")
    # Like the real decoder, an object without apiVersion/kind takes the endpoint's.
    body = {"apiVersion": call.kind.api_version, "kind": call.kind.kind, **body}
    if not isinstance(body["apiVersion"], str) or not isinstance(body["kind"], str):
        raise BadRequest(f"Object 'Kind' is missing in '{snippet(body)}'")
    group, _, _version = body["apiVersion"].rpartition("/")
    if group != call.kind.group:
        raise BadRequest(f"the API version in the data ({body['apiVersion']}) does not match the "
                         f"expected API version ({call.kind.api_version})")
    if body["kind"] != call.kind.kind:
        raise BadRequest(f"the kind in the data ({body['kind']}) does not match the expected kind "
                         f"({call.kind.kind})")
    meta = body.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise BadRequest("json: cannot unmarshal into Go struct field .metadata of type v1.ObjectMeta")
    for key in ("name", "generateName", "namespace", "resourceVersion", "uid"):
        if key in meta and meta[key] is not None and not isinstance(meta[key], str):
            raise BadRequest(f"json: cannot unmarshal {json_type(meta[key])} into Go struct field "
                             f"ObjectMeta.metadata.{key} of type string")
    for key in ("labels", "annotations"):
        value = meta.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise BadRequest(f"json: cannot unmarshal into Go struct field ObjectMeta.metadata.{key} "
                             "of type map[string]string")
    for key in ("finalizers",):
        value = meta.get(key)
        if value is not None and (not isinstance(value, list)
                                  or not all(isinstance(v, str) for v in value)):
            raise BadRequest(f"json: cannot unmarshal into Go struct field ObjectMeta.metadata.{key} "
                             "of type []string")
    if meta.get("ownerReferences") is not None and not (
            isinstance(meta["ownerReferences"], list)
            and all(isinstance(r, dict) for r in meta["ownerReferences"])):
        raise BadRequest("json: cannot unmarshal into Go struct field ObjectMeta.metadata."
                         "ownerReferences of type []v1.OwnerReference")
    for key in ("spec", "status"):
        if key in body and body[key] is not None and not isinstance(body[key], dict) \
                and call.kind.key not in (("", "Event"),):
            raise BadRequest(f"json: cannot unmarshal {json_type(body[key])} into Go struct field "
                             f"{call.kind.kind}.{key}")
    new = dict(body)
    new["metadata"] = dict(meta)
    new["apiVersion"] = call.kind.api_version
    if call.kind.namespaced:
        body_ns = meta.get("namespace")
        if body_ns and call.rp.namespace and body_ns != call.rp.namespace:
            raise BadRequest("the namespace of the provided object does not match the namespace "
                             "sent on the request")
        new["metadata"]["namespace"] = call.rp.namespace
    else:
        new["metadata"].pop("namespace", None)
    if name is not None and meta.get("name") not in (None, "", name):
        raise BadRequest(f"the name of the object ({meta.get('name')}) does not match the name on "
                         f"the URL ({name})")
    if name is not None:
        new["metadata"]["name"] = name
    return new


def check_patched_shape(call: Any, stored: dict[str, Any], patched: Any, name: str) -> None:
    if not isinstance(patched, dict):
        raise BadRequest("the patch produced something that is not an object")
    meta = patched.get("metadata")
    if not isinstance(meta, dict):
        raise BadRequest("the patch removed or replaced metadata")
    if meta.get("name") != name:
        raise invalid(call.kind.kind, name, [("FieldValueInvalid", "metadata.name",
                                              f'Invalid value: "{meta.get("name")}": field is immutable')],
                      call.kind.group)
    check_shape(call, {**patched, "apiVersion": patched.get("apiVersion", call.kind.api_version),
                       "kind": patched.get("kind", call.kind.kind)}, name=name)
    patched["apiVersion"] = stored.get("apiVersion", call.kind.api_version)
    patched["kind"] = call.kind.kind
    if call.kind.namespaced:
        meta["namespace"] = stored["metadata"].get("namespace")
