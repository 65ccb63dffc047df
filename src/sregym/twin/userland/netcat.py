"""`nc` / `netcat`: the port check (`nc -zv geo 8083`) through the data plane, and the listening
form (`nc -l -p 8080`) containers use as a stand-in server.

The port check is what tells an engineer "something listens" from "refused" from "filtered":
Debian images ship OpenBSD netcat (`Connection to geo (10.96.4.2) 8083 port [tcp/*]
succeeded!`, `nc: connect to geo (10.96.4.2) port 8083 (tcp) failed: Connection refused`,
`timed out: Operation now in progress` with `-w`), BusyBox images their own (`geo
(10.96.4.2:8083) open`, `nc: geo (10.96.4.2:8083): Connection refused`).
"""

from __future__ import annotations

import sregym.twin.node.coreutils as _coreutils  # registers the listening `nc` first; this one wraps it
from sregym.twin.node.shell import Invocation, Program, command
from sregym.twin.userland.netdiag import (
    KERNEL_CONNECT_TIMEOUT_MS,
    busybox,
    lookup,
    open_connection,
    sleep_ms,
)

_VALUE_FLAGS = set("wpsiIOPTVXx")


@command("nc", "netcat")
def netcat(call: Invocation) -> Program:
    args = list(call.args)
    flags: set[str] = set()
    wait: float | None = None
    words: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg.startswith("-") and len(arg) > 1:
            for pos, letter in enumerate(arg[1:]):
                if letter in _VALUE_FLAGS:
                    rest = arg[pos + 2:]
                    value = rest or (args[index + 1] if index + 1 < len(args) else "")
                    if not rest:
                        index += 1
                    if letter == "w":
                        try:
                            wait = float(value)
                        except ValueError:
                            wait = None
                    break
                flags.add(letter)
        else:
            words.append(arg)
        index += 1
    if "l" in flags:
        return (yield from _coreutils.netcat(call))
    bb = busybox(call)
    if len(words) < 2:
        call.error("usage: nc [-46CDdFhklNnrStUuvZz] [-I length] [-i interval] [-M ttl]\n"
                   "\t  [-m minttl] [-O length] [-P proxy_username] [-p source_port]\n"
                   "\t  [-q seconds] [-s sourceaddr] [-T keyword] [-V rtable] [-W recvlimit]\n"
                   "\t  [-w timeout] [-X proxy_protocol] [-x proxy_address[:port]]\n"
                   "\t  [destination] [port]" if not bb else
                   "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\n"
                   "Usage: nc [-iN] [-wN] [-l] [-p PORT] [-f FILE|IPADDR PORT] [-e PROG]")
        return 1
    host = words[0]
    ports = _ports(words[1:])
    if not ports:
        call.error("nc: port range not valid" if not bb else f"nc: invalid port '{words[1]}'")
        return 1
    protocol = "UDP" if "u" in flags else "TCP"
    verbose = "v" in flags
    answer = lookup(call, host)
    if not answer.ok or not answer.ips:
        yield from sleep_ms(answer.latency_ms)
        if bb:
            call.error(f"nc: bad address '{host}'")
        else:
            reason = "Temporary failure in name resolution" if answer.error in ("timeout", "SERVFAIL") \
                else "Name or service not known"
            call.error(f'nc: getaddrinfo for host "{host}" port {ports[0]}: {reason}')
        return 1
    ip = answer.ips[0]
    status = 1
    for port in ports:
        limit = wait * 1000 if wait else KERNEL_CONNECT_TIMEOUT_MS
        conn = open_connection(call, ip, port, protocol=protocol, timeout_ms=limit)
        yield from sleep_ms(min(conn.latency_ms, limit))
        shown = host if host == ip else f"{host} ({ip})"
        if conn.ok or (protocol == "UDP" and conn.error == "timeout"):
            status = 0
            if verbose:
                call.error(f"{host} ({ip}:{port}) open" if bb else
                           f"Connection to {shown} {port} port [{protocol.lower()}/*] succeeded!")
            continue
        if not verbose and not bb:
            continue
        if conn.error == "timeout":
            message = "Operation now in progress" if wait else "Connection timed out"
            verb = "timed out" if wait else "failed"
            call.error(f"nc: {host} ({ip}:{port}): {'Operation timed out' if wait else 'Connection timed out'}"
                       if bb else f"nc: connect to {shown} port {port} ({protocol.lower()}) {verb}: {message}")
        else:
            reason = "No route to host" if conn.error in ("no_route", "unreachable") else "Connection refused"
            call.error(f"nc: {host} ({ip}:{port}): {reason}" if bb else
                       f"nc: connect to {shown} port {port} ({protocol.lower()}) failed: {reason}")
    return status


def _ports(words: list[str]) -> list[int]:
    out: list[int] = []
    for word in words:
        low, _, high = word.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            return []
        start, end = int(low), int(high or low)
        if not (0 < start <= end <= 65535):
            return []
        out.extend(range(start, end + 1))
    return out
