"""TCP under netem: what packet loss, corruption, duplication and a rate limit cost a request,
and the kernel's TCP counters (`/proc/net/snmp`, `/proc/net/netstat`) that show it.

A lossy path rarely fails a request outright: TCP retransmits. A single segment in flight is
recovered by the tail-loss probe or the retransmission timer, both about 200 ms (TCP_RTO_MIN),
and each further loss of the same segment doubles the wait. So a request of a few segments pays,
per segment, `RTO * (2**k - 1)` for `k` consecutive losses, and fails only when that exceeds
the caller's timeout. A corrupted segment fails its checksum at the receiver and is dropped, so
corruption costs what loss costs (and counts `InCsumErrors` there). A rate limit adds the
payload's transmission time. These numbers feed the data plane's latency and timeout model
(`connect.py`) instead of treating a lost packet as a failed request.

Counters are per network namespace: one set per pod (keyed by uid, so a replacement pod starts
at zero like a new namespace) and one per node for the host namespace (kubelet, host-network
pods, probes to the pods on the node). Baseline traffic (probes, the node's own chatter) grows
with elapsed time and is computed when read; traffic between programs is added by the engine's
flow hook; retransmissions of probe traffic into a shaped pod are integrated per tick while a
NetworkChaos runs. Everything is a deterministic function of the flows, so counters are monotonic
and reproducible for a seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.clock import parse_time
from sregym.twin.machinery.objects import get_path
from sregym.twin.node.bound_pods import pods_on

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

RTO_MIN_MS = 200.0
SEGMENTS_PER_EXCHANGE = 4  # request, its ACK, response, its ACK (keep-alive connections)
PAYLOAD_BYTES = 2048.0  # a typical RPC request plus response, for the rate-limit transfer time
PROBE_SEGMENTS = 5  # one HTTP/TCP probe: SYN, ACK, request, FIN, ACK out of the prober
NODE_BASE_SEGS = {"control-plane": 180.0, "worker": 14.0}  # host netns chatter per second
BASE_RETRANS = 0.0002  # healthy networks still retransmit a little
POD_MEMO_LIMIT = 4096  # pod objects whose counters `TcpStats._pod` remembers before starting over


def segment_loss(effect: Any) -> float:
    """Probability that one segment never arrives intact (loss or a bad checksum)."""
    if effect is None:
        return 0.0
    loss = _fraction(getattr(effect, "loss", 0.0))
    corrupt = _fraction(getattr(effect, "corrupt", 0.0))
    return 1.0 - (1.0 - loss) * (1.0 - corrupt)


def _fraction(value: Any) -> float:
    number = float(value or 0.0)
    if number > 1.0:
        number /= 100.0
    return max(0.0, min(1.0, number))


def _losses_to_exceed(budget_ms: float) -> int:
    """Consecutive losses of one segment whose backoff (`RTO * (2**k - 1)`) exceeds the budget."""
    if budget_ms <= 0:
        return 0
    return max(1, math.floor(math.log2(budget_ms / RTO_MIN_MS + 1.0)) + 1)


def timeout_fraction(p: float, timeout_ms: float, segments: int = SEGMENTS_PER_EXCHANGE) -> float:
    """Share of exchanges where some segment's retransmissions outlast the caller's timeout."""
    if p <= 0:
        return 0.0
    if p >= 1.0:
        return 1.0
    k = _losses_to_exceed(timeout_ms)
    return 1.0 - (1.0 - p ** k) ** segments


def retransmit_penalty_ms(p: float, timeout_ms: float, segments: int = SEGMENTS_PER_EXCHANGE) -> float:
    """Mean extra time of an exchange that completes, from retransmission backoff."""
    if p <= 0:
        return 0.0
    k_max = _losses_to_exceed(timeout_ms) - 1  # more losses than this time out
    mean = sum((1.0 - p) * p ** k * RTO_MIN_MS * (2 ** k - 1) for k in range(1, k_max + 1))
    done = 1.0 - p ** (k_max + 1)
    per_segment = mean / done if done > 0 else 0.0
    return min(timeout_ms, per_segment * segments)


def transfer_ms(bandwidth_bps: float | None, payload: float = PAYLOAD_BYTES) -> float:
    """Time to push a payload through a tbf rate limit (bytes per second)."""
    if not bandwidth_bps or bandwidth_bps <= 0:
        return 0.0
    return payload / bandwidth_bps * 1000.0


def path_cost(effect: Any, timeout_ms: float) -> tuple[float, float, float]:
    """(share of exchanges that time out, extra latency of the rest in ms, segment loss)."""
    p = segment_loss(effect)
    extra = retransmit_penalty_ms(p, timeout_ms) + transfer_ms(getattr(effect, "bandwidth", None))
    return timeout_fraction(p, timeout_ms), extra, p


# ------------------------------------------------------------------------------------ counters
SNMP_TCP = ("RtoAlgorithm", "RtoMin", "RtoMax", "MaxConn", "ActiveOpens", "PassiveOpens", "AttemptFails",
            "EstabResets", "CurrEstab", "InSegs", "OutSegs", "RetransSegs", "InErrs", "OutRsts", "InCsumErrors")
TCP_EXT = (  # Linux 6.1 order
    "SyncookiesSent", "SyncookiesRecv", "SyncookiesFailed", "EmbryonicRsts", "PruneCalled", "RcvPruned",
    "OfoPruned", "OutOfWindowIcmps", "LockDroppedIcmps", "ArpFilter", "TW", "TWRecycled", "TWKilled",
    "PAWSActive", "PAWSEstab", "DelayedACKs", "DelayedACKLocked", "DelayedACKLost", "ListenOverflows",
    "ListenDrops", "TCPHPHits", "TCPPureAcks", "TCPHPAcks", "TCPRenoRecovery", "TCPSackRecovery",
    "TCPSACKReneging", "TCPSACKReorder", "TCPRenoReorder", "TCPTSReorder", "TCPFullUndo", "TCPPartialUndo",
    "TCPDSACKUndo", "TCPLossUndo", "TCPLostRetransmit", "TCPRenoFailures", "TCPSackFailures", "TCPLossFailures",
    "TCPFastRetrans", "TCPSlowStartRetrans", "TCPTimeouts", "TCPLossProbes", "TCPLossProbeRecovery",
    "TCPRenoRecoveryFail", "TCPSackRecoveryFail", "TCPRcvCollapsed", "TCPBacklogCoalesce", "TCPDSACKOldSent",
    "TCPDSACKOfoSent", "TCPDSACKRecv", "TCPDSACKOfoRecv", "TCPAbortOnData", "TCPAbortOnClose",
    "TCPAbortOnMemory", "TCPAbortOnTimeout", "TCPAbortOnLinger", "TCPAbortFailed", "TCPMemoryPressures",
    "TCPMemoryPressuresChrono", "TCPSACKDiscard", "TCPDSACKIgnoredOld", "TCPDSACKIgnoredNoUndo",
    "TCPSpuriousRTOs", "TCPMD5NotFound", "TCPMD5Unexpected", "TCPMD5Failure", "TCPSackShifted", "TCPSackMerged",
    "TCPSackShiftFallback", "TCPBacklogDrop", "PFMemallocDrop", "TCPMinTTLDrop", "TCPDeferAcceptDrop",
    "IPReversePathFilter", "TCPTimeWaitOverflow", "TCPReqQFullDoCookies", "TCPReqQFullDrop", "TCPRetransFail",
    "TCPRcvCoalesce", "TCPOFOQueue", "TCPOFODrop", "TCPOFOMerge", "TCPChallengeACK", "TCPSYNChallenge",
    "TCPFastOpenActive", "TCPFastOpenActiveFail", "TCPFastOpenPassive", "TCPFastOpenPassiveFail",
    "TCPFastOpenListenOverflow", "TCPFastOpenCookieReqd", "TCPFastOpenBlackhole", "TCPSpuriousRtxHostQueues",
    "BusyPollRxPackets", "TCPAutoCorking", "TCPFromZeroWindowAdv", "TCPToZeroWindowAdv", "TCPWantZeroWindowAdv",
    "TCPSynRetrans", "TCPOrigDataSent", "TCPHystartTrainDetect", "TCPHystartTrainCwnd", "TCPHystartDelayDetect",
    "TCPHystartDelayCwnd", "TCPACKSkippedSynRecv", "TCPACKSkippedPAWS", "TCPACKSkippedSeq",
    "TCPACKSkippedFinWait2", "TCPACKSkippedTimeWait", "TCPACKSkippedChallenge", "TCPWinProbe", "TCPKeepAlive",
    "TCPMTUPFail", "TCPMTUPSuccess", "TCPDelivered", "TCPDeliveredCE", "TCPAckCompressed", "TCPZeroWindowDrop",
    "TCPRcvQDrop", "TCPWqueueTooBig", "TCPFastOpenPassiveAltKey", "TcpTimeoutRehash", "TcpDuplicateDataRehash",
    "TCPDSACKRecvSegs", "TCPDSACKIgnoredDubious", "TCPMigrateReqSuccess", "TCPMigrateReqFailure", "TCPPLBRehash",
)


@dataclass
class TcpMib:
    """The counters of one network namespace that traffic moves (floats; shown as integers)."""

    active_opens: float = 0.0
    passive_opens: float = 0.0
    in_segs: float = 0.0
    out_segs: float = 0.0
    retrans: float = 0.0
    in_errs: float = 0.0
    csum_errs: float = 0.0
    timeouts: float = 0.0
    loss_probes: float = 0.0
    dsack_recv: float = 0.0
    delayed_acks: float = 0.0

    def plus(self, other: TcpMib) -> TcpMib:
        return TcpMib(**{k: getattr(self, k) + getattr(other, k) for k in self.__dataclass_fields__})

    def exchange(self, *, sent: float, received: float, p: float, corrupt: float, duplicate: float) -> None:
        """`sent` segments out and `received` in over a path losing `p` of them."""
        self.out_segs += sent
        self.in_segs += received * (1.0 + duplicate)
        if p > 0:
            p = min(p, 0.95)
            retrans = sent * p / (1.0 - p)
            self.retrans += retrans
            self.out_segs += retrans
            self.loss_probes += sent * p
            self.timeouts += sent * p * p / (1.0 - p)
        if corrupt > 0:
            self.in_errs += received * corrupt
            self.csum_errs += received * corrupt
        if duplicate > 0:
            self.dsack_recv += sent * duplicate


@dataclass
class TcpStats:
    """Per pod (uid) and per node counters from flows; baselines added when read."""

    twin: Twin
    pods: dict[str, TcpMib] = field(default_factory=dict)
    nodes: dict[str, TcpMib] = field(default_factory=dict)
    # id(pod object) -> (the object, its counters): the object is kept so an id is never reused
    _by_object: dict[int, tuple[dict[str, Any], TcpMib]] = field(default_factory=dict, repr=False)

    def _pod(self, pod: dict[str, Any] | None) -> TcpMib | None:
        # A pod's uid and hostNetwork never change, so its counters are found once per pod object
        # (flows ask twice per edge per tick); host-network pods go by node name, looked up anew.
        if pod:
            known = self._by_object.get(id(pod))
            if known is not None and known[0] is pod:
                return known[1]
        uid = get_path(pod, "metadata", "uid", default="") if pod else ""
        if not uid or get_path(pod, "spec", "hostNetwork", default=False):
            node = get_path(pod, "spec", "nodeName", default="") if pod else ""
            return self.nodes.setdefault(node, TcpMib()) if node else None
        mib = self.pods.setdefault(uid, TcpMib())
        if len(self._by_object) >= POD_MEMO_LIMIT:
            self._by_object.clear()
        self._by_object[id(pod)] = (pod, mib)
        return mib

    def flow(self, src: dict[str, Any] | None, dst: dict[str, Any] | None, rate: float, effect: Any,
             dt: float) -> None:
        """`rate` requests per second from `src` to `dst` for `dt` seconds over a path with `effect`."""
        if rate <= 0 or dt <= 0:
            return
        p = segment_loss(effect)
        corrupt = _fraction(getattr(effect, "corrupt", 0.0)) if effect is not None else 0.0
        duplicate = _fraction(getattr(effect, "duplicate", 0.0)) if effect is not None else 0.0
        half = rate * dt * SEGMENTS_PER_EXCHANGE / 2
        client, server = self._pod(src), self._pod(dst)
        if client is not None:
            client.exchange(sent=half, received=half, p=p, corrupt=corrupt, duplicate=duplicate)
        if server is not None:
            server.exchange(sent=half, received=half, p=p, corrupt=corrupt, duplicate=duplicate)
            server.delayed_acks += half * 0.1

    # ------------------------------------------------------------------ reading
    def pod_mib(self, pod: dict[str, Any]) -> TcpMib:
        uid = get_path(pod, "metadata", "uid", default="")
        elapsed = _elapsed(self.twin, pod)
        probes = probe_rate(pod) * elapsed
        base = TcpMib(passive_opens=probes, in_segs=probes * PROBE_SEGMENTS, out_segs=probes * (PROBE_SEGMENTS - 1),
                      delayed_acks=probes * 0.5)
        base.retrans = base.out_segs * BASE_RETRANS
        flows = self.pods.get(uid)
        return base.plus(flows) if flows is not None else base

    def node_mib(self, node: dict[str, Any]) -> TcpMib:
        name = node["metadata"]["name"]
        created = get_path(node, "metadata", "creationTimestamp")
        elapsed = max(0.0, self.twin.clock.now - (parse_time(created) if created else self.twin.clock.now))
        labels = get_path(node, "metadata", "labels", default={}) or {}
        role = "control-plane" if "node-role.kubernetes.io/control-plane" in labels else "worker"
        segs = NODE_BASE_SEGS[role] * elapsed
        probes = sum(probe_rate(p) * _elapsed(self.twin, p) for p in pods_on(self.twin.store, name))
        base = TcpMib(active_opens=probes + elapsed * 0.2, passive_opens=elapsed * 0.1,
                      in_segs=segs * 1.05 + probes * (PROBE_SEGMENTS - 1), out_segs=segs + probes * PROBE_SEGMENTS,
                      delayed_acks=segs * 0.01)
        base.retrans = base.out_segs * BASE_RETRANS
        flows = self.nodes.get(name)
        return base.plus(flows) if flows is not None else base


def probe_rate(pod: dict[str, Any]) -> float:
    """TCP connections per second the kubelet opens to the pod for its HTTP/TCP/gRPC probes."""
    rate = 0.0
    for container in get_path(pod, "spec", "containers", default=[]) or []:
        for kind in ("readinessProbe", "livenessProbe"):
            probe = container.get(kind) or {}
            if any(k in probe for k in ("httpGet", "tcpSocket", "grpc")):
                rate += 1.0 / max(1.0, float(probe.get("periodSeconds") or 10))
    return rate


def _elapsed(twin: Twin, pod: dict[str, Any]) -> float:
    started = get_path(pod, "status", "startTime")
    if not started or get_path(pod, "status", "phase") not in ("Running", "Succeeded", "Failed"):
        return 0.0
    return max(0.0, twin.clock.now - parse_time(started))


def tcp_of(twin: Twin) -> TcpStats:
    stats = twin.services.tcp
    if stats is None:
        stats = TcpStats(twin)
        twin.services.tcp = stats
    return stats


def probe_loss(twin: Twin) -> None:
    """While a NetworkChaos shapes a pod, the kubelet's probes into it lose segments too: both
    the pod's and its node's host namespace retransmit. Called by the engine every tick; nothing
    to do (and no cost) without a running NetworkChaos."""
    chaos = twin.services.chaos
    active = getattr(chaos, "active", None)
    running = active("NetworkChaos") if active is not None else None
    if not running:
        return
    stats = tcp_of(twin)
    pods: set[str] = set()
    for injection in running:
        pods |= injection.pods | (injection.targets or frozenset())
    for key in sorted(pods):
        namespace, name = key.split("/", 1)
        pod = twin.store.peek("Pod", namespace, name)
        rate = probe_rate(pod) if pod is not None else 0.0
        if not rate:
            continue
        node = twin.store.peek("Node", None, get_path(pod, "spec", "nodeName", default="") or "")
        if node is None:
            continue
        stats.flow(node_as_peer(node), pod, rate * PROBE_SEGMENTS / SEGMENTS_PER_EXCHANGE,
                   chaos.network(pod, None), twin.clock.tick)


def node_as_peer(node: dict[str, Any]) -> dict[str, Any]:
    """A node's host network namespace as a flow endpoint."""
    return {"metadata": {"name": node["metadata"]["name"]},
            "spec": {"hostNetwork": True, "nodeName": node["metadata"]["name"]}}


