"""PATCH semantics of the Kubernetes API server: strategic merge, JSON merge, JSON patch, apply.

`kubectl patch`, `kubectl set image|env|resources`, `kubectl label`, `kubectl scale`, `kubectl edit` and
`kubectl apply` all send patches; what they do to an object depends on the patch type, and for the
strategic merge patch on the merge keys of the core types (containers merge by name, env by name,
ports by containerPort ...). Getting these right is what makes `kubectl set env` add one variable
instead of wiping the list. Every failure is an `ApiError` with the real server's code and wording;
nothing else ever escapes `apply_patch`.

Server-side apply ("apply") is approximated: the applied configuration is merged into the live
object with strategic-merge semantics (JSON merge for custom resources). Field ownership
(managedFields) is not tracked, so fields dropped from an applied manifest are not removed.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from sregym.errors import ApiError, BadRequest, Invalid
from sregym.twin.machinery.kinds import CHAOS_GROUP, ResourceKind
from sregym.twin.machinery.objects import clone

PATCH_TYPES = {
    "strategic": "strategic",
    "application/strategic-merge-patch+json": "strategic",
    "merge": "merge",
    "application/merge-patch+json": "merge",
    "json": "json",
    "application/json-patch+json": "json",
    "apply": "apply",
    "application/apply-patch+yaml": "apply",
}
_ACCEPTED = ("application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "
             "application/strategic-merge-patch+json")
_MISSING = object()


class UnsupportedMediaType(ApiError):
    code = 415
    reason = "UnsupportedMediaType"


def unsupported_patch_type(content_type: str) -> UnsupportedMediaType:
    return UnsupportedMediaType(
        f"the body of the request was in an unknown format - accepted media types include: {_ACCEPTED}")


def _unprocessable(detail: str) -> Invalid:
    """What the server answers when a well-formed patch cannot be applied (422, generic wording)."""
    return Invalid("the server rejected our request due to an error in our request",
                   details={"causes": [{"reason": "FieldValueInvalid", "message": detail, "field": ""}]})


def strategic_supported(kind: ResourceKind) -> bool:
    """Custom resources have no Go struct tags, so the real server refuses strategic merge for
    them (415). `apply_patch` falls back to JSON merge instead, for in-process callers; the REST
    layer can use this to answer faithfully."""
    return not (kind.custom or kind.group == CHAOS_GROUP)


# ============================================================================ entry point
def apply_patch(current: dict[str, Any], patch: Any, patch_type: str, kind: ResourceKind) -> dict[str, Any]:
    """Return a new object: `current` with `patch` applied. `patch` may be raw bytes/text or an
    already decoded value; `patch_type` is "strategic", "merge", "json", "apply" or the matching
    Content-Type. `current` is never modified."""
    mode = PATCH_TYPES.get((patch_type or "").split(";")[0].strip().lower())
    if mode is None:
        raise unsupported_patch_type(patch_type)
    try:
        body = _decode(patch, mode)
        if mode == "json":
            result = json_patch(current, body)
        elif mode == "merge":
            if not isinstance(body, dict):
                raise BadRequest("Invalid JSON Patch")
            result = merge_patch(current, body)
        else:
            if not isinstance(body, dict):
                raise BadRequest(f"json: cannot unmarshal {_go_type(body)} into Go value of type "
                                 "map[string]interface {}")
            if mode == "apply":
                _check_applied(body, current)
            if strategic_supported(kind):
                result = strategic_merge(current, body, kind)
            else:
                result = merge_patch(current, _strip_directives(body))
    except ApiError:
        raise
    except RecursionError:
        raise BadRequest("patch is nested too deeply") from None
    except Exception as exc:  # never let a malformed patch surface as a 500
        raise BadRequest(f"unable to apply patch: {exc}") from None
    return _check_result(result, current)


def _decode(patch: Any, mode: str) -> Any:
    if isinstance(patch, (bytes, bytearray)):
        try:
            patch = bytes(patch).decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("invalid character in patch: not valid UTF-8") from None
    if not isinstance(patch, str):
        return clone(patch)
    if mode == "apply":
        try:
            docs = [d for d in yaml.safe_load_all(patch) if d is not None]
        except yaml.YAMLError as exc:
            raise BadRequest(f"error converting YAML to JSON: {exc}") from None
        if len(docs) != 1:
            raise BadRequest("error decoding YAML: the applied configuration must hold exactly one object")
        return docs[0]
    try:
        return json.loads(patch)
    except json.JSONDecodeError as exc:
        raise BadRequest(_go_json_error(patch, exc)) from None
    except RecursionError:
        raise BadRequest("exceeded max depth") from None


def _go_json_error(text: str, exc: json.JSONDecodeError) -> str:
    """Go's encoding/json wording for the commonest syntax errors."""
    if exc.pos >= len(text.rstrip()):
        return "unexpected end of JSON input"
    char = text[exc.pos]
    if exc.msg.startswith("Extra data"):
        return f"invalid character '{char}' after top-level value"
    if exc.msg.startswith("Expecting property name"):
        return f"invalid character '{char}' looking for beginning of object key string"
    if exc.msg.startswith("Expecting ',' delimiter") or exc.msg.startswith("Expecting ':' delimiter"):
        return f"invalid character '{char}' after object key:value pair"
    return f"invalid character '{char}' looking for beginning of value"


