"""Envoy as an edge proxy: what its router does with each request, its access log and its stats.

A proxy program registers its Envoy configuration (`register_envoy`: routes by prefix, clusters by
the env vars the template substitutes). Every tick, after the data plane settled (order 86), the
requests the workloads sent to that proxy are replayed through Envoy's router the way Envoy
decides them, so the response flags say what really happened upstream:

* cluster without hosts (its STRICT_DNS name does not resolve)    → 503 `UH`  no healthy upstream
* connection refused / unreachable / connect timeout               → 503 `UF`  upstream connect error
* connection reset by the upstream before the response             → 503 `UC`
* the upstream answered after the route timeout (15 s by default)  → 504 `UT`  upstream request timeout
* the retry policy's attempts all failed                           → 503 `URX` (only with a retry policy)
* no route matches the path                                        → 404 `NR`
* anything the upstream answered                                   → its status, `-`, `via_upstream`

The traffic itself is bounded the same way: `route_dependency` gives the engine an Envoy
process's upstream call with the deadline of the route its operation matches, when that route's
timeout is shorter than the program's own (so a shortened route timeout fails the requests that
outlast it, for the users as in the log).

The access log is written in the configured format, one line per request, with fractional rates
carried over ticks and at most `MAX_LINES_PER_TICK` lines a tick (a flood is sampled, never
summed). Counters (`cluster.<name>.upstream_rq_total`, `upstream_cx_connect_fail`, ...) are kept
cumulatively for the admin interface (`envoy_admin.py`). Randomness (request ids, ports,
durations) comes from the `dataplane-envoy` stream.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.twin.controller import Controller, controller
from sregym.twin.dataplane import log_channel
from sregym.twin.dataplane.envoy_filters import HttpFilter, request_cpu_ms
from sregym.twin.dataplane.queueing import exceed
from sregym.twin.dataplane.state import match_operation

if TYPE_CHECKING:
    from sregym.twin.dataplane.engine import DataPlaneEngine
    from sregym.twin.dataplane.programs import DependencyConfig
    from sregym.twin.dataplane.spec import Operation
    from sregym.twin.dataplane.state import Proc

MAX_LINES_PER_TICK = 25
CONNECT_TIMEOUT_MS = 5_000.0  # a cluster's default connect_timeout
USER_AGENT = "python-requests/2.32.3"  # Locust's HttpSession


@dataclass(frozen=True)
class Route:
    """One route of the virtual host: `prefix` (or an exact `path` when `exact`), its cluster,
    `timeout_ms` (0: disabled), `redirect` (an exact-path redirect answers 301 itself)."""

    prefix: str
    cluster: str = ""
    exact: bool = False
    timeout_ms: float = 15_000.0
    redirect: str = ""
    retries: int = 0  # retry_policy.num_retries (the router's default: none)


@dataclass(frozen=True)
class Cluster:
    """A STRICT_DNS cluster whose one endpoint is `${host_env}:${port_env}`, or the literal
    `host`:`port` a loaded configuration file names (its template already substituted)."""

    name: str
    host_env: str = ""
    port_env: str = ""
    host: str | None = None
    port: str | None = None

    def address(self, env: dict[str, str]) -> tuple[str, str]:
        """(host, port) of the endpoint for a process with `env`."""
        if self.host is not None:
            return self.host, self.port or ""
        return env.get(self.host_env, ""), env.get(self.port_env, "")


@dataclass(frozen=True)
class EnvoyConfig:
    routes: tuple[Route, ...]
    clusters: tuple[Cluster, ...]
    log_format: str  # the access log format string (command operators as Envoy documents them)
    admin_port_env: str = ""
    stat_prefix: str = "ingress_http"
    version: str = "1.34.1"
    # The access logger: "stdout" (a file logger on /dev/stdout) or "otlp" (the OpenTelemetry access
    # logger: the format is the record's body, `log_attributes` its attributes, each a format string).
    access_log: str = "stdout"
    log_attributes: tuple[tuple[str, str], ...] = ()
    http_filters: tuple[HttpFilter, ...] = ()  # the chain (envoy_filters.py); empty: not read from a file


_CONFIGS: dict[str, EnvoyConfig] = {}
# Where a process keeps the configuration it loaded at start (its container's extras).
LOADED_CONFIG = "envoy.loaded-config"


def register_envoy(program: str, config: EnvoyConfig) -> None:
    """Let the program named `program` (a ProgramSpec name) behave as this Envoy."""
    _CONFIGS[program] = config


def envoy_config(program: str) -> EnvoyConfig | None:
    return _CONFIGS.get(program)


def config_of(proc: Proc) -> EnvoyConfig | None:
    """The configuration this Envoy process runs: the file it loaded at start (envoy_bootstrap.py),
    else its program's registered one."""
    extras = getattr(proc.inst.ctx, "extras", None) or {}
    loaded = extras.get(LOADED_CONFIG)
    return loaded if loaded is not None else _CONFIGS.get(proc.inst.spec.name)


