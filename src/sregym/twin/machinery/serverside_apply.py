"""Server-side apply (`application/apply-patch+yaml`) with field ownership, as structured-merge-diff.

An apply by manager M sends M's whole intent for the object. The server merges it into the live
object (maps field by field, associative lists item by item, sets by value, atomic values
replaced), then removes what M applied last time but no longer does and nobody else owns, then
checks ownership: a field M's apply changes that another manager owns is a conflict (409, with
upstream's wording) unless the request forces, in which case the other managers lose it. M's
Apply entry becomes exactly the set it applied; setting a field to the value it already has
shares ownership instead of conflicting.
"""

from __future__ import annotations

from typing import Any

from sregym.errors import Conflict
from sregym.twin.machinery.fieldsets import (
    FieldSet,
    Path,
    applied_set,
    atomic_map,
    compare,
    decode,
    item_key,
    list_type,
    path_text,
)
from sregym.twin.machinery.managedfields import (
    APPLY,
    UPDATE,
    entries_of,
    entry_id,
    new_entry,
    sort_entries,
    without_paths,
)
from sregym.twin.machinery.objects import clone


def server_side_apply(live: dict[str, Any] | None, config: dict[str, Any], *, manager: str,
                      api_version: str, now: str, force: bool,
                      subresource: str | None = None) -> dict[str, Any]:
    """The object an apply of `config` by `manager` leaves, managedFields included. Raises the
    409 apply conflict when another manager owns a field it changes and `force` is false."""
    config = clone(config)
    config.get("metadata", {}).pop("managedFields", None)
    applied = applied_set(config)
    ident = (manager, APPLY, "", subresource or "")
    if live is None:
        obj = clone(config)
        if applied:
            obj.setdefault("metadata", {})["managedFields"] = [
                new_entry(manager, APPLY, api_version, now, applied, subresource)]
        return obj
    last: FieldSet = set()
    others: list[dict[str, Any]] = []
    for entry in entries_of(live):
        if entry_id(entry) == ident:
            last = decode(entry.get("fieldsV1"))
        else:
            others.append(entry)
    merged = merge(live, config)
    if last - applied:
        owned_elsewhere: FieldSet = set()
        for entry in others:
            owned_elsewhere |= decode(entry.get("fieldsV1"))
        _prune(merged, last - applied, applied | owned_elsewhere)
    diff = compare(live, merged)
    changed = diff.changed()
    conflicts: list[tuple[dict[str, Any], Path]] = []
    for entry in others:
        for path in sorted(decode(entry.get("fieldsV1")) & changed):
            conflicts.append((entry, path))
    if conflicts and not force:
        raise apply_conflict(conflicts)
    entries = []
    for entry in others:
        kept = without_paths(entry, changed | diff.removed)
        if kept is not None:
            entries.append(kept)
    if applied:
        entries.append(new_entry(manager, APPLY, api_version, now, applied, subresource))
    meta = merged.setdefault("metadata", {})
    if entries:
        meta["managedFields"] = sort_entries(entries)
    else:
        meta.pop("managedFields", None)
    return merged


# ============================================================================ merging
def merge(live: Any, config: Any, names: tuple[str, ...] = (), *, atomic: bool = False) -> Any:
    """`config` merged into `live` with the list and map semantics of the schema."""
    if not isinstance(live, dict) or not isinstance(config, dict) or atomic:
        return clone(config)
    out = dict(live)
    for key, value in config.items():
        if value is None:
            out.pop(key, None)
            continue
        old = live.get(key)
        if isinstance(value, dict):
            out[key] = merge(old, value, (*names, key), atomic=atomic_map(key, value, names))
        elif isinstance(value, list) and isinstance(old, list):
            out[key] = _merge_list(old, value, key, names)
        else:
            out[key] = clone(value)
    return out


def _merge_list(live: list[Any], config: list[Any], name: str, names: tuple[str, ...]) -> list[Any]:
    kind, keys = list_type(name, names)
    if kind == "set":
        return clone(live) + [clone(v) for v in config if v not in live]
    if kind != "map":
        return clone(config)
    by_key = {item_key(item, keys): item for item in config}
    if None in by_key or any(item_key(item, keys) is None for item in live):
        return clone(config)
    out = []
    seen = set()
    for item in live:
        element = item_key(item, keys)
        if element in by_key:
            out.append(merge(item, by_key[element], (*names, name)))
            seen.add(element)
        else:
            out.append(clone(item))
    out.extend(clone(item) for item in config if item_key(item, keys) not in seen)
    return out


# ============================================================================ pruning
def _prune(obj: dict[str, Any], dropped: FieldSet, kept: FieldSet) -> None:
    """Remove what the manager stopped applying, unless someone still owns it or something
    under it (then only the manager's claim goes)."""
    kept_prefixes = {path[:i] for path in kept for i in range(1, len(path) + 1)}
    done: list[Path] = []
    for path in sorted(dropped, key=len):
        if path in kept_prefixes or any(path[:len(d)] == d for d in done):
            continue
        if _remove(obj, path):
            done.append(path)


def _remove(obj: Any, path: Path) -> bool:
    node = obj
    names: tuple[str, ...] = ()
    for i, element in enumerate(path):
        last = i == len(path) - 1
        if element.startswith("f:"):
            key = element[2:]
            if not isinstance(node, dict) or key not in node:
                return False
            if last:
                del node[key]
                return True
            if isinstance(node[key], list):
                _kind, keys = list_type(key, names)
                child = path[i + 1]
                items = node[key]
                for index, item in enumerate(items):
                    matches = (item_key(item, keys) == child) if child.startswith("k:") else \
                        (child.startswith("v:") and child == "v:" + _json(item))
                    if matches:
                        if i + 1 == len(path) - 1:
                            del items[index]
                            return True
                        return _remove(item, path[i + 2:])
                return False
            names = (*names, key)
            node = node[key]
        else:
            return False
    return False


def _json(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


# ============================================================================ conflicts
def _who(entry: dict[str, Any]) -> str:
    text = f'"{entry.get("manager", "")}"'
    if entry.get("subresource"):
        text += f' with subresource "{entry["subresource"]}"'
    if entry.get("operation") == UPDATE:
        text += f" using {entry.get('apiVersion', '')}"
    return text


def apply_conflict(conflicts: list[tuple[dict[str, Any], Path]]) -> Conflict:
    """The 409 of an apply that would change fields other managers own (upstream wording)."""
    causes = [{"type": "FieldManagerConflict", "message": f"conflict with {_who(entry)}",
               "field": path_text(path)} for entry, path in conflicts]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {_who(entry)}: {path_text(path)}"
    else:
        by_manager: dict[str, list[Path]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(_who(entry), []).append(path)
        lines = []
        for who in sorted(by_manager):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {path_text(p)}" for p in by_manager[who])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return Conflict(message, details={"causes": causes})


__all__ = ["apply_conflict", "merge", "server_side_apply"]
