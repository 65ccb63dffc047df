"""Running a `ProgramSpec` inside a container: the shell command the kubelet starts.

`program_command(name)` is a shell command (a generator yielding `Output`/`Usage`/`Sleep`/
`Listen` effects) that behaves like the binary: it reads its settings from the container's argv,
env and mounted files at start, prints its startup log lines, exits with a realistic message and
code when a required setting is missing or a startup dependency is unreachable, listens on its
port, and attaches itself to the data plane (`ProgramInstance`) so the engine routes traffic to it
until the process dies. `bind_image(...)` registers an image whose binaries are programs, so the
binary named in a container's `command:` decides what runs — a `profile` container running the
`geo` binary really behaves like geo.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from sregym.twin.chaos.node_tasks import GO_EXTRA, GO_HTTP_PORT, GO_THREADS, go_thread_failure
from sregym.twin.chaos.node_tasks import exhausted as node_exhausted
from sregym.twin.dataplane.flagd import extra_listen_ports
from sregym.twin.dataplane.log_channel import export, to_stdout
from sregym.twin.dataplane.logformat import format_log
from sregym.twin.dataplane.spec import (
    DEFAULT_PORTS,
    Dependency,
    Knob,
    ProgramSpec,
    Setting,
    get_program,
    parse_duration_ms,
)
from sregym.twin.node.images import ImageSpec, register_image
from sregym.twin.node.netns import go_bind_error
from sregym.twin.node.shell import FOREVER, CommandFn, Invocation, Listen, Program, Sleep, Usage

MIB = 1 << 20


@dataclass(frozen=True)
class DependencyConfig:
    """A dependency as this process resolved it at start."""

    name: str
    kind: str
    host: str
    port: int
    timeout_ms: float
    retries: int
    backoff_ms: float
    database: str = ""
    username: str | None = None
    password: str | None = None
    auth_source: str = ""
    path: str = ""  # HTTP base path
    address: str = ""  # as written in the config, for log lines
    retry_on: tuple[str, ...] = ()
    pool_size: int = 0  # a MongoDB URI's maxPoolSize (0: not set, the driver's 100 is not modelled)
    max_connecting: int = 2  # ... and maxConnecting
    client: str = ""  # Dependency.client: whose error texts
    invalid: str = ""  # the client's error for an address it cannot parse: every call fails before dialing


@dataclass
class ProgramInstance:
    """One running process of a program (attached to the data plane while it serves)."""

    spec: ProgramSpec
    namespace: str
    pod: str
    container: str
    ctx: Any  # the container's ShellContext (identity check against the runtime's instance)
    port: int
    deps: dict[str, DependencyConfig]
    started_at: float
    leak_mib_per_min: float = 0.0
    leak_kib_per_request: float = 0.0
    settings: dict[str, str] = field(default_factory=dict)
    tls_port: int = 0  # the TLS listener (spec.tls_port), 0: none
    certificates: dict[str, str] = field(default_factory=dict)  # SNI host -> PEM served ("": default)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.namespace, self.pod, self.container)


def read_setting(setting: Setting, call: Invocation, spec: ProgramSpec) -> str | None:
    return setting.read(call.argv, call.ctx.env, call.ctx.files, spec.config_file)


def knob_value(knob: Knob, call: Invocation, spec: ProgramSpec) -> float:
    if isinstance(knob, (int, float)):
        return float(knob)
    text = read_setting(knob, call, spec)
    try:
        return float(text) if text is not None else 0.0
    except ValueError:
        return 0.0


_URI = re.compile(r"^(?P<scheme>[a-z+]+)://(?:(?P<user>[^:@/]*)(?::(?P<password>[^@/]*))?@)?"
                  r"(?P<host>[^:/?]+)(?::(?P<port>\d+))?(?P<path>/[^?]*)?(?:\?(?P<query>.*))?$")


def invalid_address_error(client: str, kind: str, address: str, path: str = "") -> str:
    """What the client library throws before dialing an address it cannot parse ("" if it can).
    awc parses the URL with the `http` crate, whose `Uri` rejects an authority followed by a path
    without a scheme (`quote:0000/getquote`) with "invalid format"."""
    if client == "awc" and kind == "http" and "://" not in address:
        return "invalid format"
    return ""


def resolve_dependency(dep: Dependency, call: Invocation, spec: ProgramSpec) -> DependencyConfig | None:
    """Address, credentials and policy of a dependency from the process's settings."""
    address = read_setting(dep.address, call, spec)
    if not address:
        return None
    host, port, user, password, database, auth_source, path = address, 0, None, None, "", "", ""
    explicit = False  # a port written in the address, even 0 (`quote:0000`): clients dial it as written
    pool_size, max_connecting = 0, 2
    # Hotel Reservation's binaries prefix the configured "host:port/?options" with "mongodb://".
    match = _URI.match("mongodb://" + address if dep.kind == "mongodb" and "://" not in address and "?" in address
                       else address)
    if match:
        host = match.group("host")
        port = int(match.group("port") or 0)
        explicit = match.group("port") is not None
        user = unquote(match.group("user")) if match.group("user") else None
        password = unquote(match.group("password")) if match.group("password") else None
        path = match.group("path") or ""
        if dep.kind == "mongodb":
            database = path.strip("/")
            for part in (match.group("query") or "").split("&"):
                key, _, value = part.partition("=")
                if key == "authSource":
                    auth_source = value
                elif key in ("maxPoolSize", "maxConnecting") and value.isdigit():
                    if key == "maxPoolSize":
                        pool_size = int(value)
                    else:
                        max_connecting = int(value)
        elif dep.kind == "postgres":  # postgresql://user:pass@host:port/dbname
            database = path.strip("/")
    elif dep.kind == "postgres" and "=" in address:  # libpq / Npgsql keyword=value strings
        host, port, user, password, database = _conninfo(address)
    elif ":" in address:
        host, _, port_text = address.rpartition(":")
        port = int(port_text) if port_text.isdigit() else 0
        explicit = port_text.isdigit()
    if not port and not explicit and dep.port is not None:
        text = read_setting(dep.port, call, spec)
        port = int(text) if text and text.isdigit() else 0
    if not port and not explicit:
        port = DEFAULT_PORTS.get(dep.kind, 80)
    if dep.database is not None:
        database = read_setting(dep.database, call, spec) or database
    if dep.username is not None:
        user = read_setting(dep.username, call, spec) or user
    if dep.password is not None:
        password = read_setting(dep.password, call, spec) or password
    if dep.auth_source is not None:
        auth_source = read_setting(dep.auth_source, call, spec) or auth_source
    if user and not auth_source:
        auth_source = "admin"
    policy = dep.policy
    timeout = parse_duration_ms(read_setting(policy.timeout, call, spec), policy.timeout_unit)
    retries_text = read_setting(policy.retries, call, spec) or "0"
    backoff = parse_duration_ms(read_setting(policy.backoff, call, spec), policy.timeout_unit)
    try:
        retries = max(0, int(float(retries_text)))
    except ValueError:
        retries = 0
    return DependencyConfig(name=dep.name, kind=dep.kind, host=host, port=port,
                            timeout_ms=timeout if timeout and timeout > 0 else 1000.0, retries=retries,
                            backoff_ms=backoff or 0.0, database=database, username=user, password=password,
                            auth_source=auth_source, path=path, address=address,
                            retry_on=tuple(policy.retry_on), pool_size=pool_size, max_connecting=max_connecting,
                            client=dep.client,
                            invalid=invalid_address_error(dep.client, dep.kind, address, path))


