"""One connection from a pod to host:port, resolved the way the packets would go.

The pipeline, in order, each stage with the failure a real client sees:

1. DNS from the source pod's view (D5's `dns.resolve_name`: dnsPolicy, search paths, CoreDNS
   health, Corefile): NXDOMAIN ⇒ `no such host`; CoreDNS unreachable ⇒ lookup i/o timeout.
2. A Service ClusterIP: the port must be one of the Service's ports, otherwise no iptables rule
   matches and the SYN goes nowhere (timeout). The Service's ready endpoints (the Endpoints
   object, as kube-proxy programs them): none ⇒ kube-proxy's REJECT rule ⇒ connection refused,
   immediately. `internalTrafficPolicy: Local` without a local endpoint drops (timeout). The
   endpoints' shares are the source node's kube-proxy's (`kube_proxy_modes.py`: even upstream).
3. Per endpoint: NetworkPolicy egress of the source and ingress of the destination (D5's
   `netpolicy.allowed`): denied ⇒ dropped ⇒ timeout. Chaos (D3's `chaos.network`): partition ⇒
   timeout, loss as a fraction, delay added to the latency. A full conntrack table on the source
   node drops new connections. A destination pod on a node the source node has no BGP route to
   (`node.bgp`: Calico route reflectors that select no node) drops (timeout).
4. The destination process: a container of the pod must be listening on the target port
   (`runtime.listener`), otherwise the kernel answers RST ⇒ refused (a wrong `targetPort`); a pod
   IP no pod holds any more ⇒ no route to host.

`Router.route()` returns every endpoint leg with its share of traffic (the fluid engine uses the
fractions); `connect()` draws one leg from the `dataplane-connect` random stream (exec tools).
The static part (DNS, Service, endpoints, policy) is cached until a relevant object changes; the
dynamic part (who listens now, chaos, the source node's kernel) is evaluated at most once per tick
and kept across ticks while the generations of its inputs (`route_inputs.stamp`) are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.node_kernel import connect_failure
from sregym.twin.dataplane import route_inputs
from sregym.twin.dataplane.kube_proxy_modes import endpoint_shares
from sregym.twin.dataplane.open_files import ACCEPT_STAGE, accept_blocked
from sregym.twin.dataplane.tcp_loss import path_cost as tcp_path_cost
from sregym.twin.node.bgp import bgp_routes_of
from sregym.twin.node.runtime import runtime_of

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

try:  # D5's resolver; a simple fallback keeps the data plane usable until it lands.
    from sregym.twin.dataplane.dns import resolve_name as _resolve_name
except ImportError:  # pragma: no cover - depends on a parallel module
    _resolve_name = None

try:
    from sregym.twin.dataplane.netpolicy import allowed as _netpol_allowed
except ImportError:  # pragma: no cover
    _netpol_allowed = None

# Errors a connection can end in (None = connected).
ERRORS = ("refused", "timeout", "nxdomain", "servfail", "reset", "unreachable", "tls", "no_route")
RTT_SAME_NODE_MS = 0.08
RTT_CROSS_NODE_MS = 0.25
DNS_RTT_MS = 0.6
DNS_TIMEOUT_MS = 10_000.0  # resolv.conf timeout:5 × attempts:2
NO_ROUTE_MS = 3_000.0  # ARP resolution failure before EHOSTUNREACH
DEFAULT_CONNECT_TIMEOUT_MS = 10_000.0
CLUSTER_DOMAIN = "cluster.local"
WATCHED_KINDS = {("", "Pod"), ("", "Service"), ("", "Endpoints"), ("networking.k8s.io", "NetworkPolicy"),
                 ("", "ConfigMap"), ("", "Namespace")}


@dataclass(frozen=True)
class ConnectResult:
    """What one connection attempt ended in.

    `message` is the Go net error text a client logs (`dial tcp 10.96.12.7:8083: connect:
    connection refused`); `stage` says where it failed ("dns", "service", "policy", "chaos",
    "process", "" when connected)."""

    ok: bool
    error: str | None = None
    message: str = ""
    dst_pod: dict[str, Any] | None = field(default=None, repr=False)
    dst_ip: str = ""
    latency_ms: float = 0.0
    host: str = ""
    port: int = 0
    resolved_ip: str = ""  # what DNS answered (a ClusterIP or a pod IP)
    target_port: int = 0  # the port on the pod after Service translation
    service: dict[str, Any] | None = field(default=None, repr=False)
    stage: str = ""
    src_ip: str = ""
    container: str = ""  # the listening container


@dataclass
class Leg:
    """One way traffic to host:port can go, with its share of the connections."""

    fraction: float
    result: ConnectResult
    loss: float = 0.0  # share of exchanges lost on this path (chaos): TCP retransmissions outlast the timeout
    delay_ms: float = 0.0
    effect: Any = None  # the NetworkEffect shaping the path, for the TCP counters


@dataclass
class Route:
    host: str
    port: int
    legs: list[Leg] = field(default_factory=list)

    @property
    def ok_fraction(self) -> float:
        return sum(leg.fraction * (1.0 - leg.loss) for leg in self.legs if leg.result.ok)


@dataclass
class _Static:
    """The cached part of a route: endpoints after DNS, Service and policy."""

    error: ConnectResult | None
    targets: list[tuple[float, dict[str, Any] | None, str, int, ConnectResult | None]]
    # (fraction, dst pod, dst ip, target port, pre-decided failure)
    resolved_ip: str = ""
    service: dict[str, Any] | None = None


class Router:
    """Resolves connections for one twin; cached by store changes."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self.version = 0
        self._built = -1
        self._cluster_ips: dict[str, dict[str, Any]] = {}
        self._pod_ips: dict[str, dict[str, Any]] = {}
        self._node_ips: dict[str, str] = {}
        self._static: dict[tuple[Any, ...], _Static] = {}
        # key -> (tick, store version, route, input stamp when evaluated): see `route_inputs`.
        self._dynamic: dict[tuple[Any, ...], tuple[float, int, Route, tuple[Any, ...] | None]] = {}
        self.bgp = bgp_routes_of(twin)  # which node has routes to which node's pods (Calico BGP)
        self._bgp_generation = self.bgp.generation
        twin.store.add_listener(self._on_change)

    # ------------------------------------------------------------------ caching
    def _on_change(self, event: Any) -> None:
        key = event.kind.key
        if key in WATCHED_KINDS or key[0] == "chaos-mesh.org":
            self.version += 1

    def _index(self) -> None:
        if self._bgp_generation != self.bgp.generation:  # routes between nodes changed
            self._bgp_generation = self.bgp.generation
            self.version += 1
        if self._built == self.version:
            return
        self._built = self.version
        self._static.clear()
        self._cluster_ips.clear()
        self._pod_ips.clear()
        self._node_ips.clear()
        store = self.twin.store
        for svc in store.scan("Service"):
            spec = svc.get("spec") or {}
            for ip in spec.get("clusterIPs") or [spec.get("clusterIP")]:
                if ip and ip != "None":
                    self._cluster_ips[ip] = svc
        for pod in store.scan("Pod"):
            status = pod.get("status") or {}
            ip = status.get("podIP")
            if ip and not (pod.get("spec") or {}).get("hostNetwork") and \
                    status.get("phase") not in ("Succeeded", "Failed"):
                self._pod_ips[ip] = pod
        for node in store.scan("Node"):
            for addr in (node.get("status") or {}).get("addresses") or []:
                if addr.get("type") == "InternalIP":
                    self._node_ips[addr["address"]] = node["metadata"]["name"]

    # ------------------------------------------------------------------ public
    def route(self, src_pod: dict[str, Any] | None, host: str, port: int, *,
              protocol: str = "TCP", connect_timeout_ms: float = DEFAULT_CONNECT_TIMEOUT_MS) -> Route:
        """Every leg traffic from `src_pod` to host:port takes right now, with its fraction."""
        if self._bgp_generation != self.bgp.generation or self._built != self.version:
            self._index()  # the engine asks for hundreds of routes a tick: skip the call when current
        now = self.twin.clock.now
        src_uid = (src_pod or {}).get("metadata", {}).get("uid", "")
        key = (src_uid, host, int(port), protocol, connect_timeout_ms)
        cached = self._dynamic.get(key)
        if cached is not None and cached[1] == self.version:
            if cached[0] == now:  # the first evaluation in a tick holds for the rest of it
                return cached[2]
            if route_inputs.CROSS_TICK:  # a later tick: reuse while no input changed since
                stamp = route_inputs.stamp(self.twin, self.version, src_pod)
                if cached[3] == stamp:
                    self._dynamic[key] = (now, self.version, cached[2], stamp)
                    return cached[2]
        static = self._static.get(key)
        if static is None:
            static = self._resolve_static(src_pod, host, int(port), protocol, connect_timeout_ms)
            self._static[key] = static
        route = self._evaluate(src_pod, host, int(port), protocol, static, connect_timeout_ms)
        stamp = route_inputs.stamp(self.twin, self.version, src_pod) if route_inputs.CROSS_TICK else None
        if len(self._dynamic) > 50_000:
            self._dynamic.clear()
        self._dynamic[key] = (now, self.version, route, stamp)
        return route

    def connect(self, src_pod: dict[str, Any] | None, host: str, port: int, *, protocol: str = "TCP",
                connect_timeout_ms: float = DEFAULT_CONNECT_TIMEOUT_MS) -> ConnectResult:
        """One attempt: a leg drawn by its fraction (deterministic stream), loss applied."""
        route = self.route(src_pod, host, port, protocol=protocol, connect_timeout_ms=connect_timeout_ms)
        rng = self.twin.rng.stream("dataplane-connect")
        draw = rng.random()
        chosen = route.legs[-1]
        acc = 0.0
        for leg in route.legs:
            acc += leg.fraction
            if draw < acc:
                chosen = leg
                break
        result = chosen.result
        if result.ok and chosen.loss > 0 and rng.random() < chosen.loss:
            # SYN retransmits at 1 s, 3 s, 7 s ... until the client gives up.
            return replace(result, ok=False, error="timeout", stage="chaos",
                           message=f"dial tcp {result.dst_ip}:{result.target_port or port}: i/o timeout",
                           latency_ms=connect_timeout_ms)
        return result

    # ------------------------------------------------------------------ static part
    def _src_ip(self, src_pod: dict[str, Any] | None) -> str:
        return ((src_pod or {}).get("status") or {}).get("podIP") or ""

    def _dns_server(self) -> str:
        svc = self.twin.store.peek("Service", "kube-system", "kube-dns")
        return ((svc or {}).get("spec") or {}).get("clusterIP") or "10.96.0.10"

    def _resolve_static(self, src_pod: dict[str, Any] | None, host: str, port: int, protocol: str,
                        timeout_ms: float) -> _Static:
        base = ConnectResult(ok=False, host=host, port=port, src_ip=self._src_ip(src_pod))
        ip = host if _is_ip(host) else ""
        if not ip:
            answer = self._dns(src_pod, host)
            if not answer[0]:
                error, message, latency = answer[1], answer[2], answer[3]
                return _Static(replace(base, error=error, message=message, latency_ms=latency, stage="dns"), [])
            ip = answer[4]
        service = self._cluster_ips.get(ip)
        if service is not None:
            return self._through_service(src_pod, service, ip, port, protocol, base, timeout_ms)
        if ip in self._pod_ips or ip in self._node_ips:
            pod = self._pod_ips.get(ip)
            return _Static(None, [(1.0, pod, ip, port, None)], resolved_ip=ip)
        if ip.startswith("10.96.") or ip.startswith("10.244."):
            # A cluster range address nobody holds: no route (pods) or silently dropped (services).
            if ip.startswith("10.244."):
                return _Static(replace(base, error="no_route", resolved_ip=ip, dst_ip=ip, stage="process",
                                       latency_ms=min(NO_ROUTE_MS, timeout_ms),
                                       message=f"dial tcp {ip}:{port}: connect: no route to host"), [])
        return _Static(replace(base, error="timeout", resolved_ip=ip, dst_ip=ip, stage="service",
                               latency_ms=timeout_ms, message=f"dial tcp {ip}:{port}: i/o timeout"), [])

    def _dns(self, src_pod: dict[str, Any] | None, host: str) -> tuple[bool, str, str, float, str]:
        """(ok, error, message, latency, ip) for a name from the pod's view."""
        server = self._dns_server()
        if _resolve_name is not None:
            answer = _resolve_name(self.twin, src_pod, host)
            if answer.ok and answer.ips:
                return True, "", "", DNS_RTT_MS, answer.ips[0]
            error = (answer.error or "NXDOMAIN").upper()
        else:
            error, ip = self._fallback_dns(src_pod, host)
            if ip:
                return True, "", "", DNS_RTT_MS, ip
        if error == "TIMEOUT":
            src = self._src_ip(src_pod) or "10.244.0.1"
            port = 30000 + (sum(map(ord, host)) * 7919) % 30000
            return (False, "timeout", f"dial tcp: lookup {host} on {server}:53: read udp {src}:{port}->"
                    f"{server}:53: i/o timeout", DNS_TIMEOUT_MS, "")
        if error == "SERVFAIL":
            return False, "servfail", f"dial tcp: lookup {host} on {server}:53: server misbehaving", \
                DNS_RTT_MS * 2, ""
        if error == "REFUSED":
            return False, "servfail", f"dial tcp: lookup {host} on {server}:53: server misbehaving", \
                DNS_RTT_MS, ""
        return False, "nxdomain", f"dial tcp: lookup {host} on {server}:53: no such host", DNS_RTT_MS * 4, ""

    def _fallback_dns(self, src_pod: dict[str, Any] | None, host: str) -> tuple[str, str]:
        """Service names only, when D5's resolver is absent: CoreDNS must have ready endpoints."""
        endpoints = self.twin.store.peek("Endpoints", "kube-system", "kube-dns")
        if not any(s.get("addresses") for s in (endpoints or {}).get("subsets") or []):
            return "TIMEOUT", ""
        namespace = ((src_pod or {}).get("metadata") or {}).get("namespace") or "default"
        parts = host.rstrip(".").split(".")
        if parts[-2:] == CLUSTER_DOMAIN.split("."):
            parts = parts[:-2]
        if len(parts) >= 3 and parts[2] == "svc":
            parts = parts[:2]
        name, ns = (parts[0], parts[1]) if len(parts) == 2 else (parts[0], namespace) if len(parts) == 1 \
            else ("", "")
        svc = self.twin.store.peek("Service", ns, name) if name else None
        if svc is None:
            return "NXDOMAIN", ""
        spec = svc.get("spec") or {}
        ip = spec.get("clusterIP")
        if ip and ip != "None":
            return "", ip
        for ep in ((self.twin.store.peek("Endpoints", ns, name) or {}).get("subsets") or []):
            for addr in ep.get("addresses") or []:
                return "", addr.get("ip", "")
        return "NXDOMAIN", ""

    def _through_service(self, src_pod: dict[str, Any] | None, service: dict[str, Any], ip: str, port: int,
                         protocol: str, base: ConnectResult, timeout_ms: float) -> _Static:
        spec = service.get("spec") or {}
        base = replace(base, resolved_ip=ip, dst_ip=ip, service=service)
        svc_port = next((p for p in spec.get("ports") or []
                         if int(p.get("port") or 0) == port and (p.get("protocol") or "TCP") == protocol), None)
        if svc_port is None:
            return _Static(replace(base, error="timeout", stage="service", latency_ms=timeout_ms,
                                   message=f"dial tcp {ip}:{port}: i/o timeout"), [], ip, service)
        meta = service["metadata"]
        endpoints = self.twin.store.peek("Endpoints", meta.get("namespace", ""), meta["name"])
        port_name = svc_port.get("name") or ""
        addresses: list[tuple[dict[str, Any], int]] = []
        for subset in (endpoints or {}).get("subsets") or []:
            match = next((p for p in subset.get("ports") or []
                          if (p.get("name") or "") == port_name and (p.get("protocol") or "TCP") == protocol), None)
            if match is None and len(subset.get("ports") or []) == 0:
                continue
            if match is None:
                continue
            for addr in subset.get("addresses") or []:
                addresses.append((addr, int(match.get("port") or 0)))
        if not addresses:
            return _Static(replace(base, error="refused", stage="service", latency_ms=RTT_SAME_NODE_MS,
                                   message=f"dial tcp {ip}:{port}: connect: connection refused"), [], ip, service)
        if spec.get("internalTrafficPolicy") == "Local" and src_pod is not None:
            node = (src_pod.get("spec") or {}).get("nodeName")
            addresses = [a for a in addresses if a[0].get("nodeName") == node]
            if not addresses:
                return _Static(replace(base, error="timeout", stage="service", latency_ms=timeout_ms,
                                       message=f"dial tcp {ip}:{port}: i/o timeout"), [], ip, service)
        addresses.sort(key=lambda a: (_ip_key(a[0].get("ip", "")), a[1]))
        shares = endpoint_shares(self.twin, src_pod, len(addresses))  # the source node's kube-proxy rules
        targets: list[tuple[float, dict[str, Any] | None, str, int, ConnectResult | None]] = []
        for (addr, target_port), share in zip(addresses, shares, strict=True):
            pod_ip = addr.get("ip", "")
            dst_pod = self._pod_ips.get(pod_ip)
            if dst_pod is None:
                ref = addr.get("targetRef") or {}
                dst_pod = self.twin.store.peek("Pod", ref.get("namespace", ""), ref.get("name", ""))
            targets.append((share, dst_pod, pod_ip, target_port, None))
        return _Static(None, targets, ip, service)

    # ------------------------------------------------------------------ dynamic part
    def _evaluate(self, src_pod: dict[str, Any] | None, host: str, port: int, protocol: str, static: _Static,
                  timeout_ms: float) -> Route:
        route = Route(host, port)
        if static.error is not None:
            route.legs.append(Leg(1.0, static.error))
            return route
        runtime = runtime_of(self.twin)
        chaos = self.twin.services.chaos
        nodeos = self.twin.services.nodeos
        src_ip = self._src_ip(src_pod)
        src_node = ((src_pod or {}).get("spec") or {}).get("nodeName") or ""
        conntrack_full = bool(nodeos is not None and src_node and hasattr(nodeos, "conntrack_full")
                              and nodeos.conntrack_full(src_node))
        for fraction, dst_pod, dst_ip, target_port, _ in static.targets:
            where = {"host": host, "port": port, "resolved_ip": static.resolved_ip, "dst_ip": dst_ip,
                     "target_port": target_port, "service": static.service, "dst_pod": dst_pod, "src_ip": src_ip}
            base = ConnectResult(ok=False, **where)
            shown = f"{static.resolved_ip or dst_ip}:{port}"
            refused_locally = connect_failure(self.twin, src_pod, shown)
            if refused_locally is not None:  # the source kernel's ENFILE / EADDRNOTAVAIL
                share, text = refused_locally
                route.legs.append(Leg(fraction * share, replace(base, error="refused", stage="kernel",
                                                                latency_ms=0.01, message=text)))
                fraction *= 1.0 - share
                if fraction <= 0.0:
                    continue
            if dst_pod is None and dst_ip not in self._node_ips:
                route.legs.append(Leg(fraction, replace(base, error="no_route", stage="process",
                                                        latency_ms=min(NO_ROUTE_MS, timeout_ms),
                                                        message=f"dial tcp {shown}: connect: no route to host")))
                continue
            if dst_pod is not None and _netpol_allowed is not None and \
                    not _netpol_allowed(self.twin, src_pod, src_ip, dst_pod, target_port, protocol):
                route.legs.append(Leg(fraction, _timed_out(base, timeout_ms, shown, "policy")))
                continue
            if conntrack_full:
                route.legs.append(Leg(fraction, _timed_out(base, timeout_ms, shown, "conntrack")))
                continue
            dst_spec = (dst_pod or {}).get("spec") or {}
            if dst_pod is not None and not dst_spec.get("hostNetwork") and not self.bgp.reachable(
                    src_node or self._node_ips.get(src_ip, ""), dst_spec.get("nodeName") or ""):
                route.legs.append(Leg(fraction, _timed_out(base, timeout_ms, shown, "route")))
                continue
            loss, delay, retransmit, effect = 0.0, 0.0, 0.0, None
            if chaos is not None and dst_pod is not None and hasattr(chaos, "network"):
                effect = chaos.network(src_pod, dst_pod)
                if effect is not None:
                    if getattr(effect, "partition", False):
                        route.legs.append(Leg(fraction, _timed_out(base, timeout_ms, shown, "chaos")))
                        continue
                    # TCP retransmits what netem drops: slower exchanges, timeouts only past the caller's limit.
                    loss, retransmit, _ = tcp_path_cost(effect, timeout_ms)
                    delay = float(getattr(effect, "delay_ms", 0.0) or 0.0) + \
                        float(getattr(effect, "jitter_ms", 0.0) or 0.0) / 2
            same_node = dst_pod is not None and src_node and \
                (dst_pod.get("spec") or {}).get("nodeName") == src_node
            rtt = (RTT_SAME_NODE_MS if same_node else RTT_CROSS_NODE_MS) + delay
            found = runtime.listener(dst_ip, target_port, protocol)
            if found is None:
                route.legs.append(Leg(fraction, replace(base, error="refused", stage="process", latency_ms=rtt,
                                                        message=f"dial tcp {shown}: connect: connection refused")))
                continue
            _pod_rt, instance, _listen = found
            if accept_blocked(self.twin, instance, dst_ip):  # EMFILE: handshake done, never accepted
                route.legs.append(Leg(fraction, _timed_out(replace(base, container=instance.name), timeout_ms,
                                                           shown, ACCEPT_STAGE)))
                continue
            # Built directly rather than by `replace(base, ...)`: this is the common leg of every tick.
            route.legs.append(Leg(fraction, ConnectResult(ok=True, latency_ms=rtt + retransmit / 2,
                                                          container=instance.name, **where),
                                  loss=loss, delay_ms=delay, effect=effect))
        return route


def _timed_out(base: ConnectResult, timeout_ms: float, shown: str, stage: str) -> ConnectResult:
    """A leg whose SYNs go unanswered until the caller gives up: built only for the legs that
    time out (most legs connect, and `dataclasses.replace` is a large share of a tick)."""
    return replace(base, error="timeout", latency_ms=timeout_ms, message=f"dial tcp {shown}: i/o timeout",
                   stage=stage)


def _is_ip(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 4 and all(p.isdigit() and 0 <= int(p) <= 255 for p in parts)


def _ip_key(ip: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in ip.split("."))
    except ValueError:
        return (1 << 16,)


def router_of(twin: Twin) -> Router:
    router = twin.services.router
    if router is None:
        router = Router(twin)
        twin.services.router = router
    return router


__all__ = ["ERRORS", "ConnectResult", "Leg", "Route", "Router", "router_of"]
