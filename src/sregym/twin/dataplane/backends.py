"""The contract between the data plane and the backing-store models (MongoDB, memcached, Redis).

The engine, for every (client process, datastore pod, operation) flow and tick, asks the model
what happens to those requests: `sregym.twin.datastores.datastore_for(twin, pod)` returns the
model of the store running in that pod (None when the pod runs no known store) and the engine
calls `store.serve(StoreRequest(...))` (or `store.request(...)` when the model has no `serve`). The reply says whether the requests succeed, how long
they take, the exact driver error text the client would log, and for caches the hit ratio. The
model may use `rate` for load-dependent cost and hit ratios.

Until that module exists (or for a pod it does not model), every request succeeds with a small
fixed latency and the dependency's default hit ratio: `default_reply`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

DEFAULT_LATENCY_MS = {"mongodb": 1.5, "memcached": 0.3, "redis": 0.3}


@dataclass(frozen=True)
class StoreRequest:
    kind: str  # "mongodb" | "memcached" | "redis"
    operation: str  # "find", "insert", "update", "delete", "get", "set", ... as the program names it
    database: str = ""
    collection: str = ""
    username: str | None = None
    password: str | None = None
    auth_source: str = ""
    rate: float = 0.0  # requests per second of this flow this tick
    client: dict[str, Any] | None = None  # the calling pod (read-only)
    client_app: str = ""  # the client's program name (mongod logs `appName`)


@dataclass(frozen=True)
class StoreOutcome:
    ok: bool
    latency_ms: float
    error: str = ""  # driver text, e.g. '(Unauthorized) not authorized on geo-db to execute command ...'
    error_class: str = ""  # "auth" | "unavailable" | "server_error" | "timeout" | "oom" ...
    hit_ratio: float | None = None
    error_ratio: float | None = None  # share of the requests failing (None: all or nothing per `ok`)
    modelled: bool = True  # False when no store model answered (the default reply)


class StoreReply(Protocol):
    ok: bool
    latency_ms: float
    error: str


class DataStore(Protocol):
    def request(self, req: StoreRequest) -> StoreReply: ...


# `datastores.datastore_for`, bound on first use: the package imports the data plane, and a
# function-level import costs a lookup on every store call (hundreds a simulated minute).
_DATASTORE_FOR: Any = None


def datastore_of(twin: Twin, pod: dict[str, Any]) -> Any | None:
    """D2's model for the store in `pod`, or None (module absent or not a known store)."""
    global _DATASTORE_FOR
    if _DATASTORE_FOR is None:
        try:
            from sregym.twin.datastores import datastore_for
        except ImportError:
            return None
        _DATASTORE_FOR = datastore_for
    try:
        return _DATASTORE_FOR(twin, pod)
    except Exception:  # a model bug must not stop traffic for everything else
        return None


def ask(twin: Twin, pod: dict[str, Any], req: StoreRequest, default_hit_ratio: float) -> StoreOutcome:
    """The outcome of `req` against the store in `pod`, tolerant of a partial model."""
    store = datastore_of(twin, pod)
    handler = getattr(store, "serve", None) or getattr(store, "request", None) if store is not None else None
    if handler is None:
        return default_reply(req, default_hit_ratio)
    try:
        reply = handler(req)
    except Exception:
        return default_reply(req, default_hit_ratio)
    hit = getattr(reply, "hit_ratio", None)
    ratio = getattr(reply, "error_ratio", None)
    return StoreOutcome(ok=bool(getattr(reply, "ok", True)),
                        latency_ms=float(getattr(reply, "latency_ms", DEFAULT_LATENCY_MS.get(req.kind, 1.0))),
                        error=str(getattr(reply, "error", "") or ""),
                        error_class=str(getattr(reply, "error_class", "") or ""),
                        hit_ratio=default_hit_ratio if hit is None else float(hit),
                        error_ratio=float(ratio) if ratio else None)


def default_reply(req: StoreRequest, default_hit_ratio: float) -> StoreOutcome:
    return StoreOutcome(ok=True, latency_ms=DEFAULT_LATENCY_MS.get(req.kind, 1.0), hit_ratio=default_hit_ratio,
                        modelled=False)


__all__ = ["DataStore", "StoreOutcome", "StoreReply", "StoreRequest", "ask", "datastore_of", "default_reply"]