# ------------------------------------------------------------------------------ kernel tables
IP_FIELDS = ("Forwarding", "DefaultTTL", "InReceives", "InHdrErrors", "InAddrErrors", "ForwDatagrams",
             "InUnknownProtos", "InDiscards", "InDelivers", "OutRequests", "OutDiscards", "OutNoRoutes",
             "ReasmTimeout", "ReasmReqds", "ReasmOKs", "ReasmFails", "FragOKs", "FragFails", "FragCreates")
ICMP_FIELDS = ("InMsgs", "InErrors", "InCsumErrors", "InDestUnreachs", "InTimeExcds", "InParmProbs",
               "InSrcQuenchs", "InRedirects", "InEchos", "InEchoReps", "InTimestamps", "InTimestampReps",
               "InAddrMasks", "InAddrMaskReps", "OutMsgs", "OutErrors", "OutRateLimitGlobal", "OutRateLimitHost",
               "OutDestUnreachs", "OutTimeExcds", "OutParmProbs", "OutSrcQuenchs", "OutRedirects", "OutEchos",
               "OutEchoReps", "OutTimestamps", "OutTimestampReps", "OutAddrMasks", "OutAddrMaskReps")
UDP_FIELDS = ("InDatagrams", "NoPorts", "InErrors", "OutDatagrams", "RcvbufErrors", "SndbufErrors",
              "InCsumErrors", "IgnoredMulti", "MemErrors")
