"""Metrics-exporter images that run as sidecars beside an application container.

Why: a sidecar exporter is the usual neighbour of a service in its pod, and its listen address is a
flag an operator sets. `prom/statsd-exporter` reads `--web.listen-address` (default `:9102`) and
`--statsd.listen-udp`/`--statsd.listen-tcp` (default `:9125`) from its arguments, binds the StatsD
listeners first and the HTTP server last, and prints go-kit logfmt lines. When a port is already
bound in the pod, the kubelet (`node/netns.py`) ends it with the line it prints then:
`level=error err="listen tcp :9090: bind: address already in use"`, exit status 1.

The images join the built-in catalogue when this module is imported (the kubelet imports it).
"""

from __future__ import annotations

from sregym.twin.node.images import MIB, ImageSpec, argv_flag, log_stamp, register_image
from sregym.twin.node.netns import go_bind_error
from sregym.twin.node.shell import FOREVER, Invocation, Listen, Program, Sleep, Usage

STATSD_REPOSITORY = "docker.io/prom/statsd-exporter"
STATSD_VERSION = "0.26.1"
WEB_PATHS = ("/", "/metrics", "/-/healthy", "/-/ready")


def _port(address: str) -> int | None:
    """The port of a Go listen address (`:9102`, `0.0.0.0:9102`, `[::]:9102`); None when empty."""
    text = address.rsplit(":", 1)[-1]
    return int(text) if text.isdigit() and 0 < int(text) < 65536 else None


def statsd_exporter(call: Invocation) -> Program:
    """`statsd_exporter [flags]`: StatsD in (UDP and TCP), Prometheus metrics out over HTTP."""
    args = call.args

    def line(caller: str, level: str, text: str) -> str:
        return f"ts={log_stamp(call, '%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z caller={caller} level={level} {text}"

    web = argv_flag(args, "--web.listen-address", default=":9102") or ""
    udp = argv_flag(args, "--statsd.listen-udp", default=":9125") or ""
    tcp = argv_flag(args, "--statsd.listen-tcp", default=":9125") or ""
    web_port = _port(web)
    if web_port is None:
        call.error(line("main.go:298", "error", f'msg="invalid listen address" address={web}'))
        return 1
    yield Usage(memory_bytes=14 * MIB, cpu_cores=0.002)
    call.write(line("main.go:321", "info", 'msg="Starting StatsD -> Prometheus Exporter" '
                                           f'version="(version={STATSD_VERSION}, branch=HEAD)"') + "\n")
    yield Sleep(0.4)
    for address, protocol in ((udp, "UDP"), (tcp, "TCP")):
        port = _port(address)
        if port is not None:
            yield Listen(port, protocol, http_paths=None,
                         bind_error=line("main.go:375", "error", f'msg="failed to listen on {protocol} '
                                         f'address" err="{go_bind_error(port, protocol)}"'))
    call.write(line("main.go:361", "info", f'msg="Accepting StatsD Traffic" udp={udp} tcp={tcp} unixgram=')
               + "\n")
    call.write(line("main.go:362", "info", f'msg="Accepting Prometheus Requests" addr={web}') + "\n")
    yield Listen(web_port, "TCP", http_paths=WEB_PATHS,
                 bind_error=line("main.go:448", "error", f'err="{go_bind_error(web_port)}"'))
    call.write(line("tls_config.go:313", "info", f'msg="Listening on" address=[::]:{web_port}') + "\n")
    call.write(line("tls_config.go:316", "info",
                    f'msg="TLS is disabled." http2=false address=[::]:{web_port}') + "\n")
    yield Sleep(FOREVER)
    return 0


def exporter_images() -> list[ImageSpec]:
    """The exporter images of the built-in catalogue."""
    return [ImageSpec(
        STATSD_REPOSITORY, (f"v{STATSD_VERSION}", "v0.27.1", "v0.28.0", "latest"), size_mb=10.9,
        description="StatsD to Prometheus metrics exporter", ports=(9102,), shell="",
        entrypoint=("/bin/statsd_exporter",),
        commands={"/bin/statsd_exporter": statsd_exporter, "statsd_exporter": statsd_exporter})]


for _spec in exporter_images():
    register_image(_spec)
