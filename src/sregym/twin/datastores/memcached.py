"""memcached: a bounded in-memory cache whose hit ratio comes from a working-set model.

No persistence and no auth: the state belongs to the container instance, so a restarted
memcached starts cold and its clients' databases see the misses. Per tick, items grow by the
misses the clients fill back (cache-aside), up to what `-m` megabytes hold; a working set larger
than that keeps evicting, which caps the hit ratio below one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sregym.twin.datastores.base import DataStore, DbOutcome, StoreReply

DEFAULT_MEMORY_MB = 64
SLAB_OVERHEAD = 1.15  # slab-class rounding and item headers


@dataclass
class CacheState:
    items: float = 0.0
    bytes_used: float = 0.0
    evictions: float = 0.0
    get_hits: float = 0.0
    get_misses: float = 0.0
    pending_fill: float = 0.0  # misses this tick that clients will set
    keyspace: float = 0.0
    item_bytes: float = 512.0


class Memcached(DataStore):
    kind = "memcached"

    @property
    def cache(self) -> CacheState:
        return self.state

    @property
    def limit_bytes(self) -> float:
        return float(self.config.get("memory_mb", DEFAULT_MEMORY_MB)) * 1024 * 1024

    def capacity_items(self, item_bytes: float) -> float:
        return self.limit_bytes / max(1.0, item_bytes * SLAB_OVERHEAD)

    def hit_ratio(self, keyspace: float) -> float:
        if keyspace <= 0:
            return 0.0
        return max(0.0, min(1.0, self.cache.items / keyspace))

    def request(self, op: Any = "get", *, rate: float = 1.0, keyspace: float = 1000.0,
                item_bytes: float = 512.0, fill: bool = True, **_: object) -> DbOutcome:
        """`get` (returns the hit ratio; misses are set back when `fill`), `set`, `delete`.

        The data plane's cache-aside calls issue the `set` after a miss themselves, so their
        gets do not fill (`serve` passes `fill=False`)."""
        if not isinstance(op, str):
            out = self.request(op.operation, rate=float(op.rate or 0.0), fill=False)
            return StoreReply(True, out.service_ms, hit_ratio=out.hit_ratio)  # type: ignore[return-value]
        cache = self.cache
        cache.keyspace = max(cache.keyspace, keyspace)
        cache.item_bytes = item_bytes
        service_ms = 0.08 if op == "get" else 0.1
        self.account(rate, service_ms)
        if op == "get":
            hit = self.hit_ratio(keyspace)
            cache.get_hits += rate * hit
            cache.get_misses += rate * (1 - hit)
            if fill:
                cache.pending_fill += rate * (1 - hit)
            return DbOutcome(True, None, "", service_ms, hit)
        if op == "set":
            cache.pending_fill += rate
        elif op == "delete":
            cache.items = max(0.0, cache.items - rate)
        return DbOutcome(True, None, "", service_ms)

    def serve(self, req: Any) -> StoreReply:
        """The data plane's requests: its gets do not fill, since a cache-aside client sets a
        missed key itself, and only once the database read returned it."""
        return self.request(req)  # type: ignore[return-value]

    def tick(self, seconds: float) -> None:
        """Apply this tick's fills: new distinct keys grow with the uncached share of the
        keyspace; beyond capacity every insert evicts one LRU item."""
        cache = self.cache
        if cache.pending_fill <= 0:
            return
        capacity = self.capacity_items(cache.item_bytes)
        keyspace = max(cache.keyspace, 1.0)
        # Every miss is a key not in the cache; the client sets it back.
        new_keys = cache.pending_fill * seconds
        target = cache.items + new_keys
        if target > capacity:
            cache.evictions += target - capacity
            target = capacity
        cache.items = min(target, keyspace)
        cache.bytes_used = cache.items * cache.item_bytes * SLAB_OVERHEAD
        cache.pending_fill = 0.0

    def memory_bytes(self) -> int:
        return int(self.cache.bytes_used)

    def stats(self) -> dict[str, float]:
        cache = self.cache
        return {"curr_items": int(cache.items), "bytes": int(cache.bytes_used),
                "limit_maxbytes": int(self.limit_bytes), "evictions": int(cache.evictions),
                "get_hits": int(cache.get_hits), "get_misses": int(cache.get_misses)}
