"""wrk2 as a program: the load generator is a real workload, and its pod is the traffic source.

A load-generator Deployment runs `wrk` (DeathStarBench's wrk2 fork: `-R` rate, `-D` inter-arrival
distribution, `-s` Lua script, target URL). The process reads everything the real binary reads —
its argv and the mounted Lua script, whose `local <name>_ratio = x` lines and request functions
(`local method = "GET"`, `local path = url .. "/hotels?..."`) give the request mix — resolves the
target host once at start (`unable to resolve ...` and exit 1 when it cannot, like wrk), then
drives the data plane's open-loop workload for as long as it runs: the fluid engine routes the
traffic from the generator's own pod (DNS was already done, so the pod's egress NetworkPolicy,
the Service, endpoints, chaos ... all apply). When the process stops — pod deleted, Deployment
scaled to zero or removed, container killed, `-d` elapsed — its rate leaves the workload.

Several generator processes add up (two replicas of a wrk2 Deployment send twice the load). The
engine's workload is named by the app (the pod annotation `sregym.io/app`), so
`dataplane.set_load(app, x)` and `dataplane.burst(app, x, s)` keep working, and a multiplier
survives generator restarts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from sregym.twin.dataplane.spec import parse_duration_ms
from sregym.twin.dataplane.workload import RequestMix, Workload, WorkloadSpec
from sregym.twin.node.runtime import runtime_of
from sregym.twin.node.shell import Invocation, Program, Sleep, Usage

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

APP_ANNOTATION = "sregym.io/app"
DEFAULT_TIMEOUT_MS = 2000.0  # wrk's SOCKET_TIMEOUT_MS
CALIBRATION_S = 10.0  # wrk2 measures for ~10 s before printing its per-thread calibration
MIB = 1 << 20
_VALUE_OPTS = {"t": "threads", "c": "connections", "d": "duration", "s": "script", "H": "header",
               "T": "timeout", "R": "rate", "D": "dist", "P": "print"}
_LONG = {"threads", "connections", "duration", "script", "header", "timeout", "rate", "dist"}
USAGE = """Usage: wrk <options> <url>
  Options:
    -c, --connections <N>  Connections to keep open
    -D, --dist        <S>  fixed, exp, norm, zipf
    -d, --duration    <T>  Duration of test
    -t, --threads     <N>  Number of threads to use

    -s, --script      <S>  Load Lua script file
    -H, --header      <H>  Add header to request
    -L  --latency          Print latency statistics
    -T  --timeout     <T>  Socket/request timeout
    -R, --rate        <T>  work rate (throughput)
                           in requests/sec (total)
                           [Required Parameter]
