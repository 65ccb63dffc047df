"""The Kubernetes API server's input bounds, with the errors the real components give.

A real cluster stops oversized or pathological input at several layers, and an agent (or a bug
in one) that sends it must see the same answers here:

- **request bodies** over 3 MiB (`MaxRequestBodyBytes`): `413 Request entity too large: limit
  is 3145728`, before anything is decoded;
- **YAML** that expands through aliases (a "billion laughs" document) or nests too deeply: the
  YAML decoder's `yaml: document contains excessive aliasing` / `yaml: exceeded max depth of
  10000`, checked on the node graph before anything is constructed;
- **JSON** nested deeper than the decoder allows: `exceeded max depth` (Go stops at 10000 levels;
  the twin at `MAX_DEPTH`, since its own code recurses over objects);
- **JSON patches** with more than 10000 operations (413) or whose `copy` operations would grow
  the object by more than 3 MiB (the json-patch library's accumulated-copy error, 422);
- **ConfigMaps and Secrets** over 1 MiB of data: validation's `Too long: must have at most
  1048576 bytes` (422);
- **any object** whose stored form exceeds etcd's 1.5 MiB request limit: `etcdserver: request is
  too large`, which the real API server passes through as a 500 (kubernetes/kubernetes#112152).
  The twin measures the compact JSON form (etcd stores protobuf, a little smaller).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

import yaml

from sregym.errors import ApiError, BadRequest, invalid
from sregym.twin.machinery.decoding import object_pairs

MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
ETCD_MAX_REQUEST_BYTES = 1536 * 1024
MAX_CONFIG_BYTES = 1024 * 1024  # core.MaxSecretSize, also the ConfigMap limit
MAX_JSON_PATCH_OPERATIONS = 10_000
JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024
MAX_DEPTH = 100
GO_MAX_DEPTH = 10_000
# Go's yaml decoder allows aliases while they expand to a bounded share of the document; the twin
# refuses a document that would expand to more than this many nodes through them.
MAX_ALIAS_EXPANSION = 200_000


class RequestEntityTooLarge(ApiError):
    code = 413
    reason = "RequestEntityTooLarge"


class EtcdRequestTooLarge(ApiError):
    """etcd's refusal, relayed by the API server as an unclassified (500) error."""

    code = 500
    reason = ""

    def to_status(self) -> dict[str, Any]:
        status = super().to_status()
        status.pop("reason", None)
        return status


def body_too_large(limit: int = MAX_REQUEST_BODY_BYTES) -> RequestEntityTooLarge:
    return RequestEntityTooLarge(f"Request entity too large: limit is {limit}")


async def read_request_body(request: Any) -> bytes:
    """The body of a write, at most `MAX_REQUEST_BODY_BYTES` (413 beyond, before decoding)."""
    from sregym.twin.api.body import BodyTooLarge, read_body

    try:
        return await read_body(request, MAX_REQUEST_BODY_BYTES)
    except BodyTooLarge:
        raise body_too_large() from None


# ------------------------------------------------------------------------------- decoding
def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Iteratively (no recursion) refuse JSON values nested deeper than `limit`."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise BadRequest("couldn't get version/kind; json parse error: exceeded max depth")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, dict | list))


def load_json(raw: bytes) -> Any:
    try:
        # Repeated keys are kept track of: field validation reports them (`duplicate field`).
        value = json.loads(raw, object_pairs_hook=object_pairs)
    except RecursionError:
        raise BadRequest("couldn't get version/kind; json parse error: exceeded max depth") from None
    check_depth(value)
    if _SURROGATE_ESCAPE.search(raw):
        value = _without_surrogates(value)
    return value


# `\ud800`-style escapes decode to lone surrogates in Python; Go's decoder turns them into U+FFFD.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def _without_surrogates(value: Any) -> Any:
    """Escaped surrogate pairs joined (YAML decodes them separately), lone ones as U+FFFD."""
    if isinstance(value, str):
        if not _SURROGATES.search(value):
            return value
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: iterative, depth-bounded


class _BoundedLoader(_Loader):
    """SafeLoader (on libyaml where available) that measures the composed node graph before
    constructing anything."""

    def get_single_node(self) -> Any:
        try:
            node = super().get_single_node()
        except RecursionError:
            raise yaml.YAMLError(f"yaml: exceeded max depth of {GO_MAX_DEPTH}") from None
        except yaml.YAMLError as exc:
            if "maximum nesting depth" in str(exc):
                raise yaml.YAMLError(f"yaml: exceeded max depth of {GO_MAX_DEPTH}") from None
            raise
        if node is not None:
            _check_nodes(node)
        return node


