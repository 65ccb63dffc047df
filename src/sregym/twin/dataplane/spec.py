"""The behaviour model of an application program, as data.

A program is what a binary does once a container runs it: where it reads its listen port and the
addresses of its dependencies (a JSON key in a mounted config file, an env var, a CLI flag), which
operations it serves with what CPU cost, which downstream calls each operation makes (with
probabilities, fan-out and cache-aside patterns), the timeout/retry policy it applies as a client,
how its memory grows, what it needs at startup and how it dies without it, and the format of its
own log lines.

Specs are frozen pydantic models with unknown fields rejected, so an app author's typo fails at
import time instead of silently changing behaviour. Nothing here runs anything: `programs.py`
turns a spec into the shell command the kubelet starts, and `engine.py` moves traffic through the
specs of the running programs. Apps register their programs with `@program` / `register_program`
and bind them to image binaries with `programs.bind_image`.

Settings are read the way real programs read them, at process start: a value changed in a
ConfigMap only takes effect after a restart (or rollout), exactly like on a real cluster.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sregym.registry import Registry
from sregym.twin.dataplane.codepaths import CodePath
from sregym.twin.dataplane.flag_client import FlagClient
from sregym.twin.dataplane.flagd import FlagServer

Protocol = Literal["grpc", "http", "thrift"]
DependencyKind = Literal["grpc", "http", "thrift", "mongodb", "memcached", "redis", "postgres", "kafka"]
# Dependency kinds that are calls into another program (the others are stores and brokers).
RPC_KINDS = ("grpc", "http", "thrift")
LogStyle = Literal["zerolog", "logfmt", "json", "plain", "raw", "envoy", "boost", "klog"]
# Where a program's own log lines go: the container's stdout (`kubectl logs`), the OpenTelemetry
# SDK's OTLP exporter to the collector and the log backend (dataplane/log_channel.py), or both.
LogSinks = Literal["stdout", "otlp", "both"]  # raw: lines as the program prints them
# Error classes a caller may retry on (see RetryPolicy.retry_on).
ErrorClass = Literal["refused", "timeout", "unavailable", "reset", "nxdomain", "server_error", "auth"]

DEFAULT_PORTS: dict[str, int] = {"mongodb": 27017, "memcached": 11211, "redis": 6379, "http": 80, "grpc": 50051, "thrift": 9090,
                                 "postgres": 5432, "kafka": 9092}



class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ------------------------------------------------------------------------------------ settings
class Setting(_Frozen):
    """Where a program reads one value. First present source wins: `flag`, `env`, `file`,
    `config` (a dotted JSON key in `config_file`, or the program's config file), then `default`.

    `file` reads a whole file (a Secret mounted as a volume, e.g. `/etc/secrets/password`)."""

    flag: str | None = None  # "-port" / "--port" (both `--port 8083` and `--port=8083` accepted)
    env: str | None = None
    file: str | None = None
    config: str | None = None  # JSON key, dotted for nesting ("mongo.address")
    config_file: str | None = None
    default: str | None = None

    def read(self, argv: list[str], env: dict[str, str], files: dict[str, str],
             program_config: str | None = None) -> str | None:
        """The value as the program sees it at start, or None when no source has it."""
        if self.flag:
            value = flag_value(argv, self.flag)
            if value is not None:
                return value
        if self.env and self.env in env:
            return env[self.env]
        if self.file and self.file in files:
            return files[self.file].strip()
        if self.config:
            path = self.config_file or program_config
            if path and path in files:
                data = _load_json(files[path])
                found = _dotted(data, self.config) if data is not None else None
                if found is not None:
                    return str(found) if not isinstance(found, str) else found
        return self.default

    def describe(self) -> str:
        """How an engineer would name the source ("env GEO_PORT", "config.json key GeoPort")."""
        if self.env:
            return f"env {self.env}"
        if self.config:
            return f"config key {self.config}"
        if self.flag:
            return f"flag {self.flag}"
        if self.file:
            return f"file {self.file}"
        return "default"


Knob = float | Setting  # a number fixed by the spec, or read from the program's settings


def flag_value(argv: list[str], name: str) -> str | None:
    """`-port 8083`, `--port 8083`, `-port=8083` or `--port=8083` (Go's flag package accepts all)."""
    bare = name.lstrip("-")
    for index, arg in enumerate(argv[1:], 1):
        if not arg.startswith("-"):
            continue
        key, eq, value = arg.lstrip("-").partition("=")
        if key != bare:
            continue
        if eq:
            return value
        if index + 1 < len(argv):
            return argv[index + 1]
    return None


def _load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _dotted(data: Any, key: str) -> Any:
    if isinstance(data, dict) and key in data:
        return data[key]
    for part in key.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def parse_duration_ms(text: str | float | None, unit: str = "ms") -> float | None:
    """Go duration ("500ms", "1m30s") or a bare number in `unit`; None when unparsable."""
    if text is None:
        return None
    if isinstance(text, (int, float)):
        return float(text) * _UNIT_MS[unit]
    value = text.strip()
    try:
        return float(value) * _UNIT_MS[unit]
    except ValueError:
        pass
    parts = _DURATION.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * _UNIT_MS[u] for n, u in parts)


# ------------------------------------------------------------------------------ dependencies
class RetryPolicy(_Frozen):
    """A caller's per-attempt timeout and retries for one dependency.

    Values come from settings so a fault (or a fix) can change them through env or a ConfigMap;
    `timeout_unit` interprets bare numbers ("500" with unit ms). Retries count extra attempts."""

    timeout: Setting = Setting(default="1s")
    timeout_unit: Literal["ms", "s"] = "ms"
    retries: Setting = Setting(default="0")
    backoff: Setting = Setting(default="0ms")
    retry_on: tuple[ErrorClass, ...] = ("refused", "timeout", "unavailable", "reset")


class Dependency(_Frozen):
    """Something a program talks to, under a logical name its operations' calls use."""

    name: str
    kind: DependencyKind
    # "host:port", "host", a URL ("http://geo:8083") or a MongoDB URI
    # ("mongodb://user:pass@mongodb-geo:27017/geo-db"); `port` when the address has none.
    address: Setting
    port: Setting | None = None
    database: Setting | None = None  # MongoDB database the program uses
    username: Setting | None = None
    password: Setting | None = None
    auth_source: Setting | None = None  # MongoDB authSource (default: admin when credentials given)
    policy: RetryPolicy = RetryPolicy()
    # Dial at startup and exit when it fails (mgo's "no reachable servers" panic, for example).
    startup_check: bool = False
    startup_failure_log: str = "panic: {error}"
    startup_failure_exit_code: int = 2
    # A store collection the program queries at start (Hotel Reservation's `initializeDatabase`
    # inserts its test data): the driver waits up to `startup_wait_s` for a reachable server, then
    # a connection, authentication or authorization error is fatal — logged at fatal level in the
    # program's format with `startup_failure_log` and exit `startup_failure_exit_code`.
    startup_query: str | None = None
    startup_wait_s: float = 30.0
    tls: bool = False
    # Default cache hit ratio for memcached/redis gets when no datastore model answers.
    hit_ratio: float = 0.9
    # How the program logs a failed call to this dependency (fields: error, operation, dependency,
    # caller_operation); rate-limited by LogFormat.error_burst.
    error_log: str = "{error}"
    # The HTTP client library whose error texts the program gets: "" (Go's net/http) or "awc"
    # (actix-web's client, the Rust shipping service's): errortexts.py words each failure its way.
    client: str = ""


CallWhen = str  # "miss:<call id>", "hit:<call id>", "error:<call id>", "ok:<call id>"


class Call(_Frozen):
    """One downstream call an operation makes.

    `count` is the fan-out (calls per request, may be fractional), `probability` how often the
    call happens at all. Cache-aside: give the cache get an `id` and make the database read
    `when="miss:<id>"` (a cache error counts as a miss, as in real clients) and the cache fill
    `when="miss:<id>", optional=True`. An optional call's failure does not fail the operation;
    a required call's failure ends the handler (`if err != nil { return err }`): the calls after
    it are not made (unless the operation is `parallel`), so a fill follows only the reads that
    succeeded.
    """

    dependency: str
    operation: str  # callee operation: "/geo.Geo/Nearby", "GET /hotels", "find", "get", "set" ...
    collection: str | None = None  # MongoDB collection
    probability: float = Field(1.0, ge=0.0, le=1.0)
    count: float = Field(1.0, ge=0.0)
    id: str | None = None
    when: CallWhen | None = None
    optional: bool = False
    # A feature flag choosing a code path: "NAME=value" (or "NAME!=value") makes the call only
    # while the program's setting NAME (`ProgramSpec.settings`, read at start) has (not) that value.
    feature: str | None = None

    def feature_enabled(self, settings: dict[str, str]) -> bool:
        if not self.feature:
            return True
        negate = "!=" in self.feature
        name, _, value = self.feature.partition("!=" if negate else "=")
        return (settings.get(name.strip(), "") == value.strip()) != negate

    @model_validator(mode="after")
    def _check_when(self) -> Call:
        if self.feature is not None and "=" not in self.feature:
            raise ValueError(f"feature must be NAME=value or NAME!=value, got {self.feature!r}")
        if self.when is not None:
            kind, _, ref = self.when.partition(":")
            if kind not in ("miss", "hit", "error", "ok") or not ref:
                raise ValueError(f"when must be miss:/hit:/error:/ok:<call id>, got {self.when!r}")
        return self


class Operation(_Frozen):
    """An operation the program serves: a gRPC method (`/geo.Geo/Nearby`) or an HTTP route.

    For HTTP programs `name` is the path ("/hotels") and `method` the verb. `weight` is its share
    when a request reaches the program without naming an operation. `parallel` downstream calls
    cost the slowest call's latency instead of the sum."""

    name: str
    method: str = "GET"
    cpu_ms: float = Field(1.0, gt=0.0)
    calls: tuple[Call, ...] = ()
    parallel: bool = False
    weight: float = 1.0
    response_bytes: int = 256
    paths: tuple[CodePath, ...] = ()  # branches a setting (a feature flag) switches on
    # A Java handler's methods ("oteldemo.AdService#getInstance"): where JVMChaos rules hit it (jvm_rules.py)
    java_methods: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The data plane's key for this operation: one path can serve several methods (`GET` and
        `POST /api/cart` are two handlers with their own arrivals and outcomes). GET, the default
        (every gRPC method), keeps the bare name: keys in metrics and callers' names stay readable."""
        return self.name if self.method == "GET" else f"{self.method} {self.name}"