def _conninfo(text: str) -> tuple[str, int, str | None, str | None, str]:
    """host, port, user, password, dbname of `host=db user=u dbname=x` (libpq) or
    `Host=db;Username=u;Database=x` (Npgsql)."""
    keys: dict[str, str] = {}
    for part in re.split(r"[;\s]+", text.strip()):
        key, eq, value = part.partition("=")
        if eq:
            keys[key.strip().lower()] = value.strip()
    port = keys.get("port", "")
    return (keys.get("host") or keys.get("server") or "", int(port) if port.isdigit() else 0,
            keys.get("user") or keys.get("username") or keys.get("user id"), keys.get("password"),
            keys.get("dbname") or keys.get("database") or "")


class _Fields(dict):  # type: ignore[type-arg]
    """Template fields; unknown names stay as written instead of raising."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def render(template: str, fields: dict[str, Any]) -> str:
    try:
        return template.format_map(_Fields(fields))
    except (IndexError, ValueError, AttributeError, KeyError):
        return template


def program_command(name: str) -> CommandFn:
    """The shell command running the registered program `name` (looked up at start, so a program
    registered after the image still runs)."""

    def run(call: Invocation) -> Program:
        spec = get_program(name)
        if spec is None:
            call.error(f"exec {name}: program behaviour not registered")
            return 127
        return (yield from _run_program(spec, call))

    run.__name__ = f"program_{name}"
    return run


THRIFT_BIND_ERROR = ("terminate called after throwing an instance of "
                     "'apache::thrift::transport::TTransportException'\n"
                     "  what():  Could not bind: Address already in use")


def _bind_error(spec: ProgramSpec, now: float, port: int) -> tuple[str, int]:
    """What the binary prints when its port is taken in the pod: a C++ Thrift server aborts on
    the uncaught TTransportException (SIGABRT, 134); a Go server logs net.Listen's error
    fatally and exits 1."""
    if spec.protocol == "thrift" and spec.log.style == "boost":
        return THRIFT_BIND_ERROR, 134
    return format_log(spec.log.style, now, "fatal", spec.log.main_caller, go_bind_error(port)), 1


def _run_program(spec: ProgramSpec, call: Invocation) -> Program:
    ctx = call.ctx
    twin = ctx.twin
    style, main_caller = spec.log.style, spec.log.main_caller

    def log(level: str, message: str) -> None:
        # A fatal exit prints before any SDK exporter could flush. A program that only exports sends
        # its startup messages as records; one that prints too keeps them on stdout, in its console
        # format (its OTLP copies are left out: those formats spread one message over lines).
        if level == "fatal" or to_stdout(spec.log.sinks):
            call.write(format_log(style, call.now, level, main_caller, message) + "\n")
        pod_meta = (ctx.pod or {}).get("metadata") or {}
        if level != "fatal" and spec.log.sinks == "otlp" and twin is not None:
            export(twin, pod_meta.get("namespace", "default"), pod_meta.get("name", ""), ctx.container,
                   spec.trace_name, call.now, message, level=level, scope=spec.trace_name)

    if spec.log.style == "zerolog":  # a Go binary: its runtime needs OS threads from the node
        ctx.extras[GO_EXTRA] = GO_THREADS
        if twin is not None and node_exhausted(twin, ctx.node):
            call.error(go_thread_failure(3))
            return 2
    settings = {key: read_setting(value, call, spec) or "" for key, value in sorted(spec.settings.items())}
    port_text = read_setting(spec.port, call, spec)
    addresses = {d.name: read_setting(d.address, call, spec) or "" for d in spec.dependencies}
    fields = {"name": spec.name, "port": port_text or "", "addr": addresses, "setting": settings}
    for line in spec.startup.logs:
        log("info", render(line, fields))
    for required in spec.startup.required:
        if read_setting(required.setting, call, spec) is None:
            log("fatal", render(required.message, fields))
            return required.exit_code
    listens = not (spec.consumers and port_text == "0")  # a consumer-only process serves no port
    if listens and (not port_text or not port_text.isdigit() or not 0 < int(port_text) < 65536):
        log("fatal", f"listen tcp: address {port_text or ''}: invalid port" if port_text
            else "listen tcp: missing port in address")
        return 1
    port = int(port_text)
    if spec.protocol == "http" and GO_EXTRA in ctx.extras:
        ctx.extras[GO_HTTP_PORT] = port  # net/http logs its accept errors (node_kernel)
    deps: dict[str, DependencyConfig] = {}
    for dep in spec.dependencies:
        resolved = resolve_dependency(dep, call, spec)
        if resolved is not None:
            deps[dep.name] = resolved
    yield Usage(memory_bytes=int(spec.memory.base_mib * MIB), cpu_cores=spec.idle_cpu_cores)
    if spec.startup.seconds > 0:
        yield Sleep(spec.startup.seconds)
    dataplane = twin.services.dataplane if twin is not None else None
    for dep in spec.dependencies:
        if not dep.startup_check:
            continue
        resolved = deps.get(dep.name)
        if resolved is None:
            error = f"no address configured for {dep.name}"
        elif dataplane is None:
            continue
        else:
            result = dataplane.connect(ctx.pod, resolved.host, resolved.port,
                                       connect_timeout_ms=resolved.timeout_ms)
            if result.ok:
                continue
            error = result.message
            if result.error in ("timeout",) and result.latency_ms > 0:
                yield Sleep(min(result.latency_ms, 30_000) / 1000.0)
        call.write(render(dep.startup_failure_log, {**fields, "error": error}) + "\n")
        return dep.startup_failure_exit_code
    for dep in spec.dependencies:
        if dep.startup_query is None or dataplane is None or dep.name not in deps:
            continue
        error = yield from _startup_query(call, dataplane, dep, deps[dep.name], spec)
        if error:
            log("fatal", render(dep.startup_failure_log, {**fields, "error": error}))
            return dep.startup_failure_exit_code
    paths: tuple[str, ...] | None = spec.http_paths if spec.protocol == "http" else None
    if listens:
        bind_error, bind_code = _bind_error(spec, call.now, port)
        yield Listen(port, "TCP", http_paths=paths, grpc_health=spec.grpc_health,
                     bind_error=bind_error, bind_exit_code=bind_code)
        for extra in extra_listen_ports(spec.flag_server, settings):  # flagd's OFREP port
            yield Listen(extra, "TCP", http_paths=())
        admin = read_setting(spec.admin_port, call, spec) if spec.admin_port is not None else None
        if admin and admin.isdigit() and 0 < int(admin) < 65536:
            yield Listen(int(admin), "TCP", http_paths=(), handler=f"{spec.name}:admin")
    tls_text = read_setting(spec.tls_port, call, spec) if spec.tls_port is not None and listens else None
    tls_port = int(tls_text) if tls_text and tls_text.isdigit() and 0 < int(tls_text) < 65536 else 0
    if tls_port:
        yield Listen(tls_port, "TCP", http_paths=paths)
    instance = ProgramInstance(
        spec=spec, namespace=((ctx.pod or {}).get("metadata") or {}).get("namespace", "default"),
        pod=((ctx.pod or {}).get("metadata") or {}).get("name", ""), container=ctx.container, ctx=ctx,
        port=port, deps=deps, started_at=call.now,
        leak_mib_per_min=knob_value(spec.memory.leak_mib_per_min, call, spec),
        leak_kib_per_request=knob_value(spec.memory.leak_kib_per_request, call, spec), settings=settings,
        tls_port=tls_port)
    if dataplane is not None:
        dataplane.attach(instance)
    for line in spec.startup.ready_logs:
        log("info", render(line, fields))
    try:
        while True:
            yield Sleep(FOREVER)
            if ctx.extras.get("go_thread_failed"):  # woken by the node: no thread for the runtime
                call.error(go_thread_failure(GO_THREADS))
                return 2
    finally:
        if dataplane is not None:
            dataplane.detach(instance, clean=ctx.extras.get("stop_signal") == "TERM")  # kubelet.STOP_SIGNAL
    return 0


def _startup_query(call: Invocation, dataplane: Any, dep: Dependency, resolved: DependencyConfig,
                   spec: ProgramSpec) -> Generator[Any, None, str]:
    """Wait for the store like the driver's server selection, then run the start-up query;
    returns the driver's error text ("" when it worked)."""
    from sregym.twin.dataplane.backends import StoreRequest, ask

    waited = 0.0
    while True:
        result = dataplane.connect(call.ctx.pod, resolved.host, resolved.port, connect_timeout_ms=1000.0)
        if result.ok:
            break
        if waited >= dep.startup_wait_s:
            if result.error in ("nxdomain", "servfail"):
                return f"no reachable servers ({result.message})"
            return (f"server selection error: server selection timeout, current topology: {{ Type: Unknown, "
                    f"Servers: [{{ Addr: {resolved.host}:{resolved.port}, Type: Unknown, Last error: "
                    f"{result.message} }}, ] }}")
        yield Sleep(1.0)
        waited += 1.0
    request = StoreRequest(kind=dep.kind, operation="find", database=resolved.database,
                           collection=dep.startup_query or "", username=resolved.username,
                           password=resolved.password, auth_source=resolved.auth_source, rate=0.0,
                           client=call.ctx.pod, client_app=spec.name)
    outcome = ask(call.ctx.twin, result.dst_pod or {}, request, dep.hit_ratio)
    return "" if outcome.ok else outcome.error or "server error"


