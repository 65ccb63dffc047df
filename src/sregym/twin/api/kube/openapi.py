"""The OpenAPI v3 (and v2) description of the served resources.

kubectl reads it twice. Before `apply`, `create -f`, `edit` and `replace` with the default
`--validate=strict`, it checks whether the PATCH operation of the object's kind declares the
`fieldValidation` query parameter; if so it leaves validation to the server (which does it, see
`machinery/decoding.py`). And `kubectl explain` prints the schemas: each group version's document
carries the upstream 1.32 definitions (`machinery/schemas.py`) its kinds reach, with their
descriptions, so the text is the upstream one. Kinds upstream does not have (CRDs) get paths but no
schema, and kinds hidden from a credential are in neither.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sregym.twin.api.kube.discovery import visible_kinds
from sregym.twin.machinery.kinds import KindRegistry, ResourceKind
from sregym.twin.machinery.schemas import REF, all_schemas, closure, schema_name
from sregym.twin.topology import KUBERNETES_VERSION

_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")

# kubectl asks for v2 only in protobuf (gnostic `openapi_v2.Document`) and only to validate kinds
# the v3 documents do not describe (a custom resource whose CRD is not created yet). A document
# with no definitions makes that client-side validation a no-op, as for any unknown kind.
V2_PROTOBUF_TYPE = "application/octet-stream"
V2_PROTOBUF = b"\x0a\x032.0"


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _query(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}


def _path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string",
                                                                     "uniqueItems": True}}


def _op(kind: ResourceKind, action: str, params: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "operationId": f"{action}{kind.kind}",
        "parameters": [_query(p) for p in params],
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": kind.group, "version": kind.version,
                                            "kind": kind.kind},
    }


def _paths_for(kind: ResourceKind) -> dict[str, Any]:
    base = "/" + _gv_path(kind.group, kind.version)
    collection = f"{base}/namespaces/{{namespace}}/{kind.plural}" if kind.namespaced \
        else f"{base}/{kind.plural}"
    item = f"{collection}/{{name}}"
    scope = [_path_param("namespace")] if kind.namespaced else []
    verbs = set(kind.verbs)
    paths: dict[str, Any] = {}
    coll: dict[str, Any] = {"parameters": [*scope, _query("pretty")]}
    if "list" in verbs:
        coll["get"] = _op(kind, "list", ("labelSelector", "fieldSelector", "limit", "continue",
                                         "resourceVersion", "watch"))
    if "create" in verbs:
        coll["post"] = _op(kind, "post", _WRITE_PARAMS)
    if "deletecollection" in verbs:
        coll["delete"] = _op(kind, "deletecollection")
    paths[collection] = coll
    if kind.virtual and not ({"get", "patch", "update", "delete"} & verbs):
        return paths
    one: dict[str, Any] = {"parameters": [_path_param("name"), *scope, _query("pretty")]}
    if "get" in verbs:
        one["get"] = _op(kind, "get")
    if "update" in verbs:
        one["put"] = _op(kind, "put", _WRITE_PARAMS)
    if "patch" in verbs:
        one["patch"] = _op(kind, "patch", (*_WRITE_PARAMS, "force"))
        # kubectl's verifier looks for the parameter at the path level.
        one["parameters"] = [*one["parameters"], *(_query(p) for p in (*_WRITE_PARAMS, "force"))]
    if "delete" in verbs:
        one["delete"] = _op(kind, "delete", ("dryRun", "gracePeriodSeconds", "propagationPolicy"))
    paths[item] = one
    return paths


def v3_document(kinds: KindRegistry, user: str, group: str, version: str) -> dict[str, Any] | None:
    served = [k for k in visible_kinds(kinds, user) if k.group == group and k.version == version]
    if not served:
        return None
    paths: dict[str, Any] = {}
    for kind in sorted(served, key=lambda k: k.plural):
        paths.update(_paths_for(kind))
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
            "paths": paths, "components": {"schemas": _schemas_for(served)}}


def _schemas_for(kinds: list[ResourceKind]) -> dict[str, Any]:
    names = [n for k in kinds if not k.custom and not k.virtual
             for n in (schema_name(k.group, k.version, k.kind),) if n]
    schemas = all_schemas()
    return {name: schemas[name] for name in closure(names)}


def _v2_schema(node: Any) -> Any:
    """An OpenAPI v3 schema in v2 form: `#/definitions/` references, no `allOf` wrappers."""
    if isinstance(node, list):
        return [_v2_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _v2_schema(v) for k, v in node.items() if k not in ("allOf", "oneOf")}
    if "oneOf" in node:  # Quantity, IntOrString: v2 has no oneOf and calls them strings
        out["type"] = "string"
    if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1 and "$ref" in node["allOf"][0]:
        out["$ref"] = node["allOf"][0]["$ref"]
    if isinstance(out.get("$ref"), str) and out["$ref"].startswith(REF):
        out["$ref"] = "#/definitions/" + out["$ref"][len(REF):]
    return out


def v3_root(kinds: KindRegistry, user: str) -> dict[str, Any]:
    """`/openapi/v3`: where each group version's document lives, with a content hash."""
    paths: dict[str, Any] = {}
    seen = sorted({(k.group, k.version) for k in visible_kinds(kinds, user)})
    for group, version in seen:
        doc = v3_document(kinds, user, group, version)
        digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
        rel = _gv_path(group, version)
        paths[rel] = {"serverRelativeURL": f"/openapi/v3/{rel}?hash={digest}"}
    return {"paths": paths}


def v2_document(kinds: KindRegistry, user: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for kind in sorted(visible_kinds(kinds, user), key=lambda k: (k.group, k.version, k.plural)):
        for path, item in _paths_for(kind).items():
            v2 = {}
            for key, value in item.items():
                if key == "parameters":
                    v2[key] = [_v2_param(p) for p in value]
                else:
                    v2[key] = {**value, "parameters": [_v2_param(p) for p in value["parameters"]]}
            paths[path] = v2
    definitions = _v2_schema(_schemas_for(visible_kinds(kinds, user)))
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
            "paths": paths, "definitions": definitions}


def _v2_param(param: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in param.items() if k != "schema"}
    out["type"] = "string"
    out["uniqueItems"] = True
    return out


__all__ = ["v2_document", "v3_document", "v3_root"]