@dataclass
class Outcome:
    """How a share of one route's requests ended."""

    status: int
    flags: str
    details: str
    latency_ms: float
    upstream: str = "-"  # the upstream host ip:port
    transport: str = "-"  # %UPSTREAM_TRANSPORT_FAILURE_REASON%
    reached: bool = True  # an upstream answered (upstream_rq_<code> counted as a response)


@dataclass
class EnvoyState:
    """One Envoy process's counters and the log lines still owed (fractional carry)."""

    counters: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    carry: dict[tuple[str, str, int, str], float] = field(default_factory=lambda: defaultdict(float))
    healthy: dict[str, list[str]] = field(default_factory=dict)  # cluster -> hosts (ip:port)
    hostnames: dict[str, str] = field(default_factory=dict)  # cluster -> the name it resolves


def filter_cpu_ms(proc: Proc, path: str) -> float:
    """Extra CPU (ms) this Envoy's `http_filters` spend on one request for `path` (0 for any
    other process, and for a chain of the router and the fault filter)."""
    if proc.inst.spec.name not in _CONFIGS:
        return 0.0
    config = config_of(proc)
    if config is None or not config.http_filters:
        return 0.0
    return request_cpu_ms(config.http_filters, path)


# The router's own answer when a route's timeout passes before the upstream's response (and the
# client name that makes errortexts.py give it as the caller's error text).
UPSTREAM_TIMEOUT_BODY = "upstream request timeout"
ENVOY_CLIENT = "envoy"


def route_dependency(proc: Proc, op: Operation, dep: DependencyConfig) -> DependencyConfig:
    """The upstream call of an Envoy process's `op` as the route it matches bounds it.

    Envoy's route `timeout` spans the whole upstream response (request sent to last byte; a retry
    without `per_try_timeout` shares it), so when the loaded configuration's route for `op`'s path
    is shorter than the deadline the program's dependency already carries, that route timeout is
    the call's deadline and its expiry is Envoy's `upstream request timeout`. The program's
    dependency timeouts stand for the template's own (15 s on the demo's routes), so a
    configuration that shortens no route leaves every call exactly as it was."""
    if proc.inst.spec.name not in _CONFIGS:
        return dep
    config = config_of(proc)
    route = route_for(config, op.name) if config is not None else None
    if route is None or route.redirect or not 0 < route.timeout_ms < dep.timeout_ms:
        return dep
    return replace(dep, timeout_ms=route.timeout_ms, client=ENVOY_CLIENT)


def route_for(config: EnvoyConfig, path: str) -> Route | None:
    """The first route matching `path`, as the router walks them in order."""
    path = path.partition("?")[0]  # `path` and `prefix` matches ignore the query string
    for route in config.routes:
        if (path == route.prefix) if route.exact else path.startswith(route.prefix):
            return route
    return None