"""


def _host_header(headers: list[str]) -> str:
    """The name a `-H "Host: ..."` header asks for (wrk sends it instead of the URL's host)."""
    for header in headers:
        name, _, value = header.partition(":")
        if name.strip().lower() == "host" and value.strip():
            return value.strip()
    return ""


# ------------------------------------------------------------------------------------ arguments
@dataclass
class WrkArgs:
    url: str = ""
    rate: float = 0.0
    threads: int = 2
    connections: int = 10
    duration_s: float = 10.0
    timeout_ms: float = DEFAULT_TIMEOUT_MS
    script: str | None = None
    dist: str = "fixed"
    headers: list[str] = field(default_factory=list)


def _scan_number(text: str) -> float:
    """wrk's scan_metric: 1k = 1000, 1M = 1e6."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", text.strip())
    if not match:
        raise ValueError(text)
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[match.group(2).lower()]
    return float(match.group(1)) * scale


def _scan_time(text: str) -> float:
    """wrk's scan_time: a number with an optional s/m/h/d unit (seconds by default)."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", text.strip())
    if not match:
        value = parse_duration_ms(text)
        if value is None:
            raise ValueError(text)
        return value / 1000.0
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


def parse_args(argv: list[str]) -> WrkArgs:
    """getopt_long as wrk2 does it: `-R100`, `-R 100`, `--rate=100`, `--rate 100`."""
    out = WrkArgs()
    values: dict[str, str] = {}
    positional: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg.startswith("--") and len(arg) > 2:
            key, eq, value = arg[2:].partition("=")
            if key in _LONG:
                if not eq:
                    index += 1
                    if index >= len(argv):
                        raise ValueError(f"option '--{key}' requires an argument")
                    value = argv[index]
                if key == "header":
                    out.headers.append(value)
                else:
                    values[key] = value
        elif arg.startswith("-") and len(arg) > 1:
            letter = arg[1]
            if letter in _VALUE_OPTS:
                value = arg[2:]
                if not value:
                    index += 1
                    if index >= len(argv):
                        raise ValueError(f"option requires an argument -- '{letter}'")
                    value = argv[index]
                key = _VALUE_OPTS[letter]
                if key == "header":
                    out.headers.append(value)
                else:
                    values[key] = value
            # flags (-L, -U, -B, -r, -v) need no value
        else:
            positional.append(arg)
        index += 1
    if not positional:
        raise ValueError("missing url")
    out.url = positional[0]
    if "rate" not in values:
        raise ValueError("missing rate")
    out.rate = _scan_number(values["rate"])
    out.threads = int(_scan_number(values.get("threads", "2")))
    out.connections = int(_scan_number(values.get("connections", "10")))
    out.duration_s = _scan_time(values.get("duration", "10s"))
    if "timeout" in values:
        out.timeout_ms = _scan_time(values["timeout"]) * 1000.0
    out.script = values.get("script")
    out.dist = values.get("dist", "fixed")
    return out


# ------------------------------------------------------------------------------------ Lua script
_RATIO = re.compile(r"local\s+(\w+?)_ratio\s*=\s*([0-9.eE+-]+)")
_FUNCTION = re.compile(r"local\s+function\s+(\w+)\s*\(")
_METHOD = re.compile(r"local\s+method\s*=\s*\"(\w+)\"")
_PATH = re.compile(r"local\s+path\s*=\s*url\s*\.\.\s*\"(/[^\"?]*)")
_DISPATCH = re.compile(r"return\s+(\w+)\s*\(")


def mix_from_script(text: str) -> tuple[RequestMix, ...]:
    """The request mix a DeathStarBench-style wrk2 script produces.

    The `request` function draws a coin against the declared ratios in order and returns the
    matching request function; each request function builds `method` and `url .. "/path?..."`."""
    ratios = [(name, float(value)) for name, value in _RATIO.findall(text)]
    functions: dict[str, tuple[str, str]] = {}
    starts = [(m.start(), m.group(1)) for m in _FUNCTION.finditer(text)]
    for i, (start, name) in enumerate(starts):
        body = text[start: starts[i + 1][0] if i + 1 < len(starts) else len(text)]
        method, path = _METHOD.search(body), _PATH.search(body)
        if method and path:
            functions[name] = (method.group(1), path.group(1))
    dispatch = text.partition("request = function")[2]
    called = [name for name in _DISPATCH.findall(dispatch) if name in functions]
    if not ratios or not called:
        return ()
    mix: list[RequestMix] = []
    remaining = 1.0
    for index, name in enumerate(called):
        # Each branch takes its ratio; the final `else` takes whatever is left of the coin.
        weight = ratios[index][1] if index < len(ratios) and index < len(called) - 1 else remaining
        remaining -= weight
        if weight > 0:
            method, path = functions[name]
            mix.append(RequestMix(operation=path, method=method, weight=weight))
    return tuple(mix)


# ------------------------------------------------------------------------------------ workloads
class GeneratorWorkload(Workload):
    """A workload fed by running generator processes: rate = sum of their `-R`, source = one of
    their pods. With none running there is no traffic (the multiplier is kept)."""

    # A newly attached process's spec (target, mix, timeout) replaces the workload's; a
    # closed-loop workload writes its mix from its users' requests instead.
    adopts_process_spec: ClassVar[bool] = True

    def __init__(self, spec: WorkloadSpec, started_at: float, twin: Twin) -> None:
        super().__init__(spec, started_at)
        self.twin = twin
        self.processes: dict[tuple[str, str, str], tuple[Any, float]] = {}  # key -> (ctx, rate)

    def _live(self) -> list[tuple[tuple[str, str, str], float]]:
        runtime = runtime_of(self.twin)
        live = []
        for key in sorted(self.processes):
            ctx, rate = self.processes[key]
            instance = runtime.instance(*key)
            if instance is not None and instance.running and instance.ctx is ctx:
                live.append((key, rate))
        return live

    def rate(self, now: float) -> float:
        live = self._live()
        if not live:
            return 0.0
        return super().rate(now) * sum(rate for _, rate in live) / max(self.spec.rps, 1e-9)

    def source_pod(self, twin: Twin) -> tuple[bool, dict[str, Any] | None]:
        for (namespace, pod, _container), _rate in self._live():
            obj = twin.store.peek("Pod", namespace, pod)
            if obj is not None:
                return True, obj
        return False, None


def attach_generator(twin: Twin, name: str, key: tuple[str, str, str], ctx: Any, spec: WorkloadSpec, *,
                     amount: float | None = None, cls: type[GeneratorWorkload] | None = None,
                     **extra: Any) -> GeneratorWorkload | None:
    """Register one running generator process under the workload `name`. `amount` is what the
    process contributes (wrk2's `-R` by default; a locust process's users); `cls(spec, now, twin,
    **extra)` builds the workload when `name` has none of that class yet (open-loop by default)."""
    dataplane = twin.services.dataplane
    if dataplane is None:
        return None
    cls = cls or GeneratorWorkload
    workload = dataplane.workloads.get(name)
    if not isinstance(workload, cls):
        fresh = cls(spec, twin.clock.now, twin, **extra)
        if workload is not None:  # a workload of the same name: keep its run-time knobs
            fresh.multiplier, fresh.bursts = workload.multiplier, list(workload.bursts)
        workload = fresh
        dataplane.workloads[name] = workload
    elif workload.adopts_process_spec:
        workload.spec = spec  # the newest process's target/mix/timeout; rps is per process
    workload.processes[key] = (ctx, spec.rps if amount is None else amount)
    return workload


def ensure_workload(twin: Twin, name: str, target: str, rps: float, mix: tuple[RequestMix, ...]) -> \
        GeneratorWorkload | None:
    """Declare an app's generated workload before its generator runs (rate 0 until one does), so
    `set_load`/`burst` can be called right after deploying."""
    dataplane = twin.services.dataplane
    if dataplane is None:
        return None
    spec = WorkloadSpec(name=name, target=target, rps=rps, mix=mix, timeout_ms=DEFAULT_TIMEOUT_MS)
    existing = dataplane.workloads.get(name)
    if isinstance(existing, GeneratorWorkload):
        return existing
    workload = GeneratorWorkload(spec, twin.clock.now, twin)
    dataplane.workloads[name] = workload
    return workload


def detach_generator(twin: Twin, name: str, key: tuple[str, str, str], ctx: Any) -> None:
    dataplane = twin.services.dataplane
    workload = dataplane.workloads.get(name) if dataplane is not None else None
    if isinstance(workload, GeneratorWorkload) and key in workload.processes and \
            workload.processes[key][0] is ctx:
        del workload.processes[key]


# ------------------------------------------------------------------------------------ the program
def _fmt_duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _fmt_ms(ms: float) -> str:
    return f"{ms / 1000.0:.2f}s" if ms >= 1000 else f"{ms:.2f}ms"


def resolve_host(twin: Twin, pod: dict[str, Any] | None, host: str) -> tuple[str | None, str]:
    """(ip, gai error text) as getaddrinfo would answer inside the pod."""
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", host):
        return host, ""
    from sregym.twin.dataplane.dns import resolve_name

    answer = resolve_name(twin, pod, host)
    if answer.ok and answer.ips:
        return answer.ips[0], ""
    if (answer.error or "").upper() in ("TIMEOUT", "SERVFAIL", "REFUSED"):
        return None, "Temporary failure in name resolution"
    return None, "Name or service not known"


def wrk_command(call: Invocation) -> Program:
    """`wrk` (wrk2): an open-loop HTTP load generator driving the data plane while it runs."""
    ctx = call.ctx
    twin = ctx.twin
    try:
        args = parse_args(call.args)
    except ValueError as exc:
        if str(exc) != "missing url" and str(exc) != "missing rate":
            call.error(f"wrk: {exc}")
        call.write(USAGE, "stderr")
        return 1
    parts = urlsplit(args.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        call.error(f"invalid URL: {args.url}")
        call.write(USAGE, "stderr")
        return 1
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")  # the request line's target
    mix: tuple[RequestMix, ...] = (RequestMix(operation=target, method="GET"),)
    if args.script:
        text = call.read_file(args.script)
        if text is None:
            call.error(f"{args.script}: cannot open {args.script}")
            return 1
        mix = mix_from_script(text) or mix
    pod = ctx.pod
    ip, gai_error = resolve_host(twin, pod, parts.hostname) if twin is not None else (parts.hostname, "")
    if ip is None:
        call.error(f"unable to resolve {parts.hostname}:{port} {gai_error}")
        return 1
    call.write(f"Running {_fmt_duration(args.duration_s)} test @ {args.url}\n"
               f"  {args.threads} threads and {args.connections} connections\n")
    # wrk2 itself: a few MiB per thread plus per-connection buffers; ~0.2 ms CPU per request.
    yield Usage(memory_bytes=int((6 + 2 * args.threads + 0.02 * args.connections) * MIB),
                cpu_cores=min(float(args.threads), 0.0002 * args.rate + 0.002))
    meta = (pod or {}).get("metadata") or {}
    namespace, pod_name = meta.get("namespace", "default"), meta.get("name", "")
    name = (meta.get("annotations") or {}).get(APP_ANNOTATION) or (meta.get("labels") or {}).get("app") or \
        f"{namespace}/{pod_name}"
    key = (namespace, pod_name, ctx.container)
    spec = WorkloadSpec(name=name, target=f"{parts.scheme}://{ip}:{port}", rps=args.rate, mix=mix,
                        timeout_ms=args.timeout_ms, source_namespace=namespace,
                        source_labels=dict(meta.get("labels") or {}),
                        host_header=_host_header(args.headers) or parts.hostname or "")
    started = call.now
    workload = attach_generator(twin, name, key, ctx, spec) if twin is not None else None
    dataplane = twin.services.dataplane if twin is not None else None
    try:
        calibration = min(CALIBRATION_S, args.duration_s)
        yield Sleep(calibration)
        if dataplane is not None and workload is not None:
            stats = dataplane.entry_stats(calibration, app=name)
            interval = 10 if stats.p50_ms < 10 else int(stats.p50_ms)
            for _ in range(args.threads):
                call.write(f"  Thread calibration: mean lat.: {stats.p50_ms:.3f}ms, "
                           f"rate sampling interval: {interval}ms\n")
        if args.duration_s > calibration:
            yield Sleep(args.duration_s - calibration)
        if dataplane is not None and workload is not None:
            stats = dataplane.entry_stats(args.duration_s, app=name)
            elapsed = call.now - started
            errors = round(stats.requests * (1.0 - stats.success_ratio))
            call.write(f"  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
                       f"    Latency   {_fmt_ms(stats.p50_ms):>8} {_fmt_ms(stats.p95_ms / 2):>9} "
                       f"{_fmt_ms(stats.p95_ms * 2):>9}   75.00%\n"
                       f"  {int(stats.requests)} requests in {elapsed:.2f}s\n")
            if errors:
                call.write(f"  Non-2xx or 3xx responses: {errors}\n")
            call.write(f"Requests/sec: {stats.rps:>9.2f}\n")
    finally:
        if twin is not None:
            detach_generator(twin, name, key, ctx)
    return 0


__all__ = ["GeneratorWorkload", "WrkArgs", "attach_generator", "detach_generator", "ensure_workload", "mix_from_script",
           "parse_args", "wrk_command"]
