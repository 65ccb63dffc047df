"""`nslookup`, `dig`, `getent hosts` and `ping` inside a container, plus the network helpers the
other network tools share.

These are the first commands an on-call engineer runs from `kubectl exec` when a service cannot
reach another, so each one goes through the twin's real paths (the container's own
`/etc/resolv.conf` and `/etc/hosts`, CoreDNS and its Corefile, NetworkPolicy, chaos) and prints
exactly what the real tool prints, in the flavour of the image: BusyBox for Alpine/BusyBox
images (`Address:\t10.96.0.10:53`, `ping: bad address 'geo'`), bind9/iputils/glibc for Debian
ones (`Address:\t10.96.0.10#53`, `ping: geo: Name or service not known`).

Helpers for the other tools: `lookup(call, name)` resolves from the container's view;
`open_connection(call, ip, port)` asks the data plane (`twin.services.dataplane.connect`, or
D1's router while the service is not registered) for one TCP/UDP connection attempt.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.dns import DnsAnswer, resolve_name
from sregym.twin.machinery.objects import get_path
from sregym.twin.node.shell import Invocation, Program, Sleep, command, format_date
from sregym.twin.userland.ping_echo import EchoPath, echoes, path_of

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

KERNEL_CONNECT_TIMEOUT_MS = 130_000.0  # tcp_syn_retries=6: the kernel gives up after ~130 s


def busybox(call: Invocation) -> bool:
    return call.ctx.shell_flavour in ("ash", "")


def namespace_of(call: Invocation) -> str:
    return str(get_path(call.ctx.pod, "metadata", "namespace", default="default") or "default")


def lookup(call: Invocation, name: str, *, record: str = "A", use_hosts: bool = True,
           search: bool = True, server: str | None = None) -> DnsAnswer:
    """Resolve as the container's resolver would, with the files the container really has."""
    ctx = call.ctx
    return resolve_name(ctx.twin, ctx.pod, name, record=record, namespace=namespace_of(call),
                        resolv_conf=ctx.files.get("/etc/resolv.conf"),
                        hosts=ctx.files.get("/etc/hosts"), use_hosts=use_hosts, search=search,
                        server=server)


def nameserver(call: Invocation) -> str:
    from sregym.twin.dataplane.dns import parse_resolv_conf, pod_resolver

    text = call.ctx.files.get("/etc/resolv.conf")
    config = parse_resolv_conf(text) if text is not None else pod_resolver(call.ctx.pod, namespace_of(call))
    return config.nameservers[0]


# ------------------------------------------------------------------------------ connections
@dataclass(frozen=True)
class Connection:
    """One connection attempt as a client program experiences it."""

    ok: bool
    error: str | None  # "refused" | "timeout" | "reset" | "unreachable" | "no_route" | "tls" | ...
    latency_ms: float
    ip: str
    dst_pod: dict[str, Any] | None = None
    message: str = ""
    raw: Any = None


def dataplane(twin: Twin) -> Any:
    """The data plane service, or D1's router while the service is not registered yet."""
    service = twin.services.dataplane
    if service is not None:
        return service
    try:
        from sregym.twin.dataplane.connect import router_of
    except ImportError:  # pragma: no cover - depends on the data-plane helper's module
        return None
    return router_of(twin)