def outcomes(engine: DataPlaneEngine, proc: Proc, config: EnvoyConfig, route: Route, method: str,
             path: str) -> list[tuple[float, Outcome]]:
    """(fraction, outcome) of a request on `route` now."""
    if route.redirect:
        return [(1.0, Outcome(301, "-", "direct_response", 0.1, reached=False))]
    cluster = next((c for c in config.clusters if c.name == route.cluster), None)
    env = getattr(proc.inst.ctx, "env", None) or {}  # read only (Cluster.address)
    host, port_text = cluster.address(env) if cluster else ("", "")
    if not host or not port_text.isdigit():
        return [(1.0, Outcome(503, "UH", "no_healthy_upstream", 0.1, reached=False))]
    conn = engine.route(proc.pod_obj, host, int(port_text), connect_timeout_ms=CONNECT_TIMEOUT_MS)
    out: list[tuple[float, Outcome]] = []
    for leg in conn.legs:
        res = leg.result
        if res.stage == "dns" or res.error in ("nxdomain", "servfail"):
            out.append((leg.fraction, Outcome(503, "UH", "no_healthy_upstream", 0.1, reached=False)))
            continue
        upstream = f"{res.resolved_ip or res.dst_ip}:{port_text}"
        if not res.ok:
            if res.error == "reset":
                out.append((leg.fraction, Outcome(503, "UC", "upstream_reset_before_response_started"
                                                  "{connection_termination}", res.latency_ms, upstream)))
                continue
            reason = "connection_timeout" if res.error == "timeout" else "remote_connection_failure"
            transport = "-" if res.error == "timeout" else \
                "delayed_connect_error:_" + ("No_route_to_host" if res.error in ("unreachable", "no_route")
                                             else "Connection_refused")
            flags = "URX,UF" if route.retries else "UF"
            details = f"upstream_reset_before_response_started{{{reason}" + \
                (f"|{transport}}}" if transport != "-" else "}")
            latency = min(res.latency_ms, CONNECT_TIMEOUT_MS) * (route.retries + 1)
            out.append((leg.fraction, Outcome(503, flags, details, latency, upstream, transport, reached=False)))
            continue
        callee = engine.proc_at(res.dst_ip, res.target_port)
        rtt = 2 * res.latency_ms
        op = match_operation(callee, _upstream_path(route, path), method) if callee is not None else None
        result = callee.results.get(op.key) if callee is not None and op is not None else None
        if result is None:
            out.append((leg.fraction, Outcome(200 if op is not None or callee is None else 404, "-", "via_upstream",
                                              rtt + 0.5, upstream)))
            continue
        d = result.d + rtt
        late = exceed(d, result.m, route.timeout_ms) if route.timeout_ms > 0 else 0.0
        if late > 0:
            out.append((leg.fraction * late, Outcome(504, "UT", "upstream_response_timeout", route.timeout_ms,
                                                     upstream, reached=False)))
        rest = leg.fraction * (1.0 - late)
        mean = min(result.mean + rtt, route.timeout_ms or result.mean + rtt)
        if result.success > 0:
            out.append((rest * result.success, Outcome(200, "-", "via_upstream", mean, upstream)))
        if result.success < 1.0:
            out.append((rest * (1.0 - result.success), Outcome(500, "-", "via_upstream", mean, upstream)))
    return out


def _upstream_path(route: Route, path: str) -> str:
    return path  # prefix_rewrite changes what the upstream sees; the demo's upstreams match either


