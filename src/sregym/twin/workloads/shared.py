"""What the workload controllers share: pod predicates, kube's template hash, an owner index.

Deployment, ReplicaSet, StatefulSet, DaemonSet and Job controllers all ask the same questions
(is this pod active? ready? available for minReadySeconds?) and all name things after a hash of a
pod template. Keeping one implementation means they can never disagree, and the owner index lets
each controller find its pods in O(own pods) per tick instead of scanning every pod.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sregym.twin.clock import parse_time
from sregym.twin.machinery.store import WatchEvent

if TYPE_CHECKING:
    from sregym.twin.machinery.index import Index
    from sregym.twin.twin import Twin

# rand.SafeEncodeString's alphabet: no vowels, no confusable digits.
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


# ------------------------------------------------------------------ hashing
def fnv32a(data: bytes, start: int = _FNV_OFFSET) -> int:
    h = start
    for byte in data:
        h ^= byte
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """`rand.SafeEncodeString`: map each character onto the safe alphabet."""
    return "".join(_SAFE_ALPHABET[ord(ch) % len(_SAFE_ALPHABET)] for ch in text)


def compute_hash(obj: Any, collision_count: int | None = None) -> str:
    """`controller.ComputeHash`: FNV-32a of the object (plus the collision count), rendered as
    decimal then safe-encoded, which gives kube's familiar `7d4b9c8f5d` shape."""
    data = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    h = fnv32a(data)
    if collision_count:
        h = fnv32a(int(collision_count).to_bytes(4, "little"), h)
    return safe_encode(str(h))


# ------------------------------------------------------------------ pod predicates
@lru_cache(maxsize=65536)
def ts(text: str) -> float:
    """Parse an RFC 3339 timestamp (cached: controllers parse the same stamps every tick)."""
    return parse_time(text)