def open_connection(call: Invocation, ip: str, port: int, *, protocol: str = "TCP",
                    timeout_ms: float | None = None) -> Connection:
    """Ask the data plane for one connection from this container to ip:port."""
    from sregym.twin.userland.localnet import local_connection

    local = local_connection(call, ip, port, protocol)
    if local is not None:  # the pod's own loopback: no Service, policy or chaos on the way
        return Connection(local.ok, local.error, local.latency_ms, ip, local.dst_pod, local.message, local)
    ctx = call.ctx
    plane = dataplane(ctx.twin)
    if plane is None or not hasattr(plane, "connect"):
        return Connection(False, "timeout", timeout_ms or KERNEL_CONNECT_TIMEOUT_MS, ip)
    kwargs: dict[str, Any] = {"protocol": protocol}
    limit = timeout_ms or KERNEL_CONNECT_TIMEOUT_MS
    try:
        if "connect_timeout_ms" in inspect.signature(plane.connect).parameters:
            kwargs["connect_timeout_ms"] = limit
    except (TypeError, ValueError):
        pass
    result = plane.connect(ctx.pod, ip, port, **kwargs)
    latency = float(getattr(result, "latency_ms", 0.0) or 0.0)
    error = getattr(result, "error", None)
    if error == "timeout":
        latency = limit
    return Connection(bool(getattr(result, "ok", False)), error, latency,
                      str(getattr(result, "dst_ip", "") or ip), getattr(result, "dst_pod", None),
                      str(getattr(result, "message", "") or ""), result)


def sleep_ms(ms: float) -> Program:
    if ms > 0:
        yield Sleep(ms / 1000.0)
    return 0


# ================================================================================== nslookup
@command("nslookup")
def nslookup(call: Invocation) -> Program:
    """`nslookup [-type=T] NAME [SERVER]` in BusyBox or bind9 (dnsutils) form."""
    record, words = "A", []
    for arg in call.args:
        if arg.startswith("-") and "=" in arg:
            key, _, value = arg[1:].partition("=")
            if key in ("type", "query", "q", "querytype"):
                record = value.upper()
        elif not arg.startswith("-"):
            words.append(arg)
    if not words:
        call.error("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\n"
                   "Usage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]"
                   if busybox(call) else "Usage: nslookup [-opt ...] host [server]")
        return 1
    name = words[0]
    server = words[1] if len(words) > 1 else None
    from sregym.twin.dataplane.dns import is_ipv4

    reverse = is_ipv4(name)
    answer = lookup(call, name, record="PTR" if reverse else record, use_hosts=False, server=server)
    yield from sleep_ms(answer.latency_ms)
    bb = busybox(call)
    if answer.error == "timeout":
        call.write(";; connection timed out; no servers could be reached\n\n")
        return 1
    srv = answer.server or server or nameserver(call)
    call.write(f"Server:\t\t{srv}\nAddress:\t{srv}{':' if bb else '#'}53\n\n")
    if not answer.ok:
        shown = name if not reverse else ".".join(reversed(name.split("."))) + ".in-addr.arpa"
        call.write(f"** server can't find {shown}: {answer.error}\n\n")
        return 1
    if reverse:
        ptr = ".".join(reversed(name.split("."))) + ".in-addr.arpa"
        for target in answer.names:
            call.write(f"{ptr}\tname = {target}.\n")
        call.write("\n")
        return 0
    if not answer.authoritative:
        call.write("Non-authoritative answer:\n")
    shown = answer.fqdn
    if answer.cname:
        call.write(f"{shown}\tcanonical name = {answer.cname}.\n")
        shown = answer.cname
    for ip in answer.ips:
        call.write(f"Name:\t{shown}\nAddress: {ip}\n")
    if not answer.ips and not bb:
        call.write(f"*** Can't find {name}: No answer\n")
    call.write("\n")
    return 0


# ======================================================================================= dig
DIG_VERSION = "9.18.33-1~deb12u2-Debian"


