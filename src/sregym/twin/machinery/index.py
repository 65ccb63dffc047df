"""Store indexes: objects of one kind grouped by keys computed from each object.

A controller that must find "the pods that use claims" or "the pods of this owner" without
scanning every object on every tick declares an index once (`store.add_index`); the store keeps it
current on every write, before any listener runs, like client-go's informer indexers. Each bucket
keeps insertion order (an object whose keys do not change keeps its place; one that moves is
appended to its new buckets), so anything iterated off an index is as deterministic as the writes.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

Obj = dict[str, Any]
ObjKey = tuple[str, str]
KeysFn = Callable[[Obj], Iterable[Hashable]]


class Index:
    """One kind's objects by the keys `keys(obj)` returns (none: the object is in no bucket)."""

    def __init__(self, kind_key: tuple[str, str], keys: KeysFn) -> None:
        self.kind_key = kind_key
        self._keys = keys
        self._buckets: dict[Hashable, dict[ObjKey, Obj]] = {}
        self._placed: dict[ObjKey, tuple[Hashable, ...]] = {}

    def get(self, key: Hashable) -> list[Obj]:
        """The stored objects under `key`, in insertion order. Read-only."""
        return list(self._buckets.get(key, {}).values())

    def names(self, key: Hashable) -> list[ObjKey]:
        """(namespace, name) of the objects under `key`, in insertion order."""
        return list(self._buckets.get(key, {}))

    def keys(self) -> list[Hashable]:
        """Every non-empty key, in the order it first filled."""
        return list(self._buckets)

    def observe(self, deleted: bool, obj: Obj) -> None:
        """Apply one write of an object of this index's kind."""
        meta = obj.get("metadata") or {}
        ident = (meta.get("namespace", ""), meta.get("name", ""))
        new = () if deleted else tuple(dict.fromkeys(self._keys(obj)))
        old = self._placed.pop(ident, ())
        for key in old:
            if key not in new:
                bucket = self._buckets[key]
                del bucket[ident]
                if not bucket:
                    del self._buckets[key]
        for key in new:
            self._buckets.setdefault(key, {})[ident] = obj
        if new:
            self._placed[ident] = new