def http_route(operation: str) -> tuple[str, str]:
    """(method, path) an HTTP call names: "POST /get-quote", or a bare path (a GET)."""
    verb, _, path = operation.partition(" ")
    return (verb, path) if path and verb.isupper() else ("GET", operation)


class MemoryModel(_Frozen):
    """Working set = base + per in-flight request + per request/s + leak (MiB).

    `leak_mib_per_min` grows with uptime; `leak_kib_per_request` with requests served. Both may
    come from a setting (e.g. a feature flag env var) so a "bad release" can enable a leak."""

    base_mib: float = 20.0
    per_inflight_mib: float = 0.05
    per_rps_mib: float = 0.0
    leak_mib_per_min: Knob = 0.0
    leak_kib_per_request: Knob = 0.0


class RequiredSetting(_Frozen):
    """A setting the program cannot start without: logs `message` and exits with `exit_code`."""

    setting: Setting
    message: str  # e.g. "Got error while reading config: key GeoPort missing"
    exit_code: int = 1


class Startup(_Frozen):
    """What happens between exec and serving. Log templates may use `{name}`, `{port}`,
    `{addr[<dependency>]}` and `{setting[<name>]}`."""

    seconds: float = 1.0
    logs: tuple[str, ...] = ()
    ready_logs: tuple[str, ...] = ()
    shutdown_logs: tuple[str, ...] = ()
    required: tuple[RequiredSetting, ...] = ()


