"""`metadata.managedFields`: who wrote which field, with which operation and when.

Every write through the store records an entry the way the API server's field manager does:
an Update by `manager` owns what it added or changed (and gives up what it removed), and every
other manager loses the fields it changed. Entries are identified by manager, operation,
subresource and (for Update) apiVersion, merge when the same writer writes again, disappear when
they own nothing, and are kept in upstream's order (Apply before Update, then by time, manager,
apiVersion, subresource). Times are the simulated clock's RFC 3339, like creationTimestamp.

Writes name their manager with a `Writer`. The REST layer passes the `fieldManager` of the
request (kubectl sends `kubectl-edit`, `kubectl-scale` ...) or the User-Agent's product; in-process
writers (controllers, the kubelet, the scheduler) are named from the user they write as, with
the names the real components' User-Agents give (`kube-controller-manager`, `kubelet`,
`kube-scheduler`). Server-side apply lives in `machinery/serverside_apply.py`; it computes the
entries itself and hands the store an applied `Writer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sregym.twin.machinery.fieldsets import (
    FieldSet,
    Path,
    compare,
    decode,
    encode,
    field_names,
    present,
)

UPDATE = "Update"
APPLY = "Apply"
# Subresources whose writes the field manager records as themselves; pods/binding goes straight
# to storage upstream and records nothing.
RECORDED_SUBRESOURCES = frozenset({"status", "scale"})
UNRECORDED_SUBRESOURCES = frozenset({"binding"})
# Fields the registry and admission set after the field manager has run (service account,
# priority and default tolerations of a pod, its QoS class and phase; a Service's allocated
# addresses): upstream attributes them to nobody unless the request itself carried them.
_SET_AFTER_FIELD_MANAGER: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("", "Pod"): (("spec", "serviceAccountName"), ("spec", "serviceAccount"), ("spec", "priority"),
                  ("spec", "preemptionPolicy"), ("spec", "tolerations"), ("spec", "volumes"),
                  ("spec", "containers", "volumeMounts"), ("spec", "initContainers", "volumeMounts"),
                  ("status",)),
    ("", "Service"): (("spec", "clusterIP"), ("spec", "clusterIPs"), ("spec", "ipFamilies"),
                      ("spec", "ipFamilyPolicy")),
}


@dataclass(frozen=True)
class Writer:
    """Who writes, as the field manager records it. `subresource` is the recorded subresource
    (the write path may differ, as for `scale`); `applied` marks an object whose managedFields
    server-side apply has already computed."""

    manager: str
    subresource: str | None = None
    applied: bool = False


def manager_for_user(user: str) -> str:
    """The manager an in-process write by `user` records: the product name the real component's
    User-Agent carries."""
    if user.startswith("system:node"):
        return "kubelet"
    if user == "system:kube-scheduler":
        return "kube-scheduler"
    if user.startswith("system:serviceaccount:kube-system:") or user == "system:kube-controller-manager":
        return "kube-controller-manager"
    if user in ("system:apiserver", "system:apiextensions-apiserver"):
        return "kube-apiserver"
    # People (the admin credential, an operator's script, the agent) write with kubectl.
    return "kubectl-client-side-apply"


def manager_from_user_agent(user_agent: str) -> str:
    """Upstream's default manager: the User-Agent up to its first `/`, at most 128 characters."""
    return user_agent.split("/", 1)[0][:128]


def entries_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    value = (obj.get("metadata") or {}).get("managedFields")
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def entry_id(entry: dict[str, Any]) -> tuple[str, str, str, str]:
    operation = entry.get("operation") or ""
    return (entry.get("manager") or "", operation,
            "" if operation == APPLY else entry.get("apiVersion") or "", entry.get("subresource") or "")


def new_entry(manager: str, operation: str, api_version: str, now: str, fields: FieldSet,
              subresource: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": api_version,
                             "time": now, "fieldsType": "FieldsV1", "fieldsV1": encode(fields)}
    if subresource:
        entry["subresource"] = subresource
    return entry


def sort_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda e: (e.get("operation") or "", e.get("time") or "",
                                          e.get("manager") or "", e.get("apiVersion") or "",
                                          e.get("subresource") or ""))


def take_request_entries(new: dict[str, Any], stored: dict[str, Any] | None) -> None:
    """Which entries a write starts from: the request's own when it sends some (a client that
    migrates ownership, as kubectl does after client-side apply), the stored ones when it sends
    none or an empty list, and none when it sends `[{}]` (upstream's way to reset them)."""
    meta = new.setdefault("metadata", {})
    sent = meta.get("managedFields")
    if isinstance(sent, list) and sent and all(isinstance(e, dict) and not e for e in sent):
        meta.pop("managedFields", None)
        return
    if not sent:
        kept = (stored or {}).get("metadata", {}).get("managedFields") if stored else None
        if kept:
            meta["managedFields"] = kept
        else:
            meta.pop("managedFields", None)


def record_update(old: dict[str, Any] | None, new: dict[str, Any], writer: Writer, *,
                  api_version: str, now: str, request: dict[str, Any] | None = None,
                  kind_key: tuple[str, str] = ("", "")) -> None:
    """Stamp `new` (in place) with the managedFields after an Update by `writer`. `request` is
    the object as sent, before admission: fields admission added that it lacks are nobody's."""
    diff = compare(old or {}, new)
    changed = diff.changed()
    late = _SET_AFTER_FIELD_MANAGER.get(kind_key) if writer.subresource is None else None
    if late and request is not None:
        changed = {p for p in changed
                   if not _starts_with_any(field_names(p), late) or present(request, p)}
    removed = diff.removed
    ident = (writer.manager, UPDATE, api_version, writer.subresource or "")
    entries: list[dict[str, Any]] = []
    own: FieldSet | None = None
    for entry in entries_of(new):
        if entry_id(entry) == ident:
            own = decode(entry.get("fieldsV1"))
            continue
        if changed or removed:
            entry = without_paths(entry, changed | removed)
            if entry is None:
                continue
        entries.append(entry)
    mine = ((own or set()) | changed) - removed
    if mine:
        entries.append(new_entry(writer.manager, UPDATE, api_version, now, mine, writer.subresource))
    _store_entries(new, entries)


def _starts_with_any(names: tuple[str, ...], prefixes: tuple[tuple[str, ...], ...]) -> bool:
    return any(names[:len(prefix)] == prefix for prefix in prefixes)


def without_paths(entry: dict[str, Any], paths: FieldSet) -> dict[str, Any] | None:
    """The entry with `paths` no longer owned (itself when it owned none of them); None when it
    ends up owning nothing."""
    tree = entry.get("fieldsV1")
    if not isinstance(tree, dict) or not any(_member(tree, p) for p in paths):
        return entry
    remaining = decode(tree) - paths
    if not remaining:
        return None
    return {**entry, "fieldsV1": encode(remaining)}


def _member(tree: dict[str, Any], path: Path) -> bool:
    node: Any = tree
    for element in path:
        if not isinstance(node, dict):
            return False
        node = node.get(element)
        if node is None:
            return False
    return isinstance(node, dict) and (not node or "." in node)


def _store_entries(obj: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    meta = obj.setdefault("metadata", {})
    if entries:
        meta["managedFields"] = sort_entries(entries)
    else:
        meta.pop("managedFields", None)


__all__ = ["APPLY", "RECORDED_SUBRESOURCES", "UNRECORDED_SUBRESOURCES", "UPDATE", "Writer",
           "entries_of", "entry_id", "manager_for_user", "manager_from_user_agent", "new_entry",
           "record_update", "sort_entries", "take_request_entries", "without_paths"]