def _go_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return "object"


def _check_applied(body: dict[str, Any], current: dict[str, Any]) -> None:
    if not body.get("apiVersion") or not body.get("kind"):
        raise BadRequest("invalid object type: apiVersion and kind must be set in the applied configuration")
    if body.get("kind") != current.get("kind"):
        raise BadRequest(f"the kind of the applied configuration ({body.get('kind')}) does not match the "
                         f"kind of the object ({current.get('kind')})")


def _check_result(result: Any, current: dict[str, Any]) -> dict[str, Any]:
    """What the server checks after patching: still an object of the same kind, same name."""
    if not isinstance(result, dict):
        raise BadRequest(f"json: cannot unmarshal {_go_type(result)} into Go value of type "
                         "map[string]interface {}")
    for field in ("apiVersion", "kind"):
        if not result.get(field):
            raise BadRequest(f"Object '{'Kind' if field == 'kind' else 'apiVersion'}' is missing in the "
                             "patched object")
    if result.get("kind") != current.get("kind"):
        raise BadRequest(f"the kind of the object ({result.get('kind')}) does not match the kind on the "
                         f"URL ({current.get('kind')})")
    meta = result.get("metadata")
    if not isinstance(meta, dict):
        raise BadRequest("metadata: must be an object")
    old_meta = current.get("metadata") or {}
    if meta.get("name") != old_meta.get("name"):
        raise BadRequest(f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                         f"({old_meta.get('name')})")
    if old_meta.get("namespace") and meta.get("namespace", old_meta["namespace"]) != old_meta["namespace"]:
        raise BadRequest("the namespace of the provided object does not match the namespace sent on the "
                         "request")
    return result