def program_image(repository: str, tags: Iterable[str], binaries: Iterable[str], *, cmd: tuple[str, ...] = (),
                  entrypoint: tuple[str, ...] = (), size_mb: float = 40.0, shell: str = "dash",
                  description: str = "") -> ImageSpec:
    """An image whose binaries run registered programs (an app pushes it to the twins it is
    deployed into; `bind_image` makes it a built-in base image instead)."""
    commands = {name: program_command(name) for name in binaries}
    return ImageSpec(repository, tuple(tags), size_mb=size_mb, description=description,
                     cmd=cmd, entrypoint=entrypoint, shell=shell, commands=commands)


def bind_image(repository: str, tags: Iterable[str], binaries: Iterable[str], *, cmd: tuple[str, ...] = (),
               entrypoint: tuple[str, ...] = (), size_mb: float = 40.0, shell: str = "dash",
               description: str = "") -> ImageSpec:
    """Register (or extend) a built-in image whose binaries run registered programs."""
    return register_image(program_image(repository, tags, binaries, cmd=cmd, entrypoint=entrypoint,
                                        size_mb=size_mb, shell=shell, description=description))


__all__ = ["DependencyConfig", "ProgramInstance", "bind_image", "program_command", "program_image", "render",
           "resolve_dependency"]
