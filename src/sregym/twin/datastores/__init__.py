"""Backing-store models: MongoDB, memcached, Redis/Valkey, PostgreSQL, Kafka, with state that lives on volumes.

The data plane asks `datastore_for(twin, pod)` whether a pod runs a store, and sends it
requests (`DataStore.request(...) -> DbOutcome`); the DB clients of the exec userland
(`mongosh`, `mongo`, `redis-cli`) reach the same objects, so a role revoked from a shell is a
role the application no longer has. Which images are stores is declared in the image catalogue
(`ImageSpec.extras["datastore"]`, registered by `programs.py`).

    store = datastore_for(twin, pod)            # None: not a store, or not running
    if isinstance(store, MongoServer):
        out = store.request("find", db="geo-db", collection="geo", user="admin",
                            password="admin", auth_source="admin", rate=40.0)
        out.ok, out.error, out.message, out.service_ms
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.datastores.base import (
    DataStore,
    DbOutcome,
    StateBank,
    bank_of,
    flag,
    state_key,
)
from sregym.twin.datastores.memcached import CacheState, Memcached
from sregym.twin.datastores.mongodb import MongoError, MongoServer, MongoState, Principal, mongo_state
from sregym.twin.datastores.redis import Redis, RedisState, parse_memory

if TYPE_CHECKING:
    from sregym.twin.node.runtime import ContainerInstance
    from sregym.twin.twin import Twin


# Bound on first use (module-level imports of the node packages would be cycles); the data plane
# asks `server_for` and `store_kind` for every store call, so the import is not repeated per call.
_LOOKUP: Any = None
_RUNTIME_OF: Any = None


def store_kind(image: str, twin: Any = None) -> str | None:
    """"mongodb" | "memcached" | "redis" for a store image reference, else None."""
    global _LOOKUP
    if _LOOKUP is None:
        from sregym.twin.node.images import lookup

        _LOOKUP = lookup
    spec, _ = _LOOKUP(image, twin)
    return spec.extras.get("datastore") if spec is not None else None


# Store kinds modelled in their own modules (postgres.py registers "postgres"):
# kind -> factory(twin, pod, container, instance) -> DataStore.
SERVER_FACTORIES: dict[str, Any] = {}


def _server_config(kind: str, instance: ContainerInstance) -> dict[str, Any]:
    argv = list(instance.argv)
    env = instance.env
    if kind == "mongodb":
        auth = "--auth" in argv or (bool(env.get("MONGO_INITDB_ROOT_USERNAME")) and "--noauth" not in argv)
        return {"port": int(flag(argv, "--port", default="27017") or 27017), "auth": auth,
                "slowms": float(flag(argv, "--slowms", default="100") or 100)}
    if kind == "memcached":
        memory = flag(argv, "-m", "--memory-limit", default=None)
        return {"port": int(flag(argv, "-p", "--port", default="11211") or 11211),
                "memory_mb": int(memory) if memory and memory.isdigit() else 64}
    config: dict[str, Any] = {"port": 6379}
    conf_file = next((a for a in argv[1:] if a.endswith(".conf")), None)
    if conf_file is not None:
        for line in (instance.files.get(conf_file) or "").splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and not parts[0].startswith("#"):
                config[parts[0].lower()] = parts[1].strip().strip('"')
    for name in ("requirepass", "maxmemory", "maxmemory-policy", "port", "appendonly"):
        value = flag(argv, f"--{name}")
        if value is not None:
            config[name] = value
    if "maxmemory" in config:
        try:
            config["maxmemory"] = parse_memory(str(config["maxmemory"]))
        except ValueError:
            config["maxmemory"] = 0
    config["port"] = int(config.get("port") or 6379)
    return config


def server_for(twin: Twin, pod: dict[str, Any], container: str) -> DataStore | None:
    """The store served by one running container of a pod (None if it is no store)."""
    global _RUNTIME_OF
    if _RUNTIME_OF is None:
        from sregym.twin.node.runtime import runtime_of

        _RUNTIME_OF = runtime_of
    meta = pod.get("metadata") or {}
    ns, name = meta.get("namespace", "default"), meta.get("name", "")
    instance = _RUNTIME_OF(twin).instance(ns, name, container)
    if instance is None or not instance.running:
        return None
    kind = store_kind(instance.image, twin)
    if kind is None:
        return None
    bank = bank_of(twin)
    key = (ns, name, container)
    cached = bank.instances.get(key)
    if cached is not None and cached.config.get("_instance") == instance.container_id:
        return cached
    factory = SERVER_FACTORIES.get(kind)
    if factory is not None:
        made: DataStore | None = factory(twin, pod, container, instance)
        if made is None:  # the image runs something else than its server (`command: [sleep]`)
            return None
        made.config["_instance"] = instance.container_id
        bank.instances[key] = made
        return made
    config = _server_config(kind, instance)
    config["_instance"] = instance.container_id
    store: DataStore
    if kind == "mongodb":
        version = instance.image.rsplit(":", 1)[-1] if ":" in instance.image else "4.4.6"
        state = mongo_state(twin, pod, container, instance.started_at, version)
        store = MongoServer(twin, pod, container, state, config)
    elif kind == "memcached":
        store = Memcached(twin, pod, container,
                          bank.state(f"container:{meta.get('uid', '')}/{container}@{instance.started_at:.3f}",
                                     CacheState), config)
    else:
        state_key_ = state_key(twin, pod, container, "/data", instance.started_at)
        store = Redis(twin, pod, container, bank.state(state_key_, RedisState), config)
    bank.instances[key] = store
    return store


def datastore_for(twin: Twin, pod: dict[str, Any] | None) -> DataStore | None:
    """The store a pod runs (its first store container that is running), or None."""
    if pod is None:
        return None
    for container in (pod.get("spec") or {}).get("containers") or []:
        store = server_for(twin, pod, container.get("name", ""))
        if store is not None:
            return store
    return None


__all__ = [
    "CacheState", "DataStore", "DbOutcome", "Memcached", "MongoError", "MongoServer", "MongoState",
    "Principal", "Redis", "RedisState", "StateBank", "bank_of", "datastore_for", "mongo_state",
    "server_for", "state_key", "store_kind",
]

# Register the store images' behaviour (server programs that run init scripts, etc.).
from sregym.twin.datastores import kafka, kafka_image, pg_program, postgres, programs, valkey  # noqa: E402,F401

postgres.register(SERVER_FACTORIES)
kafka.register(SERVER_FACTORIES)
pg_program.register()