IP_EXT_FIELDS = ("InNoRoutes", "InTruncatedPkts", "InMcastPkts", "OutMcastPkts", "InBcastPkts", "OutBcastPkts",
                 "InOctets", "OutOctets", "InMcastOctets", "OutMcastOctets", "InBcastOctets", "OutBcastOctets",
                 "InCsumErrors", "InNoECTPkts", "InECT1Pkts", "InECT0Pkts", "InCEPkts", "ReasmOverlaps")
DNS_SHARE = 0.02  # UDP datagrams (DNS) per TCP segment
SEGMENT_BYTES = 420.0  # mean bytes on the wire per segment of RPC traffic


def kernel_tables(mib: TcpMib, *, host: bool) -> dict[str, list[tuple[str, int]]]:
    """The sections of `/proc/net/snmp` and `/proc/net/netstat` for one namespace, in kernel order.

    A pod's namespace does not forward (`Forwarding` 2); a node's does (1)."""
    out_segs, in_segs = int(mib.out_segs), int(mib.in_segs)
    udp = int(mib.out_segs * DNS_SHARE)
    tcp = {"RtoAlgorithm": 1, "RtoMin": 200, "RtoMax": 120000, "MaxConn": -1,
           "ActiveOpens": int(mib.active_opens), "PassiveOpens": int(mib.passive_opens), "AttemptFails": 0,
           "EstabResets": 0, "CurrEstab": 0 if host else 2, "InSegs": in_segs, "OutSegs": out_segs,
           "RetransSegs": int(mib.retrans), "InErrs": int(mib.in_errs), "OutRsts": int(mib.passive_opens * 0.02),
           "InCsumErrors": int(mib.csum_errs)}
    ip = dict.fromkeys(IP_FIELDS, 0)
    ip.update(Forwarding=1 if host else 2, DefaultTTL=64, InReceives=in_segs + udp, InDelivers=in_segs + udp,
              OutRequests=out_segs + udp)
    ext = dict.fromkeys(TCP_EXT, 0)
    ext.update(DelayedACKs=int(mib.delayed_acks), TCPTimeouts=int(mib.timeouts), TCPLossProbes=int(mib.loss_probes),
               TCPLossProbeRecovery=int(mib.loss_probes * 0.5), TCPDSACKRecv=int(mib.dsack_recv),
               TCPDSACKRecvSegs=int(mib.dsack_recv), TCPPureAcks=int(in_segs * 0.4), TCPHPAcks=int(in_segs * 0.3),
               TCPHPHits=int(in_segs * 0.2), TCPOrigDataSent=int(mib.out_segs - mib.retrans) // 2,
               TCPDelivered=int(mib.out_segs - mib.retrans) // 2, TW=int(mib.active_opens * 0.9),
               TCPRcvCoalesce=int(in_segs * 0.05), TCPAutoCorking=int(out_segs * 0.001))
    ip_ext = dict.fromkeys(IP_EXT_FIELDS, 0)
    ip_ext.update(InOctets=int(mib.in_segs * SEGMENT_BYTES), OutOctets=int(mib.out_segs * SEGMENT_BYTES),
                  InNoECTPkts=in_segs + udp)
    return {"Ip": list(ip.items()), "Icmp": [(f, 0) for f in ICMP_FIELDS], "Tcp": list(tcp.items()),
            "Udp": [(f, udp if f in ("InDatagrams", "OutDatagrams") else 0) for f in UDP_FIELDS],
            "UdpLite": [(f, 0) for f in UDP_FIELDS], "TcpExt": list(ext.items()), "IpExt": list(ip_ext.items())}