@controller
class EnvoyProxies(Controller):
    """Replays the requests sent to registered Envoy programs through their router each tick."""

    name = "envoy-proxies"
    order = 86
    user = "system:serviceaccount:sregym-system:dataplane"

    def __init__(self, twin: Any) -> None:
        super().__init__(twin)
        self.states: dict[tuple[str, str, str], EnvoyState] = {}
        # this tick's access log entries: (start, body, attributes)
        self.pending: dict[tuple[str, str, str], list[tuple[float, str, dict[str, str]]]] = defaultdict(list)
        twin.services.envoy = self

    def reconcile(self) -> None:
        engine = self.twin.services.dataplane
        procs = getattr(engine, "procs", None)  # a stand-in data plane may have no processes
        if not procs or not _CONFIGS:
            return
        proxies = {k: p for k, p in procs.items() if p.inst.spec.name in _CONFIGS}
        for key in [k for k in self.states if k not in proxies]:
            del self.states[key]
        if not proxies:
            return
        now, dt = self.twin.clock.now, self.twin.clock.tick
        rng = self.twin.rng.stream("dataplane-envoy")
        for name in sorted(engine.workloads):
            workload = engine.workloads[name]
            runs, src = workload.source_pod(self.twin)
            rate = workload.rate(now) if runs else 0.0
            if rate <= 0:
                continue
            host, port = workload.spec.host_port
            total = sum(m.weight for m in workload.spec.mix) or 1.0
            for leg in engine.route(src, host, port, connect_timeout_ms=workload.spec.timeout_ms).legs:
                proc = engine.proc_at(leg.result.dst_ip, leg.result.target_port) if leg.result.ok else None
                if proc is None or proc.inst.key not in proxies:
                    continue
                state = self.states.setdefault(proc.inst.key, EnvoyState())
                budget = [MAX_LINES_PER_TICK]
                authority = _authority(self.twin, leg.result, host, port)
                for mix in workload.spec.mix:
                    share = rate * leg.fraction * mix.weight / total
                    self._requests(engine, proc, state, src, authority, mix.method, mix.operation, share,
                                   dt, now, rng, budget)
        for key in sorted(self.pending):
            proc = engine.procs.get(key)
            config = config_of(proc) if proc is not None else None
            if proc is None or config is None:
                continue
            for at, text, attributes in sorted(self.pending[key], key=lambda entry: entry[:2]):
                log_channel.write(self.twin, proc.inst, at, text, attributes=attributes, sinks=config.access_log)
        self.pending.clear()
        for key, proc in sorted(proxies.items()):
            self._membership(engine, proc, self.states.setdefault(key, EnvoyState()))

    def _requests(self, engine: DataPlaneEngine, proc: Proc, state: EnvoyState, src: dict[str, Any] | None,
                  authority: str, method: str, path: str, rate: float, dt: float, now: float, rng: Any,
                  budget: list[int]) -> None:
        config = config_of(proc) or _CONFIGS[proc.inst.spec.name]
        counters = state.counters
        prefix = f"http.{config.stat_prefix}."
        route = route_for(config, path)
        parts = [(1.0, Outcome(404, "NR", "route_not_found", 0.1, reached=False))] if route is None else \
            outcomes(engine, proc, config, route, method, path)
        for fraction, outcome in parts:
            n = rate * fraction * dt
            if n <= 0:
                continue
            counters[prefix + "downstream_rq_total"] += n
            counters[prefix + f"downstream_rq_{outcome.status // 100}xx"] += n
            cluster = route.cluster if route is not None else ""
            if cluster and not route.redirect:  # type: ignore[union-attr]
                base = f"cluster.{cluster}."
                if outcome.flags == "UH":
                    counters[base + "upstream_cx_none_healthy"] += n
                else:
                    counters[base + "upstream_rq_total"] += n
                    counters[base + f"upstream_rq_{outcome.status // 100}xx"] += n
                    counters[base + f"upstream_rq_{outcome.status}"] += n
                    counters[base + "upstream_rq_completed"] += n
                    if "UF" in outcome.flags:
                        counters[base + "upstream_cx_connect_fail"] += n * (1 + route.retries)  # type: ignore[union-attr]
                        counters[base + "upstream_rq_pending_failure_eject"] += n
                    elif outcome.flags == "UT":
                        counters[base + "upstream_rq_timeout"] += n
                    elif outcome.flags == "UC":
                        counters[base + "upstream_cx_destroy_remote"] += n
                    else:
                        counters[base + "upstream_cx_total"] += n * 0.01  # pooled connections
            key = (method, path, outcome.status, outcome.flags)
            state.carry[key] += n
            lines = int(state.carry[key])
            state.carry[key] -= lines
            for _ in range(min(lines, budget[0])):
                budget[0] -= 1
                self._write(proc, config, src, authority, method, path, route, outcome, now, rng)

    def _write(self, proc: Proc, config: EnvoyConfig, src: dict[str, Any] | None, authority: str, method: str,
               path: str, route: Route | None, outcome: Outcome, now: float, rng: Any) -> None:
        start = now + rng.random() * self.twin.clock.tick
        jitter = rng.random()
        # a route timeout ends the stream when it fires: the request lasted that long, not a spread
        duration = int(outcome.latency_ms + jitter) if outcome.flags == "UT" else \
            max(0, int(outcome.latency_ms * (0.5 + jitter)))
        src_ip = ((src or {}).get("status") or {}).get("podIP") or "10.244.0.1"
        fields = {
            "START_TIME": _start_time(start),
            "REQ(:METHOD)": method,
            "REQ(X-ENVOY-ORIGINAL-PATH?:PATH)": path,
            "PROTOCOL": "HTTP/1.1",
            "RESPONSE_CODE": str(outcome.status),
            "RESPONSE_FLAGS": outcome.flags,
            "RESPONSE_CODE_DETAILS": outcome.details,
            "CONNECTION_TERMINATION_DETAILS": "-",
            "UPSTREAM_TRANSPORT_FAILURE_REASON": outcome.transport,
            "BYTES_RECEIVED": "0" if method == "GET" else str(40 + rng.randrange(200)),
            "BYTES_SENT": str(_bytes_sent(outcome, rng)),
            "DURATION": str(duration),
            "RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)": str(max(0, duration - 1)) if outcome.reached else "-",
            "REQ(X-FORWARDED-FOR)": "-",
            "REQ(USER-AGENT)": USER_AGENT,
            "REQ(X-REQUEST-ID)": uuid4_text(rng.getrandbits(128)),
            "REQ(:AUTHORITY)": authority,
            "UPSTREAM_HOST": outcome.upstream,
            "UPSTREAM_CLUSTER": route.cluster if route is not None and route.cluster else "-",
            "UPSTREAM_LOCAL_ADDRESS": f"{proc.pod_ip}:{32768 + rng.randrange(28000)}"
            if outcome.upstream != "-" else "-",
            "DOWNSTREAM_LOCAL_ADDRESS": f"{proc.pod_ip}:{proc.inst.port}",
            "DOWNSTREAM_REMOTE_ADDRESS": f"{src_ip}:{32768 + rng.randrange(28000)}",
            "REQUESTED_SERVER_NAME": "-",
            "ROUTE_NAME": "-",
        }
        attributes: dict[str, str] = {}
        if config.log_attributes:
            upstream_ip = outcome.upstream.rsplit(":", 1)[0] if outcome.upstream != "-" else "-"
            fields.update({"UPSTREAM_REMOTE_ADDRESS_WITHOUT_PORT": upstream_ip, "REQ(:SCHEME)": "http",
                           "DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT": src_ip, "REQ(:PATH)": path,
                           "REQ(:QUERY)": "-"})
            attributes = render_attributes(config.log_attributes, fields)
        self.pending[proc.inst.key].append((start, render_format(config.log_format, fields).rstrip("\n"),
                                            attributes))

    def _membership(self, engine: DataPlaneEngine, proc: Proc, state: EnvoyState) -> None:
        """Each cluster's hosts as its STRICT_DNS resolution finds them now."""
        config = config_of(proc) or _CONFIGS[proc.inst.spec.name]
        env = getattr(proc.inst.ctx, "env", None) or {}  # read only (Cluster.address)
        dns = engine.router
        for cluster in config.clusters:
            host, port = cluster.address(env)
            hosts: list[str] = []
            if host and port.isdigit():
                answer = dns.route(proc.pod_obj, host, int(port), connect_timeout_ms=CONNECT_TIMEOUT_MS)
                ips = sorted({leg.result.resolved_ip for leg in answer.legs
                              if leg.result.resolved_ip and leg.result.stage != "dns"})
                hosts = [f"{ip}:{port}" for ip in ips]
            state.healthy[cluster.name] = hosts
            state.hostnames[cluster.name] = f"{host}:{port}" if host else ""


