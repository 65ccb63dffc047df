"""Field sets as server-side apply sees an object: the paths of its fields, list items and values.

The API server records who owns which field in `metadata.managedFields`, in the `FieldsV1` set
encoding of structured-merge-diff: `f:<field>` for a field, `k:{"name":"app"}` for an item of an
associative list (keyed by its list-map keys, serialised as compact JSON with sorted keys),
`v:"x"` for a value of a set-like list, and `.` under a node when the node itself (not only its
children) is a member. A path here is a tuple of those element strings.

Two walks produce sets, following upstream: `applied_set` is what an applied configuration
claims (ToFieldSet: leaves, list items, empty maps and atomic values; a map is a member only when
empty), and `compare` is what an update changed (added, modified and removed paths; a map or list
that did not exist before is a member itself, which is why an Update entry shows `.` under
`f:labels` but an Apply entry does not). The schema knowledge needed for this (list types and
keys, atomic maps) is a small table of the built-in types' `x-kubernetes-list-type`,
`x-kubernetes-list-map-keys` and `x-kubernetes-map-type` markers; a list it does not know is atomic,
as upstream treats a list without markers.
"""

from __future__ import annotations

import json
from typing import Any

from sregym.twin.machinery.objects import clone

Path = tuple[str, ...]
FieldSet = set[Path]

SELF = "."
_MISSING: Any = object()

# Associative lists: field name -> list-map keys, or a function of the parent path for names
# whose keys depend on where they are (container ports vs Service ports).
_KEYED: dict[str, tuple[str, ...]] = {
    "containers": ("name",), "initContainers": ("name",), "ephemeralContainers": ("name",),
    "env": ("name",), "volumeMounts": ("mountPath",), "volumeDevices": ("devicePath",),
    "volumes": ("name",), "imagePullSecrets": ("name",), "hostAliases": ("ip",),
    "topologySpreadConstraints": ("topologyKey", "whenUnsatisfiable"), "schedulingGates": ("name",),
    "resourceClaims": ("name",), "conditions": ("type",), "ownerReferences": ("uid",),
    "podIPs": ("ip",), "hostIPs": ("ip",), "addresses": ("type",), "secrets": ("name",),
    "resizePolicy": ("resourceName",),
}
# Set-like lists (x-kubernetes-list-type: set).
_SETS = frozenset({"finalizers", "podCIDRs"})
# Maps that are replaced as a whole (x-kubernetes-map-type: atomic): every LabelSelector, and the
# pod's nodeSelector.
_SELECTOR_NAMES = frozenset({"selector", "podSelector", "namespaceSelector", "labelSelector"})
# Scalar defaults of list-map keys: an applied item without `protocol` is keyed as TCP.
_KEY_DEFAULTS = {"protocol": "TCP"}
# Structs present in the zero value of an object (non-pointer Go fields): creating them is not
# adding them, so an Update entry shows no `.` under them.
_ZERO_PRESENT = frozenset({
    ("metadata",), ("spec",), ("status",), ("spec", "template"), ("spec", "template", "metadata"),
    ("spec", "template", "spec"), ("spec", "strategy"), ("spec", "updateStrategy"),
    ("spec", "jobTemplate"), ("spec", "jobTemplate", "spec"),
    ("spec", "jobTemplate", "spec", "template"), ("spec", "jobTemplate", "spec", "template", "spec"),
    ("spec", "jobTemplate", "spec", "template", "metadata"), ("template",),
    ("template", "metadata"), ("template", "spec"),
})
# Fields the field manager never records (server-set identity, and the bookkeeping itself).
_STRIPPED = frozenset({
    ("f:apiVersion",), ("f:kind",), ("f:metadata",), ("f:metadata", "f:name"),
    ("f:metadata", "f:namespace"), ("f:metadata", "f:uid"), ("f:metadata", "f:resourceVersion"),
    ("f:metadata", "f:generation"), ("f:metadata", "f:creationTimestamp"),
    ("f:metadata", "f:selfLink"), ("f:metadata", "f:managedFields"),
    ("f:metadata", "f:deletionTimestamp"), ("f:metadata", "f:deletionGracePeriodSeconds"),
})


