"""`tcp-soak`: a connection soak-test tool that opens many TCP connections and keeps them open.

Why: teams run such tools to see how a service behaves with many idle clients (a proxy's or a
mobile fleet's long-lived connections). Left running, or pointed at the wrong place, it is a
real cause of outages that no pod status shows: every held connection is an open file in the
accepting process (a low `ulimit -n` there ends in EMFILE, `dataplane/open_files.py`) and a
conntrack entry on the nodes it crosses (a full table drops new flows, `chaos/node_kernel.py`).

Two modes, one binary:

- `tcp-soak serve --ports 9090-9105`: listen on the ports and keep every accepted connection;
- `tcp-soak hold --target HOST --ports 5000 --connections 1100`: open that many connections
  spread over the ports (each through the cluster's DNS and Service as a real client would) and
  hold them; if a listener it holds connections to goes away it dials again, as SREGym's
  flooder follows a replaced frontend pod.

The holdings live in `dataplane/held_connections.py` and end when the container stops. The image
joins the built-in catalogue when this module is imported (the kubelet imports it).
"""

from __future__ import annotations

from sregym.twin.dataplane.held_connections import Flow, held_connections
from sregym.twin.dataplane.open_files import ACCEPT_STAGE
from sregym.twin.node.images import MIB, ImageSpec, log_stamp, register_image
from sregym.twin.node.shell import FOREVER, Invocation, Listen, Program, Sleep, Usage

REPOSITORY = "ghcr.io/reservation-platform/tcp-soak"
TAGS = ("v0.3.1", "latest")
REDIAL_SECONDS = 10.0
BYTES_PER_CONNECTION = 4096  # a Go goroutine's stack and the socket's buffers


def _log(call: Invocation, text: str, stream: str = "stdout") -> None:
    call.write(f"{log_stamp(call, '%Y/%m/%d %H:%M:%S')} {text}\n", stream)


def _ports(text: str) -> list[int] | None:
    """`9090-9105` or `5000,5001` as a list of ports; None when it does not parse."""
    ports: list[int] = []
    try:
        for part in text.split(","):
            low, _, high = part.partition("-")
            ports.extend(range(int(low), int(high or low) + 1))
    except ValueError:
        return None
    return ports if ports and all(0 < p < 65536 for p in ports) else None


def _flags(args: list[str]) -> dict[str, str]:
    flags: dict[str, str] = {}
    for index, arg in enumerate(args):
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            flags[name] = value if eq else (args[index + 1] if index + 1 < len(args) else "")
    return flags


def _dial(call: Invocation, host: str, ports: list[int], total: int) -> tuple[Flow, ...]:
    """Open `total` connections spread evenly over `ports`, each through the data plane's route
    from this pod; a listener that never accepts still completes the handshake (backlog)."""
    from sregym.twin.dataplane.connect import router_of

    twin, pod = call.ctx.twin, call.ctx.pod
    router = router_of(twin)
    src_node = ((pod or {}).get("spec") or {}).get("nodeName") or ""
    flows: list[Flow] = []
    per_port, extra = divmod(total, len(ports))
    for index, port in enumerate(ports):
        share = per_port + (1 if index < extra else 0)
        legs = [leg for leg in router.route(pod, host, port).legs
                if leg.result.ok or leg.result.stage == ACCEPT_STAGE]
        connected = sum(leg.fraction for leg in legs)
        counts = [int(share * leg.fraction / connected) for leg in legs] if connected else []
        for index in range(share - sum(counts) if legs else 0):  # what flooring left, to the first legs
            counts[index % len(counts)] += 1
        for leg, count in zip(legs, counts, strict=True):
            result = leg.result
            dst_node = ((result.dst_pod or {}).get("spec") or {}).get("nodeName") or ""
            if count > 0:
                flows.append(Flow(result.dst_ip, result.target_port or port, src_node, dst_node, count))
    return tuple(flows)


def _serve(call: Invocation, flags: dict[str, str]) -> Program:
    ports = _ports(flags.get("ports", ""))
    if ports is None:
        _log(call, "tcp-soak: --ports: expected PORT, PORT-PORT or a comma-separated list", "stderr")
        return 2
    yield Usage(memory_bytes=12 * MIB, cpu_cores=0.002)
    for port in ports:
        yield Listen(port, "TCP")
    _log(call, f"serving {len(ports)} ports ({ports[0]}-{ports[-1]}), keeping accepted connections")
    yield Sleep(FOREVER)
    return 0


def _hold(call: Invocation, flags: dict[str, str]) -> Program:
    host = flags.get("target", "")
    ports = _ports(flags.get("ports", ""))
    try:
        total = int(flags.get("connections", "0"))
    except ValueError:
        total = 0
    if not host or ports is None or total <= 0:
        _log(call, "tcp-soak: hold needs --target HOST, --ports and --connections N > 0", "stderr")
        return 2
    twin, ctx = call.ctx.twin, call.ctx
    runtime = twin.services.runtime
    meta = (ctx.pod or {}).get("metadata") or {}
    namespace, pod_name = meta.get("namespace", ""), meta.get("name", "")
    instance = runtime.instance(namespace, pod_name, ctx.container) if runtime is not None else None
    container_id = instance.container_id if instance is not None else f"{namespace}/{pod_name}/{ctx.container}"
    table = held_connections(twin)
    yield Usage(memory_bytes=16 * MIB + total * BYTES_PER_CONNECTION, cpu_cores=0.005)
    _log(call, f"dialing {total} connections to {host} ports {flags.get('ports')}")
    flows: tuple[Flow, ...] = ()
    while True:
        gone = any(runtime is not None and runtime.listener(f.dst_ip, f.dst_port) is None for f in flows)
        if not flows or gone:
            if gone:
                _log(call, "connections closed by peer; redialing", "stderr")
            flows = _dial(call, host, ports, total)
            table.hold(container_id, namespace, pod_name, ctx.container, flows)
            held = sum(f.count for f in flows)
            if held:
                _log(call, f"holding {held}/{total} connections to {host}")
            else:
                _log(call, f"dial {host}: no connection established; retrying in {REDIAL_SECONDS:.0f}s", "stderr")
        yield Sleep(REDIAL_SECONDS)


def tcp_soak(call: Invocation) -> Program:
    """`tcp-soak serve|hold [flags]`."""
    mode = call.args[0] if call.args else ""
    flags = _flags(call.args[1:])
    if mode == "serve":
        return (yield from _serve(call, flags))
    if mode == "hold":
        return (yield from _hold(call, flags))
    _log(call, "usage: tcp-soak serve --ports PORTS | hold --target HOST --ports PORTS --connections N", "stderr")
    return 2


def soak_image() -> ImageSpec:
    return ImageSpec(REPOSITORY, TAGS, size_mb=9.8, description="TCP connection soak-test tool",
                     entrypoint=("/usr/local/bin/tcp-soak",), memory_mb=16.0,
                     commands={"/usr/local/bin/tcp-soak": tcp_soak, "tcp-soak": tcp_soak})


register_image(soak_image())

__all__ = ["REPOSITORY", "soak_image", "tcp_soak"]