# ============================================================================ JSON merge (RFC 7386)
def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return clone(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return {k: clone(v) for k, v in result.items()}


# ============================================================================ JSON patch (RFC 6902)
def json_patch(document: Any, operations: Any) -> Any:
    """Apply RFC 6902 operations in order; the first failing one aborts the whole patch."""
    if not isinstance(operations, list):
        raise BadRequest(f"json: cannot unmarshal {_go_type(operations)} into Go value of type jsonpatch.Patch")
    doc = clone(document)
    for op in operations:
        if not isinstance(op, dict):
            raise BadRequest(f"json: cannot unmarshal {_go_type(op)} into Go value of type "
                             "map[string]*json.RawMessage")
        name = op.get("op")
        if name not in ("add", "remove", "replace", "move", "copy", "test"):
            raise _unprocessable(f"Unexpected kind: {name}")
        path = op.get("path")
        if not isinstance(path, str):
            raise _unprocessable(f"{name} operation failed to decode path: operation missing path field")
        if name in ("add", "replace", "test") and "value" not in op:
            raise _unprocessable(f"{name} operation failed to decode value: operation missing value field")
        if name == "add":
            doc = _pointer_add(doc, path, clone(op["value"]), name)
        elif name == "remove":
            doc, _old = _pointer_remove(doc, path, name)
        elif name == "replace":
            _pointer_get(doc, path, f"replace operation does not apply: doc is missing key: {path}")
            doc, _old = _pointer_remove(doc, path, name)
            doc = _pointer_add(doc, path, clone(op["value"]), name)
        elif name in ("move", "copy"):
            source = op.get("from")
            if not isinstance(source, str):
                raise _unprocessable(f"{name} operation failed to decode from: operation missing from field")
            if name == "move" and (path == source or path.startswith(source + "/")):
                if path != source:
                    raise _unprocessable("move operation does not apply: a location cannot be moved into "
                                         "one of its children")
                continue
            value = _pointer_get(doc, source, f"{name} operation does not apply: doc is missing from path: "
                                              f"{source}")
            if name == "move":
                doc, _old = _pointer_remove(doc, source, name)
            doc = _pointer_add(doc, path, clone(value), name)
        else:
            found = _pointer_get(doc, path, f"testing value {path} failed: test failed", allow_missing=True)
            if found is _MISSING or not _json_equal(found, op["value"]):
                raise _unprocessable(f"testing value {path} failed: test failed")
    return doc


def _tokens(path: str, op: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _unprocessable(f'{op} operation does not apply: JSON pointer must be empty or start with a "/"')
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _index(token: str, length: int, *, for_add: bool, path: str, op: str) -> int:
    if for_add and token == "-":
        return length
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise _unprocessable(f"{op} operation does not apply: invalid array index {token!r} in {path}")
    index = int(token)
    limit = length if for_add else length - 1
    if index > limit:
        raise _unprocessable(f"Unable to access invalid index: {index}: invalid index referenced in {path}")
    return index


def _container(doc: Any, tokens: list[str], path: str, op: str) -> Any:
    node = doc
    for token in tokens:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(token, len(node), for_add=False, path=path, op=op)]
        else:
            raise _unprocessable(f"{op} operation does not apply: doc is missing path: {json.dumps(path)}: "
                                 "missing value")
    return node


def _pointer_get(doc: Any, path: str, missing: str, *, allow_missing: bool = False) -> Any:
    tokens = _tokens(path, "get")
    node = doc
    for token in tokens:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and not (len(token) > 1 and token[0] == "0") \
                and int(token) < len(node):
            node = node[int(token)]
        else:
            if allow_missing:
                return _MISSING
            raise _unprocessable(missing)
    return node


def _pointer_add(doc: Any, path: str, value: Any, op: str) -> Any:
    tokens = _tokens(path, op)
    if not tokens:
        return value
    parent = _container(doc, tokens[:-1], path, op)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(last, len(parent), for_add=True, path=path, op=op), value)
    else:
        raise _unprocessable(f"{op} operation does not apply: doc is missing path: {json.dumps(path)}: "
                             "missing value")
    return doc


def _pointer_remove(doc: Any, path: str, op: str) -> tuple[Any, Any]:
    tokens = _tokens(path, op)
    if not tokens:
        return None, doc
    parent = _container(doc, tokens[:-1], path, op)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(last, len(parent), for_add=False, path=path, op=op))
    raise _unprocessable(f"{op} operation does not apply: doc is missing path: {json.dumps(path)}: "
                         "missing value")


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: unlike Python's ==, `true` is not `1`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


# ============================================================================ strategic merge
# Patch metadata of the built-in types, as the Go struct tags declare it. A "type" is the Go struct
# a map stands for; `_MAPS[type][field]` is the struct type of a nested map and `_LISTS[type][field]`
# is (merge key, element type) for lists with patchStrategy "merge" (merge key "" for a merged list
# of scalars such as finalizers). Any list not listed here is replaced wholesale.
_MAPS: dict[str, dict[str, str]] = {
    "Root": {"metadata": "ObjectMeta", "status": "Status"},
    "PodRoot": {"metadata": "ObjectMeta", "spec": "PodSpec", "status": "PodStatus"},
    "WorkloadRoot": {"metadata": "ObjectMeta", "spec": "WorkloadSpec", "status": "Status"},
    "CronJobRoot": {"metadata": "ObjectMeta", "spec": "CronJobSpec", "status": "Status"},
    "PodTemplateRoot": {"metadata": "ObjectMeta", "template": "PodTemplateSpec"},
    "ServiceRoot": {"metadata": "ObjectMeta", "spec": "ServiceSpec", "status": "Status"},
    "NodeRoot": {"metadata": "ObjectMeta", "spec": "NodeSpec", "status": "NodeStatus"},
    "NamespaceRoot": {"metadata": "ObjectMeta", "status": "Status"},
    "CronJobSpec": {"jobTemplate": "JobTemplate"},
    "JobTemplate": {"metadata": "ObjectMeta", "spec": "WorkloadSpec"},
    "WorkloadSpec": {"template": "PodTemplateSpec"},
    "PodTemplateSpec": {"metadata": "ObjectMeta", "spec": "PodSpec"},
}
_LISTS: dict[str, dict[str, tuple[str, str]]] = {
    "ObjectMeta": {"finalizers": ("", ""), "ownerReferences": ("uid", "")},
    "PodSpec": {"containers": ("name", "Container"), "initContainers": ("name", "Container"),
                "ephemeralContainers": ("name", "Container"), "volumes": ("name", ""),
                "imagePullSecrets": ("name", ""), "hostAliases": ("ip", ""),
                "topologySpreadConstraints": ("topologyKey", ""), "schedulingGates": ("name", ""),
                "resourceClaims": ("name", "")},
    "Container": {"env": ("name", ""), "volumeMounts": ("mountPath", ""), "volumeDevices": ("devicePath", ""),
                  "ports": ("containerPort", "")},
    "ServiceSpec": {"ports": ("port", "")},
    "PodStatus": {"conditions": ("type", ""), "podIPs": ("ip", ""), "hostIPs": ("ip", "")},
    "NodeSpec": {"podCIDRs": ("", "")},
    "NodeStatus": {"conditions": ("type", ""), "addresses": ("type", "")},
    "Status": {"conditions": ("type", "")},
}
_ROOTS = {
    ("", "Pod"): "PodRoot", ("", "PodTemplate"): "PodTemplateRoot", ("", "Service"): "ServiceRoot",
    ("", "Node"): "NodeRoot", ("", "ReplicationController"): "WorkloadRoot",
    ("apps", "Deployment"): "WorkloadRoot", ("apps", "ReplicaSet"): "WorkloadRoot",
    ("apps", "StatefulSet"): "WorkloadRoot", ("apps", "DaemonSet"): "WorkloadRoot",
    ("batch", "Job"): "WorkloadRoot", ("batch", "CronJob"): "CronJobRoot",
}

