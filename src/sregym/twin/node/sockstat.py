"""Socket counts per network namespace, as `/proc/net/sockstat`, `ss -s` and node-exporter's
sockstat collector report them.

The kernel keeps some counters per network namespace and some for the whole machine, and the
tools read the namespace they run in:

- a pod's namespace holds its containers' listening sockets (`ss -s` in a container);
- the node's namespace (node-exporter reads the host's `/proc/net/sockstat`) holds the node's
  daemons (kubelet, kube-proxy, containerd's streaming server, their API connections), the
  listeners of hostNetwork pods, and the TIME_WAIT sockets the kubelet leaves behind: every
  HTTP or TCP probe is a new connection from the host namespace, closed by the kubelet, so each
  lingers 60 s in TIME_WAIT (probes per second x 60 of them at any time);
- `TCP alloc` (tcp_sockets_allocated) and `orphan` are machine-wide: every TCP socket of every
  pod on the node counts, with the established connections the node's kernel tracks for the data
  plane's long-lived flows (`nodeos` conntrack's persistent entries).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.twin.node.bound_pods import pods_on

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

TIME_WAIT_SECONDS = 60.0  # Linux's TCP_TIMEWAIT_LEN
# The host namespace's own TCP sockets: kubelet (10248, 10250), kube-proxy (10249, 10256) and the
# containerd CRI streaming server listen; kubelet and kube-proxy keep a watch open on the API server.
HOST_TCP_LISTEN = 5
HOST_TCP_ESTABLISHED = 3
HOST_UDP = 2  # chronyd / systemd-resolved on the node image
HOST_OTHER_SOCKETS = 160  # unix sockets of systemd, containerd, the shims: counted in `sockets: used`
PAGE = 4096


@dataclass
class SockStat:
    sockets_used: int = 0
    tcp_inuse: int = 0
    tcp6_inuse: int = 0
    tcp_estab: int = 0
    tcp_orphan: int = 0
    tcp_tw: int = 0
    tcp_alloc: int = 0
    tcp_mem: int = 0
    udp_inuse: int = 0
    udp6_inuse: int = 0
    udp_mem: int = 0
    raw_inuse: int = 0
    frag_inuse: int = 0

    def proc_file(self) -> str:
        """`/proc/net/sockstat`."""
        return (f"sockets: used {self.sockets_used}\n"
                f"TCP: inuse {self.tcp_inuse} orphan {self.tcp_orphan} tw {self.tcp_tw} alloc {self.tcp_alloc} "
                f"mem {self.tcp_mem}\nUDP: inuse {self.udp_inuse} mem {self.udp_mem}\nUDPLITE: inuse 0\n"
                f"RAW: inuse {self.raw_inuse}\nFRAG: inuse {self.frag_inuse} memory 0\n")

    def proc_file6(self) -> str:
        """`/proc/net/sockstat6`."""
        return (f"TCP6: inuse {self.tcp6_inuse}\nUDP6: inuse {self.udp6_inuse}\nUDPLITE6: inuse 0\n"
                "RAW6: inuse 0\nFRAG6: inuse 0 memory 0\n")

    def ss_summary(self) -> str:
        """`ss -s` (iproute2 6.1)."""
        tcp_total = self.tcp_alloc + self.tcp_tw
        closed = max(0, tcp_total - self.tcp_inuse - self.tcp6_inuse)

        def row(name: str, v4: int, v6: int) -> str:
            return f"{name}\t  {v4 + v6:<9} {v4:<9} {v6:<9}\n"

        inet4 = self.raw_inuse + self.udp_inuse + self.tcp_inuse
        inet6 = self.udp6_inuse + self.tcp6_inuse
        return (f"Total: {self.sockets_used}\n"
                f"TCP:   {tcp_total} (estab {self.tcp_estab}, closed {closed}, orphaned {self.tcp_orphan}, "
                f"timewait {self.tcp_tw})\n\nTransport Total     IP        IPv6\n"
                + row("RAW", self.raw_inuse, 0) + row("UDP", self.udp_inuse, self.udp6_inuse)
                + row("TCP", self.tcp_inuse, self.tcp6_inuse) + row("INET", inet4, inet6)
                + row("FRAG", self.frag_inuse, 0))


def _pod_listeners(pod_runtime: Any) -> tuple[int, int]:
    """(TCP, UDP) listening sockets of a pod's running containers."""
    tcp = udp = 0
    for record in pod_runtime.containers.values():
        instance = record.current
        if instance is None or not instance.running:
            continue
        for _port, protocol in instance.listening:
            if protocol == "UDP":
                udp += 1
            else:
                tcp += 1
    return tcp, udp


