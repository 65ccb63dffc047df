"""Kubernetes Events, recorded the way client-go's event recorder does.

Repeated occurrences of the same event (same source, object, type, reason and message) are folded
into one Event object whose `count` grows and whose `lastTimestamp` moves, exactly what
`kubectl describe` shows as "x5 over 2m".
"""

from __future__ import annotations

from typing import Any

from sregym.twin.objects import clone


class EventRecorder:
    def __init__(self, store: Any, clock: Any) -> None:
        self.store = store
        self.clock = clock
        self._index: dict[tuple[str, ...], tuple[str, str]] = {}
        self._seq = 0

    def record(self, involved: dict[str, Any], event_type: str, reason: str, message: str, *,
               component: str, host: str | None = None, field_path: str | None = None) -> None:
        """Record a Normal/Warning event about `involved` (any stored object)."""
        meta = involved.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        key = (component, meta.get("uid", ""), field_path or "", event_type, reason, message)
        now = self.clock.iso()
        existing = self._index.get(key)
        if existing is not None:
            ns, name = existing

            def bump(ev: dict[str, Any]) -> None:
                ev["count"] = int(ev.get("count") or 1) + 1
                ev["lastTimestamp"] = now

            if self.store.mutate("Event", ns, name, bump) is not None:
                return
        self._seq += 1
        stamp = int(self.clock.now * 1_000_000_000) + self._seq
        name = f"{meta.get('name', 'unknown')}.{stamp:x}"
        involved_ref: dict[str, Any] = {
            "kind": involved.get("kind"),
            "namespace": meta.get("namespace", ""),
            "name": meta.get("name"),
            "uid": meta.get("uid"),
            "apiVersion": involved.get("apiVersion"),
            "resourceVersion": meta.get("resourceVersion"),
        }
        if not involved_ref["namespace"]:
            involved_ref.pop("namespace")
        if field_path:
            involved_ref["fieldPath"] = field_path
        source: dict[str, Any] = {"component": component}
        if host:
            source["host"] = host
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved_ref,
            "reason": reason,
            "message": message,
            "source": source,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": event_type,
            "eventTime": None,
            "reportingComponent": component,
            "reportingInstance": host or "",
        }
        try:
            self.store.create(event, keep_status=True)
        except Exception:  # an event must never break the controller that records it
            return
        self._index[key] = (namespace, name)

    def normal(self, involved: dict[str, Any], reason: str, message: str, **kw: Any) -> None:
        self.record(involved, "Normal", reason, message, **kw)

    def warning(self, involved: dict[str, Any], reason: str, message: str, **kw: Any) -> None:
        self.record(involved, "Warning", reason, message, **kw)

    def list_for(self, involved: dict[str, Any]) -> list[dict[str, Any]]:
        """Events about one object, oldest first (what `kubectl describe` prints)."""
        meta = involved.get("metadata") or {}
        uid = meta.get("uid")
        out = [clone(e) for e in self.store.scan("Event", meta.get("namespace") or None)
               if (e.get("involvedObject") or {}).get("uid") == uid]
        out.sort(key=lambda e: (e.get("lastTimestamp") or "", e["metadata"]["name"]))
        return out