_PATCH = "$patch"
_RETAIN = "$retainKeys"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"
_ORDER = "$setElementOrder/"


def strategic_merge(current: dict[str, Any], patch: dict[str, Any], kind: ResourceKind) -> dict[str, Any]:
    """Strategic merge patch of a built-in object, as `k8s.io/apimachinery/.../strategicpatch`."""
    return _merge_map(clone(current), patch, _ROOTS.get(kind.key, "Root"))


def _go_map(value: dict[str, Any]) -> str:
    return "map[" + " ".join(f"{k}:{v}" for k, v in sorted(value.items())) + "]"


def _merge_map(original: dict[str, Any], patch: dict[str, Any], type_name: str) -> dict[str, Any]:
    directive = patch.get(_PATCH)
    if directive is not None:
        if directive == "replace":
            return _strip_directives({k: v for k, v in patch.items() if k != _PATCH})
        if directive == "delete":
            return {}
        if directive != "merge":
            raise BadRequest(f"Unknown patch type: {directive} in map: {_go_map(patch)}")
    retain = patch.get(_RETAIN)
    if retain is not None:
        if not isinstance(retain, list) or not all(isinstance(k, str) for k in retain):
            raise BadRequest("invalid patch format of retainKeys")
        for key, value in patch.items():
            if not key.startswith("$") and value is not None and key not in retain:
                raise _unprocessable("patch content doesn't match retainKeys list")
        original = {k: v for k, v in original.items() if k in retain}

    lists = _LISTS.get(type_name, {})
    handled: set[str] = set()
    for key, value in patch.items():
        if key.startswith(_DELETE_PRIMITIVE):
            field = key[len(_DELETE_PRIMITIVE):]
            if not isinstance(value, list):
                raise BadRequest("invalid patch format of primitive list")
            if isinstance(original.get(field), list):
                original[field] = [x for x in original[field] if not any(_json_equal(x, v) for v in value)]
    for key, order in patch.items():
        if not key.startswith(_ORDER):
            continue
        field = key[len(_ORDER):]
        if not isinstance(order, list):
            raise BadRequest("invalid patch format of setElementOrder list")
        merge_key, elem_type = lists.get(field, ("", ""))
        live = original.get(field)
        live_list = live if isinstance(live, list) else []
        patch_list = patch.get(field, [])
        if patch_list is None:
            continue
        if not isinstance(patch_list, list):
            raise BadRequest("invalid patch format of setElementOrder list")
        merged = _merge_list(live_list, patch_list, merge_key, elem_type, order=order) \
            if field in lists or field not in patch else _strip_directives(patch_list)
        original[field] = merged
        handled.add(field)

    for key, value in patch.items():
        if key.startswith("$") or key in handled:
            continue
        if value is None:
            original.pop(key, None)
            continue
        old = original.get(key, _MISSING)
        if isinstance(value, dict):
            child = _MAPS.get(type_name, {}).get(key, "")
            base = old if isinstance(old, dict) else {}
            original[key] = _merge_map(base, value, child)
        elif isinstance(value, list):
            if key in lists and isinstance(old, list):
                merge_key, elem_type = lists[key]
                original[key] = _merge_list(old, value, merge_key, elem_type)
            elif key in lists:
                original[key] = _merge_list([], value, *lists[key])
            else:
                original[key] = _strip_directives(value)
        else:
            original[key] = value
    return original


