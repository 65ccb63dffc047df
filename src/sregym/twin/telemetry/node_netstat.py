"""node-exporter's `netstat` collector: the host namespace's `/proc/net/{snmp,netstat}` counters.

`node_netstat_Tcp_RetransSegs` against `node_netstat_Tcp_OutSegs` is how a dashboard shows a lossy
network on a node. The collector exposes every `<Section>_<Field>` matching its default
`--collector.netstat.fields` pattern as an untyped sample with the help `Statistic <Section><Field>.`;
the values come from the node's counters in `dataplane.tcp_loss` (its own traffic, host-network
pods and the kubelet's probes, with their retransmissions while a NetworkChaos runs).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.tcp_loss import (
    ICMP_FIELDS,
    IP_EXT_FIELDS,
    IP_FIELDS,
    SNMP_TCP,
    TCP_EXT,
    UDP_FIELDS,
    kernel_tables,
    tcp_of,
)
from sregym.twin.telemetry.exposition import Family

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

DEFAULT_FIELDS = re.compile(
    r"^(.*_(InErrors|InErrs)|Ip_Forwarding|Ip(6|Ext)_(InOctets|OutOctets)|Icmp6?_(InMsgs|OutMsgs)|"
    r"TcpExt_(Listen.*|Syncookies.*|TCPSynRetrans|TCPTimeouts|TCPOFOQueue|TCPRcvQDrop)|"
    r"Tcp_(ActiveOpens|InSegs|OutSegs|OutRsts|PassiveOpens|RetransSegs|CurrEstab)|"
    r"Udp6?_(InDatagrams|OutDatagrams|NoPorts|RcvbufErrors|SndbufErrors))$")


def _exposed() -> list[tuple[str, str]]:
    fields = {"Ip": IP_FIELDS, "Icmp": ICMP_FIELDS, "Tcp": SNMP_TCP, "Udp": UDP_FIELDS, "UdpLite": UDP_FIELDS,
              "TcpExt": TCP_EXT, "IpExt": IP_EXT_FIELDS}
    return [(section, name) for section, names in fields.items() for name in names
            if DEFAULT_FIELDS.match(f"{section}_{name}")]


EXPOSED = _exposed()
FAMILIES: tuple[Family, ...] = tuple(Family(f"node_netstat_{section}_{name}", "unknown",
                                            f"Statistic {section}{name}.") for section, name in EXPOSED)


def node_netstat(twin: Twin, node: dict[str, Any]) -> list[tuple[str, float]]:
    """The collector's samples for one node, in exposition order."""
    tables = kernel_tables(tcp_of(twin).node_mib(node), host=True)
    values = {(section, name): value for section, rows in tables.items() for name, value in rows}
    return [(f"node_netstat_{section}_{name}", float(values[(section, name)])) for section, name in EXPOSED]