def _check_nodes(root: Any) -> None:
    """Expanded size and depth of a node graph whose aliases are shared nodes: an iterative
    post-order walk memoising each node's expansion, so a billion laughs costs its *written*
    size to measure."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        nid = id(node)
        if nid in sizes:
            continue
        kids = _children(node)
        if children_done:
            open_nodes.discard(nid)
            sizes[nid] = 1 + sum(sizes[id(c)] for c in kids)
            depths[nid] = 1 + max((depths[id(c)] for c in kids), default=0)
            if sizes[nid] > MAX_ALIAS_EXPANSION:
                raise yaml.YAMLError("yaml: document contains excessive aliasing")
            if depths[nid] > MAX_DEPTH:
                raise yaml.YAMLError(f"yaml: exceeded max depth of {GO_MAX_DEPTH}")
            continue
        if len(open_nodes) > MAX_DEPTH:
            raise yaml.YAMLError(f"yaml: exceeded max depth of {GO_MAX_DEPTH}")
        open_nodes.add(nid)
        stack.append((node, True))
        for child in kids:
            if id(child) in open_nodes:
                raise yaml.YAMLError("yaml: anchor value contains itself")
            if id(child) not in sizes:
                stack.append((child, False))


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_yaml(text: str) -> Any:
    value = yaml.load(text, Loader=_BoundedLoader)  # a SafeLoader subclass
    check_depth(value)
    return _without_surrogates(value)


# ----------------------------------------------------------------------------- patches
def check_json_patch(document: Any, operations: Any) -> None:
    """The API server's bounds on a JSON patch: operation count, then accumulated copy size."""
    if not isinstance(operations, list):
        return
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise RequestEntityTooLarge(
            f"Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}")
    if not any(isinstance(op, dict) and op.get("op") == "copy" for op in operations):
        return
    from sregym.twin.machinery.patch import json_patch

    doc = document
    copied = 0
    pending: list[Any] = []
    for op in operations:
        if isinstance(op, dict) and op.get("op") == "copy" and isinstance(op.get("from"), str):
            if pending:
                doc = json_patch(doc, pending)
                pending = []
            copied += _json_size(_pointer(doc, op["from"]))
            if copied > JSON_PATCH_MAX_COPY_BYTES:
                from sregym.errors import Invalid

                detail = (f"Unable to complete the copy, the accumulated size increase of copy is "
                          f"{copied}, exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}")
                raise Invalid("the server rejected our request due to an error in our request",
                              details={"causes": [{"reason": "FieldValueInvalid", "message": detail,
                                                   "field": ""}]})
        pending.append(op)


def _pointer(doc: Any, path: str) -> Any:
    node = doc
    for token in path.split("/")[1:] if path else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None  # the patch itself reports the missing path
    return node


def _json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))


# ----------------------------------------------------------------------------- objects
def check_object(obj: dict[str, Any], kind: str, group: str = "") -> None:
    """Refuse an object about to be stored: config size validation, then etcd's limit."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    if group == "" and kind == "ConfigMap":
        total = _data_size(obj.get("data"), b64=False) + _data_size(obj.get("binaryData"), b64=True)
        if total > MAX_CONFIG_BYTES:
            raise invalid("ConfigMap", name, [("FieldValueTooLong", "[]",
                                               f"Too long: must have at most {MAX_CONFIG_BYTES} bytes")])
    elif group == "" and kind == "Secret":
        total = _data_size(obj.get("data"), b64=True) + _data_size(obj.get("stringData"), b64=False)
        if total > MAX_CONFIG_BYTES:
            raise invalid("Secret", name, [("FieldValueTooLong", "data",
                                            f"Too long: must have at most {MAX_CONFIG_BYTES} bytes")])
    if _json_size(obj) > ETCD_MAX_REQUEST_BYTES:
        raise EtcdRequestTooLarge("etcdserver: request is too large")


def _data_size(data: Any, *, b64: bool) -> int:
    if not isinstance(data, dict):
        return 0
    total = 0
    for value in data.values():
        if not isinstance(value, str):
            continue
        if b64:
            try:
                total += len(base64.b64decode(value, validate=False))
            except (binascii.Error, ValueError):
                total += len(value) * 3 // 4
        else:
            total += len(value.encode("utf-8", "surrogatepass"))
    return total


__all__ = [
    "ETCD_MAX_REQUEST_BYTES",
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "MAX_JSON_PATCH_OPERATIONS",
    "MAX_REQUEST_BODY_BYTES",
    "EtcdRequestTooLarge",
    "RequestEntityTooLarge",
    "body_too_large",
    "check_depth",
    "check_json_patch",
    "check_object",
    "load_json",
    "load_yaml",
    "read_request_body",
]