def _merge_list(original: list[Any], patch: list[Any], merge_key: str, elem_type: str, *,
                order: list[Any] | None = None) -> list[Any]:
    """Merge a list with patchStrategy "merge": scalars as a set union, maps by their merge key,
    then order the result like the real implementation (setElementOrder > patch order > live)."""
    for item in [*original, *patch]:
        if isinstance(item, list):
            raise _unprocessable("lists of lists are not supported")
    if not merge_key:
        if any(isinstance(item, dict) for item in patch):
            raise BadRequest("invalid patch format of primitive list")
        merged: list[Any] = []
        for item in [*original, *patch]:
            if not any(_json_equal(item, m) for m in merged):
                merged.append(item)
        patch_order = order if order is not None else patch
        in_patch = [m for m in merged if any(_json_equal(m, p) for p in patch_order)]
        server_only = [m for m in merged if not any(_json_equal(m, p) for p in patch_order)]
        return _normalize_order(in_patch, server_only, patch_order, original, lambda v: v)

    def key_of(item: Any) -> Any:
        return item.get(merge_key, _MISSING) if isinstance(item, dict) else _MISSING

    live = [clone(item) for item in original]
    items: list[Any] = []
    for element in patch:
        if not isinstance(element, dict):
            raise BadRequest(f"mismatched types in list: expected a map with merge key {merge_key}")
        directive = element.get(_PATCH)
        if directive == "replace":
            live = []
            continue
        if directive == "delete":
            if merge_key not in element:
                raise BadRequest(f"map: {_go_map(element)} does not contain declared merge key: {merge_key}")
            live = [item for item in live if not _json_equal(key_of(item), element[merge_key])]
            continue
        if directive not in (None, "merge"):
            raise BadRequest(f"Unknown patch type: {directive} in map: {_go_map(element)}")
        items.append(element)
    for element in items:
        if merge_key not in element:
            raise BadRequest(f"map: {_go_map(element)} does not contain declared merge key: {merge_key}")
        for index, item in enumerate(live):
            if _json_equal(key_of(item), element[merge_key]):
                base = item if isinstance(item, dict) else {}
                live[index] = _merge_map(base, element, elem_type)
                break
        else:
            live.append(_merge_map({}, element, elem_type))
    patch_keys = [key_of(e) if isinstance(e, dict) else e for e in (order if order is not None else items)]
    in_patch = [m for m in live if any(_json_equal(key_of(m), k) for k in patch_keys)]
    server_only = [m for m in live if not any(_json_equal(key_of(m), k) for k in patch_keys)]
    return _normalize_order(in_patch, server_only, patch_keys, [key_of(o) for o in original], key_of)


def _normalize_order(in_patch: list[Any], server_only: list[Any], patch_order: list[Any],
                     server_order: list[Any], key: Any) -> list[Any]:
    """Patch items sorted by the patch order, server-only items by live order, then merged so
    that items present on both sides keep their live relative order (strategicpatch's
    normalizeElementOrder + mergeSortedSlice)."""

    def position(order: list[Any], item: Any) -> int:
        k = key(item)
        for index, candidate in enumerate(order):
            if _json_equal(candidate, k):
                return index
        return -1

    left = sorted(in_patch, key=lambda item: position(patch_order, item))
    right = sorted(server_only, key=lambda item: position(server_order, item))
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li, ri = position(server_order, left[i]), position(server_order, right[j])
            if li >= 0 and ri >= 0 and ri < li:
                out.append(right[j])
                j += 1
            else:
                out.append(left[i])
                i += 1
    return out


def _strip_directives(value: Any) -> Any:
    """A patch value stored as is must not carry `$patch`-style directives into the object."""
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value
                if not (isinstance(v, dict) and set(v) == {_PATCH})]
    return value


__all__ = ["PATCH_TYPES", "UnsupportedMediaType", "apply_patch", "json_patch", "merge_patch",
           "strategic_merge", "strategic_supported", "unsupported_patch_type"]