@command("dig")
def dig(call: Invocation) -> Program:
    """`dig [+short] [+search] [@server] NAME [TYPE]` (bind9 9.18)."""
    short, use_search, server, record, name = False, False, None, "A", None
    for arg in call.args:
        if arg.startswith("+"):
            flag = arg[1:].lower()
            if flag == "short":
                short = True
            elif flag == "search":
                use_search = True
            elif flag in ("nosearch",):
                use_search = False
        elif arg.startswith("@"):
            server = arg[1:]
        elif arg.upper() in ("A", "AAAA", "PTR", "CNAME", "SRV", "TXT", "MX", "NS", "ANY"):
            record = arg.upper()
        elif arg == "-x":
            record = "PTR"
        elif not arg.startswith("-"):
            name = arg
    name = name or "."
    answer = lookup(call, name, record=record, use_hosts=False, search=use_search, server=server)
    yield from sleep_ms(answer.latency_ms)
    srv = answer.server or server or nameserver(call)
    if answer.error == "timeout":
        for _ in range(3):
            call.write(f";; communications error to {srv}#53: timed out\n")
        if not short:
            call.write(f"\n; <<>> DiG {DIG_VERSION} <<>> {' '.join(call.args)}\n;; global options: +cmd\n")
        call.write(";; no servers could be reached\n")
        return 9
    fqdn = (answer.fqdn if answer.ok else (answer.tried[-1] if answer.tried else name)).rstrip(".") + "."
    records: list[tuple[str, str, str]] = []
    if answer.cname:
        records.append((fqdn, "CNAME", answer.cname + "."))
    owner = (answer.cname + ".") if answer.cname else fqdn
    for ip in answer.ips:
        records.append((owner, record if record in ("A", "AAAA") else "A", ip))
    for target in answer.names:
        records.append((fqdn, "PTR", target + "."))
    if short:
        for _owner, _type, value in records:
            call.write(value + "\n")
        return 0
    status = "NOERROR" if answer.ok else str(answer.error)
    rng = call.ctx.twin.rng.stream("userland.dig") if call.ctx.twin is not None else None
    query_id = rng.randint(1, 65535) if rng is not None else 4242
    flags = "qr aa rd" if answer.authoritative else "qr rd ra"
    out = [f"\n; <<>> DiG {DIG_VERSION} <<>> {' '.join(call.args)}", ";; global options: +cmd",
           ";; Got answer:",
           f";; ->>HEADER<<- opcode: QUERY, status: {status}, id: {query_id}",
           f";; flags: {flags}; QUERY: 1, ANSWER: {len(records)}, AUTHORITY: {0 if records else 1}, ADDITIONAL: 1"]
    if answer.authoritative:
        out.append(";; WARNING: recursion requested but not available")
    out += ["", ";; OPT PSEUDOSECTION:", "; EDNS: version: 0, flags:; udp: 1232",
            ";; QUESTION SECTION:", f";{fqdn}\t\t\tIN\t{record}", ""]
    if records:
        out.append(";; ANSWER SECTION:")
        for owner_name, rtype, value in records:
            out.append(f"{owner_name}\t30\tIN\t{rtype}\t{value}")
        out.append("")
    when = format_date(call.wall_now, "%a %b %d %H:%M:%S UTC %Y") if call.ctx.twin is not None else ""
    out += [f";; Query time: {max(0, int(answer.latency_ms))} msec",
            f";; SERVER: {srv}#53({srv}) (UDP)", f";; WHEN: {when}",
            f";; MSG SIZE  rcvd: {60 + 16 * len(records)}", ""]
    call.write("\n".join(out) + "\n")
    return 0


# ==================================================================================== getent
@command("getent")
def getent(call: Invocation) -> int:
    """`getent hosts NAME...` (glibc): one `%-15s %s` line per address; exit 2 when not found."""
    args = [a for a in call.args if not a.startswith("-")]
    if not args:
        call.error("Usage: getent [OPTION...] database [key ...]")
        return 1
    database, keys = args[0], args[1:]
    if database not in ("hosts", "ahosts", "ahostsv4"):
        if database in ("passwd", "group"):
            text = call.ctx.files.get(f"/etc/{database}", "")
            rows = [line for line in text.splitlines() if not keys or line.split(":", 1)[0] in keys]
            for row in rows:
                call.write(row + "\n")
            return 0 if rows else 2
        call.error(f"Unknown database: {database}")
        return 1
    status = 0
    for key in keys:
        answer = lookup(call, key)
        if not answer.ok or not answer.ips:
            status = 2
            continue
        canonical = answer.fqdn if answer.fqdn != key else key
        for ip in answer.ips:
            if database == "hosts":
                call.write(f"{ip:<15} {canonical}\n")
            else:
                call.write(f"{ip:<15} STREAM {canonical}\n{ip:<15} DGRAM  \n{ip:<15} RAW    \n")
    return status