class LogFormat(_Frozen):
    """The program's own log format. `caller` prefixes: startup lines come from `main_caller`,
    request errors from `handler_caller`."""

    style: LogStyle = "zerolog"
    main_caller: str = "cmd/main.go:42"
    handler_caller: str = "server.go:120"
    # Identical error lines per window before a "suppressed" summary (rate-limited logging).
    error_burst: int = 5
    error_window_s: float = 10.0
    # Which channel the request-time lines (errors, per-record lines, access logs) take; startup
    # lines stay on stdout (the runtime prints them before any SDK is configured).
    sinks: LogSinks = "stdout"


class Consumer(_Frozen):
    """A Kafka consumer loop the program runs beside its server: a member of `group` polling
    `topic` through the `kind="kafka"` dependency `dependency` (its bootstrap servers), processing
    at most `max_rate` records/s, committing what it processed. Each record runs `operation` (its
    CPU cost and downstream calls) when given. A new group starts at the log end (`reset`
    "latest", the clients' default) or at the beginning ("earliest"). `dataplane/consumers.py`
    runs it; lag is whatever the group has not committed."""

    dependency: str
    group: str
    topic: Setting = Setting(env="KAFKA_TOPIC", default="orders")
    client_id: str = "consumer"
    operation: str | None = None
    max_rate: Knob = 1000.0
    reset: Literal["earliest", "latest"] = "latest"
    # A code path that slows the loop (the demo's `kafkaQueueProblems` sleeps a second per record):
    # while the program's setting matches "NAME=value" (or "NAME!=value") it runs at `slow_rate`/s.
    slow_when: str | None = None
    slow_rate: float = Field(1.0, ge=0.0)
    # How the program logs a failed poll (fields: error, host, port, group, client_id, time
    # "YYYY-mm-dd HH:MM:SS", epoch seconds), at most once per 10 s.
    error_log: str = "{error}"
    # A record whose value the handler cannot deserialize: "skip" (log it and commit past it) or
    # "retry" (the exception escapes the batch, the loop polls the same uncommitted offset again:
    # the partition is blocked there). `unreadable_log` is the line logged per failed attempt
    # (fields: topic, partition, offset, group, client_id, time), at most once per 10 s.
    unreadable: Literal["skip", "retry"] = "skip"
    unreadable_log: str = ""
    # Whether the program closes its client on SIGTERM (a LeaveGroup: the group rebalances or empties
    # at once). A loop that never calls close() stays a member until the session timeout, as does
    # any consumer that is killed or crashes.
    leaves_on_stop: bool = False

    def slowed(self, settings: dict[str, str]) -> bool:
        return self.slow_when is not None and Call(dependency="", operation="", feature=self.slow_when) \
            .feature_enabled(settings)


