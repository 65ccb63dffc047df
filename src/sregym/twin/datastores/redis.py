"""Redis / Valkey: keys and memory, `requirepass`, `maxmemory` with its policy, `CONFIG SET`.

The dataset lives on the volume at /data when there is one (the image's working directory,
where RDB/AOF files go), so keys survive a restart with a PVC. Configuration is per process: the
command line and config file are read at start, `CONFIG SET` changes only the running server
(lost on restart unless `CONFIG REWRITE` put it in the file) -- which is why a password set at
runtime disappears with the pod, exactly as in production.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sregym.twin.datastores.base import ERROR_CLASSES, DataStore, DbOutcome, StoreReply

BASE_MEMORY = 900_000  # used_memory of an empty server
MISCONF = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
           "Commands that may modify the data set are disabled, because this instance is configured to report "
           "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the "
           "Redis logs for details about the RDB error.")
WRITE_OPS = frozenset({"SET", "HSET", "LPUSH", "RPUSH", "SADD", "ZADD", "INCR", "APPEND", "MSET",
                       "SETEX", "HMSET", "XADD"})
# Reads that find a key or not (a sorted-set timeline read misses until the key has been filled).
CACHE_READS = frozenset({"GET", "ZRANGE", "ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE"})
POLICIES = ("noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru",
            "volatile-lfu", "volatile-random", "volatile-ttl")


@dataclass
class RedisState:
    keys: float = 0.0
    value_bytes: float = 256.0
    evicted: float = 0.0
    hits: float = 0.0
    misses: float = 0.0
    keyspace: float = 0.0
    extra: dict[str, str] = field(default_factory=dict)


def parse_memory(text: str) -> int:
    """Redis memory units: `100mb`, `1gb`, `512k`, plain bytes."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmg]b?)?\s*", text.lower())
    if not m:
        raise ValueError(text)
    unit = {"k": 1000, "kb": 1024, "m": 1000**2, "mb": 1024**2, "g": 1000**3, "gb": 1024**3}.get(m.group(2) or "", 1)
    return int(m.group(1)) * unit


class Redis(DataStore):
    kind = "redis"

    @property
    def data(self) -> RedisState:
        return self.state

    @property
    def requirepass(self) -> str:
        return str(self.config.get("requirepass") or "")

    @property
    def maxmemory(self) -> int:
        return int(self.config.get("maxmemory") or 0)

    @property
    def policy(self) -> str:
        return str(self.config.get("maxmemory-policy") or "noeviction")

    def used_memory(self) -> int:
        return int(BASE_MEMORY + self.data.keys * (self.data.value_bytes + 90))

    def auth_error(self, password: str | None, user: str | None = None) -> DbOutcome | None:
        if not self.requirepass:
            if password and user not in (None, "", "default"):
                return DbOutcome.fail("WRONGPASS", "WRONGPASS invalid username-password pair or user is disabled.")
            return None
        if not password:
            return DbOutcome.fail("NOAUTH", "NOAUTH Authentication required.")
        if password != self.requirepass or user not in (None, "", "default"):
            return DbOutcome.fail("WRONGPASS", "WRONGPASS invalid username-password pair or user is disabled.")
        return None

    def request(self, op: Any = "GET", *, rate: float = 1.0, password: str | None = None,
                user: str | None = None, keyspace: float = 1000.0, value_bytes: float = 256.0,
                **_: object) -> DbOutcome:
        """A class of commands at `rate`/s; `GET` returns the hit ratio (keys / keyspace)."""
        if not isinstance(op, str):
            return self.serve_redis(op)  # type: ignore[return-value]
        op = op.upper()
        denied = self.auth_error(password, user)
        if denied is not None:
            return denied
        data = self.data
        data.value_bytes = value_bytes
        data.keyspace = max(data.keyspace, keyspace)
        service_ms = 0.06
        self.account(rate, service_ms)
        if op in WRITE_OPS and self.config.get("_bgsave_failed"):  # stop-writes-on-bgsave-error (datastores.kernel_faults)
            return DbOutcome.fail("MISCONF", MISCONF)
        if op in WRITE_OPS:
            self.config["_dirty"] = float(self.config.get("_dirty", 0.0)) + rate * self.twin.clock.tick
            if self.maxmemory and self.used_memory() > self.maxmemory:
                if self.policy == "noeviction":
                    return DbOutcome.fail("OOM", "OOM command not allowed when used memory > 'maxmemory'.")
                fit = max(0.0, (self.maxmemory - BASE_MEMORY) / (value_bytes + 90))
                data.evicted += max(0.0, data.keys - fit)
                data.keys = fit
            data.keys = min(data.keys + rate, max(data.keyspace, data.keys))
            return DbOutcome(True, None, "", service_ms)
        if op in CACHE_READS:
            hit = min(1.0, data.keys / data.keyspace) if data.keyspace else 0.0
            data.hits += rate * hit
            data.misses += rate * (1 - hit)
            return DbOutcome(True, None, "", service_ms, hit)
        return DbOutcome(True, None, "", service_ms)

    def serve_redis(self, req: Any) -> StoreReply:
        out = self.request(str(req.operation), rate=float(req.rate or 0.0), password=req.password,
                           user=req.username)
        return StoreReply(out.ok, out.service_ms, out.message,
                          ERROR_CLASSES.get(out.error or "", "server_error") if out.error else "",
                          out.hit_ratio, out.error_ratio, out.error or "")

    def config_get(self, pattern: str) -> list[tuple[str, str]]:
        known = {"requirepass": self.requirepass, "maxmemory": str(self.maxmemory),
                 "maxmemory-policy": self.policy, "port": str(self.port),
                 "appendonly": str(self.config.get("appendonly", "no")),
                 "save": str(self.config.get("save", "3600 1 300 100 60 10000")),
                 "dir": "/data", "bind": "* -::*", "protected-mode": "no", "databases": "16"}
        regex = re.compile("^" + re.escape(pattern.lower()).replace(r"\*", ".*").replace(r"\?", ".") + "$")
        return [(k, v) for k, v in sorted(known.items()) if regex.match(k)]

    def config_set(self, name: str, value: str) -> str | None:
        """Apply `CONFIG SET`; returns the error text on a bad value."""
        name = name.lower()
        if name == "maxmemory":
            try:
                self.config["maxmemory"] = parse_memory(value)
            except ValueError:
                return "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument couldn't be parsed into an integer"
            return None
        if name == "maxmemory-policy":
            if value not in POLICIES:
                return f"ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: {', '.join(POLICIES)}"
        if name in ("requirepass", "maxmemory-policy", "appendonly", "save", "timeout", "loglevel"):
            self.config[name] = value
            return None
        return f"ERR Unknown option or number of arguments for CONFIG SET - '{name}'"

    def memory_bytes(self) -> int:
        return self.used_memory() - BASE_MEMORY