# ====================================================================================== ping
def _icmp_target(call: Invocation, ip: str) -> EchoPath:
    """The round trip of an echo request from this container to ip: answered at all, the base
    rtt (it varies per packet; a netem delay is a floor on top), the reply's TTL and netem."""
    twin, src = call.ctx.twin, call.ctx.pod
    if ip.startswith("127."):
        return EchoPath(True, 0.03, 64)
    src_ip = str(get_path(src, "status", "podIP", default="") or "")
    src_node = str(get_path(src, "spec", "nodeName", default="") or "")
    if ip == src_ip:
        return EchoPath(True, 0.03, 64)
    for node in twin.store.scan("Node"):
        for address in get_path(node, "status", "addresses", default=None) or []:
            if address.get("address") == ip:
                return EchoPath(True, 0.06 if node["metadata"]["name"] == src_node else 0.15, 64)
    dst = None
    for pod in twin.store.scan("Pod"):
        if get_path(pod, "status", "podIP") == ip and not get_path(pod, "spec", "hostNetwork", default=False) \
                and get_path(pod, "status", "phase") in ("Running", "Pending"):
            dst = pod
            break
    if dst is None:
        return EchoPath(False)  # ClusterIPs (iptables mode) and unknown addresses do not answer
    from sregym.twin.dataplane.netpolicy import allowed

    if not allowed(twin, src, src_ip, dst, 0, "ICMP"):
        return EchoPath(False)
    effect = None
    chaos = twin.services.chaos
    if chaos is not None and src is not None and hasattr(chaos, "network"):
        effect = chaos.network(src, dst)
        if effect is not None and (getattr(effect, "partition", False)
                                   or float(getattr(effect, "loss", 0) or 0) >= 1.0):
            return EchoPath(False)
    same = get_path(dst, "spec", "nodeName") == src_node
    return path_of(True, 0.07 if same else 0.22, 63 if same else 62, effect)


def _number(text: str, default: float) -> float:
    try:
        return float(text)
    except ValueError:
        return default


@command("ping")
def ping(call: Invocation) -> Program:
    """`ping [-c N] [-W S] [-w S] [-i S] [-q] HOST` (BusyBox or iputils)."""
    args = list(call.args)
    count: int | None = None
    interval, deadline, quiet, target = 1.0, None, False, None
    index = 0
    while index < len(args):
        arg = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg in ("-c", "-W", "-w", "-i", "-s", "-t"):
            if arg == "-c":
                count = max(1, int(_number(value, 1)))
            elif arg == "-w":
                deadline = _number(value, 0)
            elif arg == "-i":
                interval = max(0.2, _number(value, 1.0))
            index += 2
            continue
        if arg.startswith("-c") and arg[2:].isdigit():
            count = int(arg[2:])
        elif arg == "-q":
            quiet = True
        elif not arg.startswith("-"):
            target = arg
        index += 1
    bb = busybox(call)
    if target is None:
        call.error("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: ping [OPTIONS] HOST"
                   if bb else "ping: usage error: Destination address required")
        return 1 if bb else 2
    answer = lookup(call, target)
    if not answer.ok or not answer.ips:
        yield from sleep_ms(answer.latency_ms)
        if bb:
            call.error(f"ping: bad address '{target}'")
            return 1
        reason = "Temporary failure in name resolution" if answer.error in ("timeout", "SERVFAIL") \
            else "Name or service not known"
        call.error(f"ping: {target}: {reason}")
        return 2
    ip = answer.ips[0]
    shown = target if bb else (answer.fqdn if answer.fqdn else target)
    if count is None:
        count = int(deadline / interval) if deadline else 3600
    path = _icmp_target(call, ip)
    call.write(f"PING {shown} ({ip}): 56 data bytes\n" if bb else f"PING {shown} ({ip}) 56(84) bytes of data.\n")
    return (yield from echoes(call, path, ip, shown, count, interval, quiet, bb))