def pod_sockstat(twin: Twin, namespace: str, name: str) -> SockStat:
    """A pod's network namespace (shared by its containers)."""
    runtime = twin.services.runtime
    pod_runtime = runtime.pod(namespace, name) if runtime is not None else None
    tcp, udp = _pod_listeners(pod_runtime) if pod_runtime is not None else (0, 0)
    return SockStat(sockets_used=tcp + udp, tcp_inuse=tcp, tcp_alloc=tcp, tcp_mem=1 if tcp else 0,
                    udp_inuse=udp, udp_mem=1 if udp else 0)


def _probe_rate(pod: dict[str, Any]) -> float:
    """New connections per second the kubelet opens for this pod's HTTP/TCP probes."""
    rate = 0.0
    for container in (pod.get("spec") or {}).get("containers") or []:
        for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
            probe = container.get(kind) or {}
            if probe.get("httpGet") or probe.get("tcpSocket"):
                rate += 1.0 / max(1.0, float(probe.get("periodSeconds") or 10))
    return rate


def node_sockstat(twin: Twin, node: str) -> SockStat:
    """The node's host namespace, with the machine-wide counters over every pod on it."""
    runtime = twin.services.runtime
    host_tcp = HOST_TCP_LISTEN + HOST_TCP_ESTABLISHED
    host_udp = HOST_UDP
    pods_tcp = 0
    probes = 0.0
    for pod in pods_on(twin.store, node):
        spec = pod.get("spec") or {}
        if (pod.get("status") or {}).get("phase") != "Running":
            continue
        meta = pod.get("metadata") or {}
        pod_runtime = runtime.pod(meta.get("namespace", ""), meta.get("name", "")) if runtime is not None else None
        tcp, udp = _pod_listeners(pod_runtime) if pod_runtime is not None else (0, 0)
        if spec.get("hostNetwork"):
            host_tcp += tcp
            host_udp += udp
        else:
            pods_tcp += tcp
        probes += _probe_rate(pod)
    nodeos = twin.services.nodeos
    state = nodeos.nodes.get(node) if nodeos is not None and hasattr(nodeos, "nodes") else None
    flows = max(0, int(getattr(state, "conntrack_persistent", 0.0) or 0.0))
    tw = round(probes * TIME_WAIT_SECONDS)
    alloc = host_tcp + pods_tcp + flows
    return SockStat(sockets_used=HOST_OTHER_SOCKETS + host_tcp + host_udp, tcp_inuse=host_tcp,
                    tcp_estab=HOST_TCP_ESTABLISHED, tcp_tw=tw, tcp_alloc=alloc, tcp_mem=max(1, alloc // 4),
                    udp_inuse=host_udp, udp_mem=max(1, host_udp))


def sockstat_metrics(stat: SockStat) -> list[tuple[str, float]]:
    """node-exporter's sockstat collector: (family, value) for the host's /proc/net/sockstat{,6}."""
    return [("node_sockstat_sockets_used", stat.sockets_used), ("node_sockstat_TCP_inuse", stat.tcp_inuse),
            ("node_sockstat_TCP_orphan", stat.tcp_orphan), ("node_sockstat_TCP_tw", stat.tcp_tw),
            ("node_sockstat_TCP_alloc", stat.tcp_alloc), ("node_sockstat_TCP_mem", stat.tcp_mem),
            ("node_sockstat_TCP_mem_bytes", stat.tcp_mem * PAGE), ("node_sockstat_UDP_inuse", stat.udp_inuse),
            ("node_sockstat_UDP_mem", stat.udp_mem), ("node_sockstat_UDP_mem_bytes", stat.udp_mem * PAGE),
            ("node_sockstat_UDPLITE_inuse", 0), ("node_sockstat_RAW_inuse", stat.raw_inuse),
            ("node_sockstat_FRAG_inuse", stat.frag_inuse), ("node_sockstat_FRAG_memory", 0),
            ("node_sockstat_TCP6_inuse", stat.tcp6_inuse), ("node_sockstat_UDP6_inuse", stat.udp6_inuse),
            ("node_sockstat_UDPLITE6_inuse", 0), ("node_sockstat_RAW6_inuse", 0), ("node_sockstat_FRAG6_inuse", 0),
            ("node_sockstat_FRAG6_memory", 0)]


def sockstat_help(family: str) -> str:
    """node-exporter's HELP text for a sockstat family."""
    if family == "node_sockstat_sockets_used":
        return "Number of IPv4 sockets in use."
    protocol, _, state = family.removeprefix("node_sockstat_").partition("_")
    return f"Number of {protocol} sockets in state {state}."


__all__ = ["SockStat", "node_sockstat", "pod_sockstat", "sockstat_help", "sockstat_metrics"]
