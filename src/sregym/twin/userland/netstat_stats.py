"""A container's `/proc/net/snmp`, `/proc/net/netstat` and `netstat -s`.

These are where retransmissions show from inside a pod: `RetransSegs` climbing against `OutSegs`
is the classic sign of a lossy path. The numbers are the pod's network namespace counters kept by
`dataplane.tcp_loss`; the files use the kernel's two-line layout (a header line of field names
and a value line per section), and `netstat -s` (net-tools 2.10) turns them into its sentences:
counters with a sentence of their own are printed even when zero in the Ip/Icmp/Tcp/Udp sections,
the others (and every TcpExt/IpExt counter) as `Name: value` only when non-zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.tcp_loss import kernel_tables, tcp_of
from sregym.twin.node.shell import Invocation
from sregym.twin.userland.filteropts import BUSYBOX_BANNER, is_busybox

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SNMP_SECTIONS = ("Ip", "Icmp", "Tcp", "Udp", "UdpLite")
NETSTAT_SECTIONS = ("TcpExt", "IpExt")

# (always shown?, sentence) per counter; `{}` is the value.
SENTENCES: dict[str, dict[str, tuple[bool, str]]] = {
    "Ip": {"Forwarding": (True, "Forwarding: {}"), "InReceives": (True, "{} total packets received"),
           "InHdrErrors": (False, "{} with invalid headers"), "InAddrErrors": (False, "{} with invalid addresses"),
           "ForwDatagrams": (True, "{} forwarded"), "InUnknownProtos": (False, "{} with unknown protocol"),
           "InDiscards": (True, "{} incoming packets discarded"),
           "InDelivers": (True, "{} incoming packets delivered"), "OutRequests": (True, "{} requests sent out"),
           "OutDiscards": (False, "{} outgoing packets dropped"),
           "OutNoRoutes": (False, "{} dropped because of missing route"),
           "ReasmTimeout": (False, "{} fragments dropped after timeout"),
           "ReasmReqds": (False, "{} reassemblies required"), "ReasmOKs": (False, "{} packets reassembled ok"),
           "ReasmFails": (False, "{} packet reassemblies failed"),
           "FragOKs": (False, "{} fragments received ok"), "FragFails": (False, "{} fragments failed"),
           "FragCreates": (False, "{} fragments created")},
    "Icmp": {"InMsgs": (True, "{} ICMP messages received"), "InErrors": (True, "{} input ICMP message failed"),
             "OutMsgs": (True, "{} ICMP messages sent"), "OutErrors": (True, "{} ICMP messages failed")},
    "Tcp": {"ActiveOpens": (True, "{} active connection openings"),
            "PassiveOpens": (True, "{} passive connection openings"),
            "AttemptFails": (True, "{} failed connection attempts"),
            "EstabResets": (True, "{} connection resets received"),
            "CurrEstab": (True, "{} connections established"), "InSegs": (True, "{} segments received"),
            "OutSegs": (True, "{} segments sent out"), "RetransSegs": (True, "{} segments retransmitted"),
            "InErrs": (True, "{} bad segments received"), "OutRsts": (True, "{} resets sent")},
    "Udp": {"InDatagrams": (True, "{} packets received"), "NoPorts": (True, "{} packets to unknown port received"),
            "InErrors": (True, "{} packet receive errors"), "OutDatagrams": (True, "{} packets sent"),
            "RcvbufErrors": (True, "{} receive buffer errors"), "SndbufErrors": (True, "{} send buffer errors")},
    "TcpExt": {"TW": (False, "{} TCP sockets finished time wait in fast timer"),
               "DelayedACKs": (False, "{} delayed acks sent"),
               "TCPHPHits": (False, "{} packet headers predicted"),
               "TCPPureAcks": (False, "{} acknowledgments not containing data payload received"),
               "TCPHPAcks": (False, "{} predicted acknowledgments")},
}
SILENT = {"Ip": {"DefaultTTL"}, "Tcp": {"RtoAlgorithm", "RtoMin", "RtoMax", "MaxConn"}}


def _tables(twin: Twin, pod: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    return kernel_tables(tcp_of(twin).pod_mib(pod), host=bool((pod.get("spec") or {}).get("hostNetwork")))


def _two_line(tables: dict[str, list[tuple[str, int]]], sections: tuple[str, ...]) -> str:
    lines = []
    for section in sections:
        rows = tables[section]
        lines.append(f"{section}: " + " ".join(name for name, _ in rows))
        lines.append(f"{section}: " + " ".join(str(value) for _, value in rows))
    return "\n".join(lines) + "\n"


def proc_net_snmp(twin: Twin, pod: dict[str, Any]) -> str:
    return _two_line(_tables(twin, pod), SNMP_SECTIONS)


def proc_net_netstat(twin: Twin, pod: dict[str, Any]) -> str:
    return _two_line(_tables(twin, pod), NETSTAT_SECTIONS)


def proc_net_file(twin: Twin, pod: dict[str, Any], name: str) -> str | None:
    """`/proc/net/snmp` or `/proc/net/netstat` of the pod's network namespace, as of now (read by
    the exec's /proc provider), or None for another name."""
    sections = {"snmp": SNMP_SECTIONS, "netstat": NETSTAT_SECTIONS}.get(name)
    return _two_line(_tables(twin, pod), sections) if sections is not None else None


def statistics_text(tables: dict[str, list[tuple[str, int]]]) -> str:
    """`netstat -s` over the namespace's tables."""
    out: list[str] = []
    for section in (*SNMP_SECTIONS, *NETSTAT_SECTIONS):
        out.append(f"{section}:")
        sentences = SENTENCES.get(section, {})
        silent = SILENT.get(section, set())
        for name, value in tables[section]:
            if name in silent:
                continue
            always, sentence = sentences.get(name, (False, f"{name}: {{}}"))
            if section == "Icmp" and name == "OutMsgs":
                out.append("    ICMP input histogram:")
            if always or value:
                out.append("    " + sentence.format(value))
            if section == "Icmp" and name == "OutErrors":
                out.append("    ICMP output histogram:")
    return "\n".join(out) + "\n"


BUSYBOX_USAGE = BUSYBOX_BANNER + """Usage: netstat [-ral] [-tuwx] [-enWp]

Display networking information

\t-r\tRouting table
\t-a\tAll sockets
\t-l\tListening sockets
\t\tElse: connected sockets
\t-t\tTCP sockets
\t-u\tUDP sockets
\t-w\tRaw sockets
\t-x\tUnix sockets
\t\tElse: all socket types
\t-e\tOther/more information
\t-n\tDon't resolve names
\t-W\tWide display
\t-p\tShow PID/program name for sockets"""


def netstat_statistics(call: Invocation) -> int:
    """`netstat -s`: net-tools prints the statistics; BusyBox's netstat has no -s."""
    if is_busybox(call):
        call.error(f"netstat: invalid option -- 's'\n{BUSYBOX_USAGE}")
        return 1
    call.write(statistics_text(_tables(call.ctx.twin, call.ctx.pod)))
    return 0
