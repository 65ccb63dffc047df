"""Recent changes: which objects were written after they were created, and when.

The first question of any incident review is "what changed?". Every write to an object leaves a
`managedFields` entry with its time; an object whose newest entry is well after its creation
was edited since it was deployed. The list, newest first, is where the method looks for the
change to revert. Only read-only kubectl calls through the `Ctx` cache.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sregym.agents.baseline.context import Ctx

# Writes within this many seconds of creation belong to the deployment itself (apply, defaults).
SETTLED_S = 60.0


@dataclass(frozen=True)
class Change:
    kind: str
    name: str
    at: str  # RFC 3339 time of the newest write
    manager: str
    fields: tuple[str, ...]  # top-level fields that write owns (`f:data`, `f:spec`, ...)


def _time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def edited_after_creation(meta: dict) -> Change | None:
    """The newest write of an object's metadata when it came well after the creation, else None."""
    created = _time(meta.get("creationTimestamp", ""))
    entries = [e for e in meta.get("managedFields") or [] if _time(e.get("time", ""))]
    if created is None or not entries:
        return None
    newest = max(entries, key=lambda e: _time(e["time"]))
    if (_time(newest["time"]) - created).total_seconds() < SETTLED_S:
        return None
    fields = tuple(sorted(k for k in (newest.get("fieldsV1") or {}) if k != "f:metadata"))
    return Change("", meta.get("name", ""), newest["time"], newest.get("manager", ""), fields)


def recent_changes(ctx: Ctx, kind: str) -> list[Change]:
    """Objects of `kind` in the namespace edited after creation, newest first."""
    text = ctx.get(f"get {kind.lower()}s -n {ctx.ns} --show-managed-fields -o jsonpath="
                   """'{range .items[*]}{.metadata}{"\\n"}{end}'""")
    out = []
    for line in text.splitlines():
        try:
            meta = json.loads(line)
        except ValueError:
            continue
        change = edited_after_creation(meta) if isinstance(meta, dict) else None
        if change:
            out.append(Change(kind, change.name, change.at, change.manager, change.fields))
    return sorted(out, key=lambda c: c.at, reverse=True)


__all__ = ["SETTLED_S", "Change", "edited_after_creation", "recent_changes"]
