"""List semantics: selectors, the credential's view, and `limit`/`continue` paging.

Field selectors are only supported on the fields the real API server indexes for each kind (any
other field is a 400 `field label not supported`), so a query that works here works on a real
cluster. Paging walks the store in (namespace, name) order and hands back an opaque continue token
naming the last key returned, which is what etcd-backed paging does too.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sregym.errors import BadRequest, Gone
from sregym.twin.machinery.kinds import ResourceKind
from sregym.twin.machinery.selectors import (
    FieldSelector,
    LabelSelector,
    parse_field_selector,
    parse_label_selector,
)
from sregym.twin.machinery.store import ObjectStore

_POD_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
               "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
               "status.nominatedNodeName")
_EVENT_FIELDS = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                 "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                 "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type")

FIELD_LABELS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Pod"): _POD_FIELDS,
    ("", "Event"): _EVENT_FIELDS,
    ("", "Secret"): ("type",),
    ("", "Namespace"): ("status.phase",),
    ("", "Node"): ("spec.unschedulable",),
    ("", "Service"): ("spec.clusterIP", "spec.type"),
    ("", "ReplicationController"): ("status.replicas",),
    ("", "PersistentVolume"): (),
    ("apps", "ReplicaSet"): ("status.replicas",),
    ("batch", "Job"): ("status.successful",),
}

# Field selector paths whose stored location differs from the label.
_FIELD_ALIASES = {"source": "source.component"}


def field_selector_for(kind: ResourceKind, text: str | None) -> FieldSelector:
    """Parse and check a field selector against the fields this kind supports."""
    selector = parse_field_selector(text)
    allowed = {"metadata.name", *FIELD_LABELS.get(kind.key, ())}
    if kind.namespaced:
        allowed.add("metadata.namespace")
    terms = []
    for path, op, value in selector.terms:
        if path not in allowed:
            if kind.custom:
                known = '", "'.join(sorted(allowed))
                raise BadRequest(f'"{path}" is not a known field selector: only "{known}"')
            raise BadRequest(f"field label not supported: {path}")
        if kind.key == ("", "Pod") and path == "spec.hostNetwork" and value == "false":
            terms.append((path, "!=" if op == "=" else "=", "true"))
            continue
        terms.append((_FIELD_ALIASES.get(path, path), op, value))
    return FieldSelector(tuple(terms))


def label_selector_for(text: str | None) -> LabelSelector:
    return parse_label_selector(text)


@dataclass
class Page:
    items: list[dict[str, Any]]
    continue_token: str
    remaining: int | None


def encode_continue(resource_version: int, namespace: str, name: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": resource_version, "start": [namespace, name]},
                     separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        start = data["start"]
        return int(data["rv"]), (str(start[0]), str(start[1]))
    except (ValueError, KeyError, TypeError, IndexError):
        raise BadRequest(f"continue key is not valid: {token!r}",
                         details={"causes": [{"reason": "FieldValueInvalid", "field": "continue",
                                              "message": "continue key is not valid"}]}) from None


def iter_visible(store: ObjectStore, kind: ResourceKind, namespace: str | None,
                 hidden_namespaces: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """Stored objects the caller may see (read-only dicts), in (namespace, name) order."""
    for obj in store.scan(kind, namespace):
        if hidden_namespaces:
            meta = obj.get("metadata") or {}
            ns = meta.get("namespace") if kind.namespaced else (
                meta.get("name") if kind.key == ("", "Namespace") else None)
            if ns in hidden_namespaces:
                continue
        yield obj


def list_page(store: ObjectStore, kind: ResourceKind, namespace: str | None, *,
              labels: LabelSelector, fields: FieldSelector, hidden_namespaces: tuple[str, ...],
              limit: int = 0, continue_token: str | None = None) -> Page:
    start: tuple[str, str] | None = None
    if continue_token:
        token_rv, start = decode_continue(continue_token)
        if token_rv > store.resource_version:
            raise Gone("The provided continue parameter is too old to display a consistent list "
                       "result. You can start a new list without the continue parameter.")
    items: list[dict[str, Any]] = []
    remaining = 0
    last: tuple[str, str] | None = None
    for obj in iter_visible(store, kind, namespace, hidden_namespaces):
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace", "") if kind.namespaced else "", meta.get("name", ""))
        if start is not None and key <= start:
            continue
        if not labels.matches(meta.get("labels")) or not fields.matches(obj):
            continue
        if limit and len(items) >= limit:
            remaining += 1
            continue
        items.append(obj)
        last = key
    if limit and remaining and last is not None:
        token = encode_continue(store.resource_version, *last)
        exact = labels.empty and not fields.terms
        return Page(items, token, remaining if exact else None)
    return Page(items, "", None)


__all__ = ["FIELD_LABELS", "Page", "decode_continue", "encode_continue", "field_selector_for",
           "iter_visible", "label_selector_for", "list_page"]