class ProgramSpec(_Frozen):
    """One application binary."""

    name: str  # the binary name a container's command/args names ("geo")
    service_name: str | None = None  # name in traces and span metrics (default: name)
    protocol: Protocol = "grpc"
    port: Setting
    config_file: str | None = None  # default JSON config path for `Setting.config`
    operations: tuple[Operation, ...] = ()
    dependencies: tuple[Dependency, ...] = ()
    consumers: tuple[Consumer, ...] = ()  # Kafka consumer loops (dataplane/consumers.py)
    memory: MemoryModel = MemoryModel()
    startup: Startup = Startup()
    log: LogFormat = LogFormat()
    settings: dict[str, Setting] = Field(default_factory=dict)  # extra named settings for templates
    http_paths: tuple[str, ...] = ()  # paths answering 200 to probes (empty: every path)
    grpc_health: bool = False  # serves grpc.health.v1
    not_serving_when: str = ""  # a setting ("NAME=value") under which it answers NOT_SERVING (grpc_health.py)
    idle_cpu_cores: float = 0.001
    # Requests queued beyond this many seconds of capacity are rejected (server overload).
    max_queue_seconds: float = 60.0
    flags: FlagClient | None = None  # feature flags evaluated at run time (dataplane/flag_client.py)
    # A second HTTP listener (Envoy's admin port) answered by the port handler named `<name>:admin`
    # (dataplane/port_pages.py).
    admin_port: Setting | None = None
    # A second listener that terminates TLS (ingress-nginx's https port); the certificate served
    # per SNI host is `ProgramInstance.certificates`, checked by clients (tls_validity.py).
    tls_port: Setting | None = None
    flag_server: FlagServer | None = None  # a flagd serving the flags of its `--uri` (dataplane/flagd.py)
    paths: tuple[CodePath, ...] = ()  # process-wide branches (busy threads) a setting switches on
    # A Go binary: its GC cost follows GOGC/GOMEMLIMIT (dataplane/gc.py) and /metrics has go_* series.
    go_runtime: bool = False

    @model_validator(mode="after")
    def _check_refs(self) -> ProgramSpec:
        deps = {d.name for d in self.dependencies}
        for op in self.operations:
            ids = {c.id for c in op.calls if c.id}
            for call in op.calls:
                if call.dependency not in deps:
                    raise ValueError(f"{self.name} {op.name}: unknown dependency {call.dependency!r}")
                if call.when and call.when.partition(":")[2] not in ids:
                    raise ValueError(f"{self.name} {op.name}: {call.when!r} names no call id")
        for consumer in self.consumers:
            if consumer.dependency not in deps:
                raise ValueError(f"{self.name}: consumer of unknown dependency {consumer.dependency!r}")
        return self

    @property
    def trace_name(self) -> str:
        return self.service_name or self.name

    def operation(self, name: str, method: str | None = None) -> Operation | None:
        for op in self.operations:
            if op.name == name and (method is None or self.protocol != "http" or op.method == method):
                return op
        return None

    def dependency(self, name: str) -> Dependency | None:
        return next((d for d in self.dependencies if d.name == name), None)


# ------------------------------------------------------------------------------------ registry
PROGRAMS: Registry[ProgramSpec] = Registry("program", ("sregym.apps",))


def register_program(spec: ProgramSpec, *, replace: bool = True) -> ProgramSpec:
    """Register a program under its binary name (re-registering the same name replaces it)."""
    return PROGRAMS.register(spec.name, spec, replace=replace)


def program(fn: Callable[[], ProgramSpec]) -> Callable[[], ProgramSpec]:
    """Decorator for a zero-argument function building a ProgramSpec: registers its result."""
    register_program(fn())
    return fn


def get_program(name: str) -> ProgramSpec | None:
    """The registered program for a binary name, without triggering app discovery."""
    entry = PROGRAMS._entries.get(name)
    return entry.value if entry is not None else None


__all__ = [
    "DEFAULT_PORTS", "PROGRAMS", "Call", "Consumer", "Dependency", "DependencyKind", "ErrorClass", "Knob", "LogFormat",
    "MemoryModel", "Operation", "ProgramSpec", "Protocol", "RequiredSetting", "RetryPolicy", "Setting",
    "Startup", "flag_value", "get_program", "parse_duration_ms", "program", "register_program",
]
