"""Kubernetes Events, recorded the way client-go's event recorder does.

Repeated occurrences of the same event (same source, object, type, reason and message) are folded
into one Event object whose `count` grows and whose `lastTimestamp` moves, exactly what
`kubectl describe` shows as "x5 over 2m".
"""

from __future__ import annotations

from typing import Any

from sregym.twin.machinery.objects import clone

AGGREGATE_MAX_EVENTS = 10
AGGREGATE_WINDOW = 600.0


class EventRecorder:
    def __init__(self, store: Any, clock: Any) -> None:
        self.store = store
        self.clock = clock
        self._index: dict[tuple[str, ...], tuple[str, str]] = {}
        self._similar: dict[tuple[str, ...], tuple[set[str], float]] = {}
        self._seq = 0

    def record(self, involved: dict[str, Any], event_type: str, reason: str, message: str, *,
               component: str, host: str | None = None, field_path: str | None = None) -> None:
        """Record a Normal/Warning event about `involved` (any stored object)."""
        meta = involved.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        key = (component, meta.get("uid", ""), field_path or "", event_type, reason, message)
        message, key = self._aggregate(key, message)
        now = self.clock.iso()
        existing = self._index.get(key)
        if existing is not None:
            ns, name = existing

            def bump(ev: dict[str, Any]) -> None:
                ev["count"] = int(ev.get("count") or 1) + 1
                ev["lastTimestamp"] = now
                ev["message"] = message

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

    def _aggregate(self, key: tuple[str, ...], message: str) -> tuple[str, tuple[str, ...]]:
        """client-go's EventAggregator: once 10 different messages share a source, object, type
        and reason within 10 minutes, further ones fold into one "(combined from similar events)"
        event (e.g. FailedCreate errors naming a different generated pod each time)."""
        similar = key[:-1]
        seen = self._similar.get(similar)
        if seen is None or self.clock.now - seen[1] > AGGREGATE_WINDOW:
            seen = (set(), self.clock.now)
            self._similar[similar] = seen
        seen[0].add(message)
        self._similar[similar] = (seen[0], self.clock.now)
        if len(seen[0]) < AGGREGATE_MAX_EVENTS:
            return message, key
        seen[0].discard(message)
        return f"(combined from similar events): {message}", (*similar, "")

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