def list_type(name: str, parents: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """("map", keys) | ("set", ()) | ("atomic", ()) for a list field called `name`."""
    if name == "ports":
        if "containers" in parents or "initContainers" in parents or "ephemeralContainers" in parents:
            return "map", ("containerPort", "protocol")
        if parents[-1:] == ("spec",) and len(parents) == 1:
            return "map", ("port", "protocol")
        return "atomic", ()
    if name == "addresses" and parents != ("status",):
        return "atomic", ()
    keys = _KEYED.get(name)
    if keys is not None:
        return "map", keys
    if name in _SETS:
        return "set", ()
    return "atomic", ()


def atomic_map(name: str, value: dict[str, Any], parents: tuple[str, ...]) -> bool:
    if name == "nodeSelector":
        return parents[-1:] == ("spec",)
    if name in _SELECTOR_NAMES:
        # A LabelSelector (matchLabels/matchExpressions) is atomic; a Service's plain map is not.
        return parents != ("spec",) or "matchLabels" in value or "matchExpressions" in value
    return False


def _value_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def item_key(item: Any, keys: tuple[str, ...]) -> str | None:
    """The `k:{...}` element of an associative-list item, or None when it has no key field."""
    if not isinstance(item, dict):
        return None
    found = {}
    for key in keys:
        value = item.get(key, _KEY_DEFAULTS.get(key, _MISSING))
        if value is _MISSING:
            if len(keys) == 1:
                return None
            continue
        found[key] = value
    return "k:" + _value_text(found) if found else None


def _child_names(parents: tuple[str, ...], element: str) -> tuple[str, ...]:
    return (*parents, element[2:]) if element.startswith("f:") else parents


# ============================================================================ applied configuration
def applied_set(config: dict[str, Any]) -> FieldSet:
    """The fields an applied configuration claims (upstream `ToFieldSet`), stripped of the
    fields the manager never records."""
    out: FieldSet = set()
    _walk_applied(config, (), (), out, atomic=False)
    return out - _STRIPPED


def _walk_applied(value: Any, path: Path, names: tuple[str, ...], out: FieldSet, *,
                  atomic: bool) -> None:
    if isinstance(value, dict) and not atomic:
        if not value and path:
            out.add(path)
        for key, child in value.items():
            child_names = (*names, key)
            child_path = (*path, "f:" + key)
            if isinstance(child, dict):
                _walk_applied(child, child_path, child_names, out,
                              atomic=atomic_map(key, child, names))
            elif isinstance(child, list):
                _walk_list(child, child_path, key, names, out, _walk_applied)
            else:
                out.add(child_path)
        return
    if path:
        out.add(path)


def _walk_list(items: list[Any], path: Path, name: str, names: tuple[str, ...], out: FieldSet,
               walk: Any) -> None:
    kind, keys = list_type(name, names)
    if kind == "atomic" or not items:
        out.add(path)
        return
    for item in items:
        if kind == "set":
            out.add((*path, "v:" + _value_text(item)))
            continue
        element = item_key(item, keys)
        if element is None:
            out.add(path)
            continue
        item_path = (*path, element)
        out.add(item_path)
        walk(item, item_path, (*names, name), out, atomic=False)


# ============================================================================ comparison (Update)
class Comparison:
    """What changed between two versions of an object, as sets of paths."""

    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added: FieldSet = set()
        self.modified: FieldSet = set()
        self.removed: FieldSet = set()

    def changed(self) -> FieldSet:
        return self.added | self.modified


def compare(old: dict[str, Any], new: dict[str, Any]) -> Comparison:
    """Added, modified and removed paths from `old` to `new` (upstream `TypedValue.Compare`)."""
    result = Comparison()
    _compare(old, new, (), (), result, atomic=False)
    for found in (result.added, result.modified, result.removed):
        found -= _STRIPPED
    return result


def _compare(old: Any, new: Any, path: Path, names: tuple[str, ...], out: Comparison, *,
             atomic: bool) -> None:
    if old is _MISSING:
        _collect(new, path, names, out.added, atomic=atomic)
        return
    if new is _MISSING:
        _collect(old, path, names, out.removed, atomic=atomic)
        return
    if old == new and type(old) is type(new):
        return
    if isinstance(old, dict) and isinstance(new, dict) and not atomic and (old or new):
        for key in _ordered_union(old, new):
            a, b = old.get(key, _MISSING), new.get(key, _MISSING)
            child_path = (*path, "f:" + key)
            if isinstance(a, list) or isinstance(b, list):
                _compare_list(a, b, child_path, key, names, out)
            else:
                sample = b if isinstance(b, dict) else a
                _compare(a, b, child_path, (*names, key), out,
                         atomic=isinstance(sample, dict) and atomic_map(key, sample, names))
        return
    out.modified.add(path)


def _compare_list(old: Any, new: Any, path: Path, name: str, names: tuple[str, ...],
                  out: Comparison) -> None:
    if old is _MISSING:
        _collect_list(new, path, name, names, out.added)
        return
    if new is _MISSING:
        _collect_list(old, path, name, names, out.removed)
        return
    if old == new:
        return
    kind, keys = list_type(name, names)
    if kind == "atomic" or not isinstance(old, list) or not isinstance(new, list):
        out.modified.add(path)
        return
    if kind == "set":
        before = {_value_text(v) for v in old}
        after = {_value_text(v) for v in new}
        out.added.update((*path, "v:" + t) for t in after - before)
        out.removed.update((*path, "v:" + t) for t in before - after)
        return
    before_items = _keyed(old, keys)
    after_items = _keyed(new, keys)
    if before_items is None or after_items is None:
        out.modified.add(path)
        return
    for element in _ordered_union(before_items, after_items):
        _compare(before_items.get(element, _MISSING), after_items.get(element, _MISSING),
                 (*path, element), (*names, name), out, atomic=False)


def _keyed(items: list[Any], keys: tuple[str, ...]) -> dict[str, Any] | None:
    out = {}
    for item in items:
        element = item_key(item, keys)
        if element is None:
            return None
        out[element] = item
    return out


def _collect(value: Any, path: Path, names: tuple[str, ...], out: FieldSet, *, atomic: bool) -> None:
    """Every path of a subtree that appeared (or disappeared) as a whole."""
    if isinstance(value, dict) and not atomic and value:
        if names not in _ZERO_PRESENT:
            out.add(path)
        for key, child in value.items():
            child_path = (*path, "f:" + key)
            if isinstance(child, list):
                _collect_list(child, child_path, key, names, out)
            else:
                _collect(child, child_path, (*names, key), out,
                         atomic=isinstance(child, dict) and atomic_map(key, child, names))
        return
    if path and not (names in _ZERO_PRESENT and value == {}):
        out.add(path)


def _collect_list(items: Any, path: Path, name: str, names: tuple[str, ...], out: FieldSet) -> None:
    if not isinstance(items, list):
        out.add(path)
        return
    kind, keys = list_type(name, names)
    if name != "containers":  # `containers` (no omitempty) is null, not absent, in the zero value
        out.add(path)
    if kind == "atomic" or not items:
        return
    for item in items:
        if kind == "set":
            out.add((*path, "v:" + _value_text(item)))
            continue
        element = item_key(item, keys)
        if element is None:
            continue
        _collect(item, (*path, element), (*names, name), out, atomic=False)
        out.add((*path, element))


def _ordered_union(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return list(a) + [k for k in b if k not in a]


# ============================================================================ FieldsV1 encoding
# Encoded trees by the set they encode. The same sets come back all the time (every Twin creates
# the same default objects; a controller rewrites the same status fields), and building a tree
# (a node per path element, then sorting every node) costs several times a copy of it.
_ENCODED: dict[frozenset[Path], dict[str, Any]] = {}
ENCODE_MEMO_LIMIT = 4096  # distinct sets remembered before the memo starts over


def encode(fields: FieldSet) -> dict[str, Any]:
    """The FieldsV1 tree of a set, children in byte order (`.` first); a fresh copy, so the
    caller may keep or change it."""
    key = frozenset(fields)
    tree = _ENCODED.get(key)
    if tree is None:
        if len(_ENCODED) >= ENCODE_MEMO_LIMIT:
            _ENCODED.clear()
        tree = _ENCODED[key] = _encode(key)
    return clone(tree)


def _encode(fields: frozenset[Path]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    members: set[Path] = set()
    for path in fields:
        node = root
        for element in path:
            node = node.setdefault(element, {})
        members.add(path)
    _mark_members(root, (), members)
    return _sorted_tree(root)


def _mark_members(node: dict[str, Any], path: Path, members: set[Path]) -> None:
    for element, child in node.items():
        if element == SELF:
            continue
        child_path = (*path, element)
        if child:
            if child_path in members:
                child[SELF] = {}
            _mark_members(child, child_path, members)


def _sorted_tree(node: dict[str, Any]) -> dict[str, Any]:
    # Byte order puts `.` before `f:`, `i:`, `k:` and `v:`, as every Go encoder of the map does.
    return {k: _sorted_tree(node[k]) for k in sorted(node)}


def decode(tree: Any) -> FieldSet:
    """The set a FieldsV1 tree stands for."""
    out: FieldSet = set()
    if isinstance(tree, dict):
        _decode(tree, (), out)
    return out


def _decode(node: dict[str, Any], path: Path, out: FieldSet) -> None:
    for element, child in node.items():
        if element == SELF:
            out.add(path)
            continue
        child_path = (*path, element)
        if isinstance(child, dict) and child:
            _decode(child, child_path, out)
        else:
            out.add(child_path)


def present(obj: Any, path: Path) -> bool:
    """Whether `path` exists in `obj` (a field, an item with that key, a value of a set)."""
    node = obj
    names: tuple[str, ...] = ()
    last_field = ""
    for element in path:
        if element.startswith("f:"):
            if not isinstance(node, dict) or element[2:] not in node:
                return False
            if last_field:
                names = (*names, last_field)
            last_field = element[2:]
            node = node[element[2:]]
        elif element.startswith("k:") or element.startswith("v:"):
            if not isinstance(node, list):
                return False
            if element.startswith("v:"):
                if not any("v:" + _value_text(v) == element for v in node):
                    return False
                node = None
                continue
            _kind, keys = list_type(last_field, names)
            match = [item for item in node if item_key(item, keys) == element]
            if not match:
                return False
            node = match[0]
        else:
            return False
    return True


def field_names(path: Path) -> tuple[str, ...]:
    """The field names along a path, list items left out: ("spec", "containers", "image")."""
    return tuple(e[2:] for e in path if e.startswith("f:"))


# ============================================================================ paths as text
def path_text(path: Path) -> str:
    """A path as conflicts print it: `.spec.template.spec.containers[name="app"].image`."""
    parts = []
    for element in path:
        if element.startswith("f:"):
            parts.append("." + element[2:])
        elif element.startswith("k:"):
            try:
                keyed = json.loads(element[2:])
            except ValueError:
                keyed = {}
            parts.append("[" + ",".join(f"{k}={_value_text(v)}" for k, v in sorted(keyed.items())) + "]")
        elif element.startswith("v:"):
            parts.append(f"[={element[2:]}]")
        elif element.startswith("i:"):
            parts.append(f"[{element[2:]}]")
    return "".join(parts)


__all__ = ["SELF", "Comparison", "FieldSet", "Path", "applied_set", "atomic_map", "compare", "decode", "encode",
           "field_names", "item_key", "list_type", "path_text", "present"]