def _authority(twin: Any, res: Any, host: str, port: int) -> str:
    """The Host header the client sent: the Service name it was given (Locust resolved it to an
    address the twin's workload keeps), else the address itself."""
    service = res.service
    if service is None and res.resolved_ip:
        service = next((s for s in twin.store.scan("Service") if (s.get("spec") or {}).get("clusterIP")
                        == res.resolved_ip), None)
    name = ((service or {}).get("metadata") or {}).get("name")
    return f"{name}:{port}" if name else f"{host}:{port}"


def _start_time(at: float) -> str:
    """`%Y-%m-%dT%H:%M:%S.mmmZ`, formatted from the fields (one per access log line: `strftime`
    cost more than the rest of the line's timestamp)."""
    m = datetime.fromtimestamp(at, tz=UTC)
    return (f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}."
            f"{m.microsecond // 1000:03d}Z")


_BODIES = {"UH": len("no healthy upstream"), "UT": len("upstream request timeout"), "NR": 0}


def _bytes_sent(outcome: Outcome, rng: Any) -> int:
    if outcome.flags in _BODIES:
        return _BODIES[outcome.flags]
    if "UF" in outcome.flags or outcome.flags == "UC":
        return 91 + len(outcome.transport)
    return 200 + rng.randrange(6000) if outcome.status == 200 else 21