def pod_phase(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def is_terminating(pod: dict[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def is_active(pod: dict[str, Any]) -> bool:
    """`controller.IsPodActive`: not terminal and not being deleted."""
    return pod_phase(pod) not in ("Succeeded", "Failed") and not is_terminating(pod)


def ready_condition(pod: dict[str, Any]) -> dict[str, Any] | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond
    return None


def is_ready(pod: dict[str, Any]) -> bool:
    cond = ready_condition(pod)
    return cond is not None and cond.get("status") == "True"


def is_available(pod: dict[str, Any], min_ready_seconds: int, now: float) -> bool:
    """Ready for at least `minReadySeconds` (`podutil.IsPodAvailable`)."""
    cond = ready_condition(pod)
    if cond is None or cond.get("status") != "True":
        return False
    if not min_ready_seconds:
        return True
    since = cond.get("lastTransitionTime")
    return bool(since) and ts(since) + min_ready_seconds < now


def ready_since(pod: dict[str, Any]) -> float | None:
    cond = ready_condition(pod)
    if cond is None or cond.get("status") != "True" or not cond.get("lastTransitionTime"):
        return None
    return ts(cond["lastTransitionTime"])


def restart_count(pod: dict[str, Any]) -> int:
    return sum(int(s.get("restartCount") or 0)
               for s in (pod.get("status") or {}).get("containerStatuses") or [])


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """`intstr.GetScaledValueFromIntOrPercent`: an int, or a percentage of `total` rounded up or
    down."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.endswith("%"):
        pct = int(text[:-1] or 0)
        scaled = pct * total
        return -(-scaled // 100) if round_up else scaled // 100
    return int(text)


# ------------------------------------------------------------------ owner index
def controller_uid(obj: dict[str, Any]) -> str | None:
    """The uid of the object's controller ownerReference (None: not controlled)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref.get("uid")
    return None


def _by_controller(obj: dict[str, Any]) -> tuple[str, ...]:
    uid = controller_uid(obj)
    return () if uid is None else (uid,)


class OwnerIndex:
    """Objects grouped by the uid of their controller ownerReference, and a per-owner change
    counter. One per twin (`OwnerIndex.of(twin)`); readers get stored dicts: never mutate them.

    The grouping is a store index per child kind (`store.add_index`, made on the first question
    about that kind). The counter is a change feed, not an index: bumping the owner an object
    leaves needs the owner it had before the write, so it stays a store listener that remembers
    each object's controller."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self._indexes: dict[tuple[str, str], Index] = {}
        self._owner_of: dict[tuple[tuple[str, str], str, str], str] = {}
        self._versions: dict[str, int] = {}
        for kind, obj in twin.store.all_objects():
            self._add(kind.key, obj)
        twin.store.add_listener(self._on_event)

    @classmethod
    def of(cls, twin: Twin) -> OwnerIndex:
        index = twin.services.owner_index
        if index is None:
            index = cls(twin)
            twin.services.owner_index = index
        return index

    def children(self, kind_key: tuple[str, str], owner_uid: str) -> list[dict[str, Any]]:
        """Controlled objects of `kind_key` (e.g. ("", "Pod")), sorted by name."""
        index = self._indexes.get(kind_key)
        if index is None:
            kind = next(k for k in self.twin.store.kinds.kinds if k.key == kind_key)
            index = self._indexes[kind_key] = self.twin.store.add_index(kind, _by_controller)
        bucket = dict(zip(index.names(owner_uid), index.get(owner_uid), strict=True))
        return [bucket[k] for k in sorted(bucket)]

    def version(self, owner_uid: str) -> int:
        """A counter bumped whenever any controlled object of this owner is added, changed or
        removed: controllers compare it to skip owners whose world did not change."""
        return self._versions.get(owner_uid, 0)

    def _bump(self, owner_uid: str | None) -> None:
        if owner_uid is not None:
            self._versions[owner_uid] = self._versions.get(owner_uid, 0) + 1

    def _add(self, kind_key: tuple[str, str], obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        ident = (kind_key, meta.get("namespace", ""), meta.get("name", ""))
        owner = controller_uid(obj)
        previous = self._owner_of.get(ident)
        self._bump(previous)
        if owner is None:
            self._owner_of.pop(ident, None)
            return
        self._owner_of[ident] = owner
        if owner != previous:
            self._bump(owner)

    def _remove(self, kind_key: tuple[str, str], obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        self._bump(self._owner_of.pop((kind_key, meta.get("namespace", ""), meta.get("name", "")), None))

    def _on_event(self, event: WatchEvent) -> None:
        kind_key = event.kind.key
        if kind_key == ("", "Event"):
            return
        if event.type == "DELETED":
            self._remove(kind_key, event.object)
        else:
            self._add(kind_key, event.object)


class ChangeGate:
    """Skip an owner's sync when neither it nor its children changed and no timer is due.

    Real controllers are event driven; the twin polls every tick, so this gate restores the
    event-driven cost: an owner is synced when its resourceVersion or its children's version
    moved, or when a wake-up time it asked for has come (minReadySeconds, back-off, deadlines)."""

    def __init__(self, index: OwnerIndex) -> None:
        self.index = index
        self._seen: dict[str, tuple[str, int]] = {}
        self._wake: dict[str, float] = {}

    def due(self, obj: dict[str, Any], now: float) -> bool:
        meta = obj["metadata"]
        uid = meta["uid"]
        key = (meta.get("resourceVersion", ""), self.index.version(uid))
        if self._seen.get(uid) == key and now < self._wake.get(uid, float("inf")):
            return False
        self._seen[uid] = key
        self._wake.pop(uid, None)
        return True

    def wake_at(self, uid: str, when: float) -> None:
        """Ask for a sync at `when` even if nothing changes."""
        current = self._wake.get(uid)
        if current is None or when < current:
            self._wake[uid] = when

    def forget_missing(self, alive: set[str]) -> None:
        for uid in [u for u in self._seen if u not in alive]:
            self._seen.pop(uid, None)
            self._wake.pop(uid, None)