@functools.lru_cache(maxsize=256)
def _parsed_format(fmt: str) -> tuple[tuple[bool, str], ...]:
    """`fmt` split once into (is_operator, text) parts: access logs render it per request line."""
    parts: list[tuple[bool, str]] = []
    literal: list[str] = []
    i = 0
    while i < len(fmt):
        if fmt[i] == "%":
            end = fmt.find("%", i + 1)
            if end > i:
                if literal:
                    parts.append((False, "".join(literal)))
                    literal = []
                parts.append((True, fmt[i + 1:end]))
                i = end + 1
                continue
        literal.append(fmt[i])
        i += 1
    if literal:
        parts.append((False, "".join(literal)))
    return tuple(parts)


@functools.lru_cache(maxsize=256)
def _compiled_format(fmt: str) -> tuple[str, tuple[str, ...]]:
    """`fmt` as a positional `str.format` template (literal braces doubled) and its operators in
    order: a line is then one `format` call instead of a join over every part."""
    template: list[str] = []
    operators: list[str] = []
    for operator, text in _parsed_format(fmt):
        if operator:
            template.append("{}")
            operators.append(text)
        else:
            template.append(text.replace("{", "{{").replace("}", "}}"))
    return "".join(template), tuple(operators)


def render_format(fmt: str, fields: dict[str, str]) -> str:
    """Substitute `%OPERATOR%` command operators; unknown ones print `-` as Envoy's do when unset."""
    template, operators = _compiled_format(fmt)
    get = fields.get
    return template.format(*[get(name, "-") for name in operators])


@functools.lru_cache(maxsize=64)
def _compiled_attributes(attributes: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Each attribute's (name, template, operators), the literal ones rendered once: most
    attributes are one operator or none, and every access log line renders them all."""
    compiled = []
    for name, fmt in attributes:
        template, operators = _compiled_format(fmt)
        compiled.append((name, template.format() if not operators else template, operators))
    return tuple(compiled)


def render_attributes(attributes: tuple[tuple[str, str], ...], fields: dict[str, str]) -> dict[str, str]:
    """`{name: render_format(fmt, fields)}` for the (name, fmt) pairs, computed with less work."""
    get = fields.get
    out: dict[str, str] = {}
    for name, template, operators in _compiled_attributes(attributes):
        if not operators:
            out[name] = template
        elif template == "{}":
            value = get(operators[0], "-")
            out[name] = value if type(value) is str else template.format(value)
        else:
            out[name] = template.format(*[get(op, "-") for op in operators])
    return out


def uuid4_text(bits: int) -> str:
    """`str(uuid.UUID(int=bits, version=4))` without building the object (a request id per
    access log line): the version and variant bits set, then the 8-4-4-4-12 hex groups."""
    bits = (bits & ~(0xC000 << 48)) | (0x8000 << 48)
    bits = (bits & ~(0xF000 << 64)) | (4 << 76)
    text = f"{bits:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


__all__ = ["ENVOY_CLIENT", "LOADED_CONFIG", "UPSTREAM_TIMEOUT_BODY", "Cluster", "EnvoyConfig", "EnvoyProxies", "Outcome", "Route", "config_of", "envoy_config",
           "filter_cpu_ms", "outcomes", "register_envoy", "render_attributes", "render_format", "route_dependency", "route_for", "uuid4_text"]
