"""NetworkPolicy enforcement: may this packet from src reach dst on this port?

A NetworkPolicy is a Kubernetes write that silently turns working connections into timeouts
(dropped SYNs, not refusals), which makes it one of the hardest faults to see. The semantics
here are the API's, as CNIs like Calico and Cilium implement them:

- a pod is isolated for ingress (egress) once any policy in its namespace selects it with
  `Ingress` (`Egress`) in `policyTypes` (default: `Ingress`, plus `Egress` when the spec has an
  `egress` section); isolated traffic must be allowed by at least one rule of one selecting
  policy, and rules only ever add allowances;
- egress is checked on the source pod, ingress on the destination pod; both must pass;
- a rule with no `from`/`to` matches every peer, with no `ports` every port and protocol;
- peers: `podSelector` (in the policy's namespace), `namespaceSelector` (by Namespace labels),
  both together (pods matching in matching namespaces), `ipBlock` (`cidr` minus `except`,
  matched against the peer's IP, pod IPs included);
- ports: number or name (a name resolves against the destination pod's container ports with
  that protocol), `protocol` defaults to TCP, `endPort` makes a range; ICMP (ping) is matched
  only by rules without `ports`;
- hostNetwork pods are never isolated, a pod always reaches itself, and the node a pod runs on
  always reaches it (kubelet probes).

`allowed()` is the only entry point. Policies are indexed per namespace and decisions cached;
both are rebuilt when the store changes (keyed by the store's resourceVersion and the tick).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.selectors import LabelSelector, selector_from_spec

if TYPE_CHECKING:
    from sregym.twin.twin import Twin



@dataclass(frozen=True)
class _Peer:
    pod_selector: LabelSelector | None
    ns_selector: LabelSelector | None
    ip_block: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network,
                    tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]] | None


@dataclass(frozen=True)
class _Port:
    protocol: str
    port: int | str | None  # None: every port of the protocol
    end_port: int | None


@dataclass(frozen=True)
class _Rule:
    peers: tuple[_Peer, ...] | None  # None: every peer
    ports: tuple[_Port, ...] | None  # None: every port and protocol


@dataclass(frozen=True)
class _Policy:
    namespace: str
    name: str
    selector: LabelSelector
    ingress: tuple[_Rule, ...] | None  # None: the policy does not isolate for ingress
    egress: tuple[_Rule, ...] | None


@dataclass
class _Index:
    key: tuple[float, int] = (-1.0, -1)
    policies_rv: tuple[tuple[str, str, str], ...] = ()
    by_namespace: dict[str, list[_Policy]] = field(default_factory=dict)
    ns_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    decisions: dict[tuple[Any, ...], bool] = field(default_factory=dict)


# ============================================================================== compiling policies
def _selector(spec: Any) -> LabelSelector | None:
    if spec is None:
        return None
    return selector_from_spec(spec if isinstance(spec, dict) else {})


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(str(text), strict=False)
    except ValueError:
        return None


def _peers(items: Any) -> tuple[_Peer, ...] | None:
    if not items:
        return None  # absent or empty `from`/`to`: all peers
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        block = None
        if isinstance(item.get("ipBlock"), dict):
            cidr = _network(item["ipBlock"].get("cidr", ""))
            if cidr is None:
                continue
            excepts = tuple(n for n in (_network(e) for e in item["ipBlock"].get("except") or [])
                            if n is not None)
            block = (cidr, excepts)
        pods = _selector(item.get("podSelector")) if "podSelector" in item else None
        namespaces = _selector(item.get("namespaceSelector")) if "namespaceSelector" in item else None
        if block is None and pods is None and namespaces is None:
            continue  # an empty peer selects nothing
        out.append(_Peer(pods, namespaces, block))
    return tuple(out)


def _ports(items: Any) -> tuple[_Port, ...] | None:
    if not items:
        return None
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        port = item.get("port")
        if isinstance(port, str) and port.isdigit():
            port = int(port)
        end = item.get("endPort")
        out.append(_Port(str(item.get("protocol") or "TCP").upper(), port,
                         int(end) if isinstance(end, int) else None))
    return tuple(out)


def _rules(items: Any, peer_key: str) -> tuple[_Rule, ...]:
    return tuple(_Rule(_peers(rule.get(peer_key)), _ports(rule.get("ports")))
                 for rule in items or [] if isinstance(rule, dict))


def compile_policy(policy: dict[str, Any]) -> _Policy:
    spec = policy.get("spec") or {}
    types = spec.get("policyTypes")
    if not types:
        types = ["Ingress"] + (["Egress"] if "egress" in spec else [])
    meta = policy.get("metadata") or {}
    return _Policy(
        namespace=meta.get("namespace", ""),
        name=meta.get("name", ""),
        selector=selector_from_spec(spec.get("podSelector") or {}),
        ingress=_rules(spec.get("ingress"), "from") if "Ingress" in types else None,
        egress=_rules(spec.get("egress"), "to") if "Egress" in types else None,
    )


def _index(twin: Twin) -> _Index:
    index = twin.services.netpolicy
    if index is None:
        index = _Index()
        twin.services.netpolicy = index
    key = (float(twin.clock.now), int(twin.store.resource_version))
    if index.key == key:
        return index
    index.key = key
    index.decisions.clear()
    stamp = tuple((get_path(p, "metadata", "namespace", default=""),
                   get_path(p, "metadata", "name", default=""),
                   str(get_path(p, "metadata", "resourceVersion", default="")))
                  for p in twin.store.scan("NetworkPolicy"))
    if stamp != index.policies_rv:
        index.policies_rv = stamp
        index.by_namespace = {}
        for policy in twin.store.scan("NetworkPolicy"):
            compiled = compile_policy(policy)
            index.by_namespace.setdefault(compiled.namespace, []).append(compiled)
    index.ns_labels = {ns["metadata"]["name"]: dict(ns["metadata"].get("labels") or {})
                       for ns in twin.store.scan("Namespace")} if index.by_namespace else {}
    return index


# ===================================================================================== evaluation
def _labels(pod: dict[str, Any] | None) -> dict[str, str]:
    return dict(get_path(pod, "metadata", "labels", default=None) or {}) if pod else {}


def _host_network(pod: dict[str, Any] | None) -> bool:
    return bool(get_path(pod, "spec", "hostNetwork", default=False)) if pod else False


def _ip_in(ip: str, block: Any) -> bool:
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    cidr, excepts = block
    if address.version != cidr.version or address not in cidr:
        return False
    return not any(address.version == e.version and address in e for e in excepts)


def _peer_matches(peer: _Peer, policy_ns: str, pod: dict[str, Any] | None, ip: str,
                  ns_labels: dict[str, dict[str, str]]) -> bool:
    if peer.ip_block is not None:
        return bool(ip) and _ip_in(ip, peer.ip_block)
    if pod is None or _host_network(pod):
        return False  # selectors only select pods (host-network pods are node traffic)
    pod_ns = get_path(pod, "metadata", "namespace", default="")
    if peer.ns_selector is not None:
        if not peer.ns_selector.matches(ns_labels.get(pod_ns, {})):
            return False
    elif pod_ns != policy_ns:
        return False
    return peer.pod_selector is None or peer.pod_selector.matches(_labels(pod))


def _named_port(pod: dict[str, Any], name: str, protocol: str) -> int | None:
    for group in ("containers", "initContainers"):
        for container in get_path(pod, "spec", group, default=None) or []:
            for port in container.get("ports") or []:
                if port.get("name") == name and str(port.get("protocol") or "TCP").upper() == protocol:
                    return port.get("containerPort")
    return None


def _port_matches(ports: tuple[_Port, ...] | None, dst_pod: dict[str, Any], port: int,
                  protocol: str) -> bool:
    if ports is None:
        return True
    if protocol == "ICMP":
        return False
    for entry in ports:
        if entry.protocol != protocol:
            continue
        if entry.port is None:
            return True
        if isinstance(entry.port, str):
            if _named_port(dst_pod, entry.port, protocol) == port:
                return True
            continue
        if entry.end_port is not None:
            if entry.port <= port <= entry.end_port:
                return True
        elif entry.port == port:
            return True
    return False


def _isolating(index: _Index, pod: dict[str, Any], direction: str) -> list[_Policy]:
    ns = get_path(pod, "metadata", "namespace", default="")
    labels = _labels(pod)
    out = []
    for policy in index.by_namespace.get(ns, ()):
        rules = policy.ingress if direction == "ingress" else policy.egress
        if rules is not None and policy.selector.matches(labels):
            out.append(policy)
    return out


def egress_allowed(twin: Twin, src_pod: dict[str, Any], dst_pod: dict[str, Any] | None, dst_ip: str,
                   port: int, protocol: str = "TCP") -> bool:
    """Whether the source pod's egress policies let it send to dst (pod or bare IP)."""
    index = _index(twin)
    if _host_network(src_pod):
        return True
    policies = _isolating(index, src_pod, "egress")
    if not policies:
        return True
    for policy in policies:
        for rule in policy.egress or ():
            if rule.peers is not None and not any(
                    _peer_matches(peer, policy.namespace, dst_pod, dst_ip, index.ns_labels)
                    for peer in rule.peers):
                continue
            if dst_pod is None:
                if rule.ports is None or (protocol != "ICMP" and any(
                        p.protocol == protocol and (p.port is None or p.port == port or (
                            isinstance(p.port, int) and p.end_port is not None and p.port <= port <= p.end_port))
                        for p in rule.ports)):
                    return True
                continue
            if _port_matches(rule.ports, dst_pod, port, protocol):
                return True
    return False


def ingress_allowed(twin: Twin, src_pod: dict[str, Any] | None, src_ip: str, dst_pod: dict[str, Any],
                    port: int, protocol: str = "TCP") -> bool:
    """Whether the destination pod's ingress policies admit traffic from src."""
    index = _index(twin)
    if _host_network(dst_pod):
        return True
    policies = _isolating(index, dst_pod, "ingress")
    if not policies:
        return True
    for policy in policies:
        for rule in policy.ingress or ():
            if rule.peers is not None and not any(
                    _peer_matches(peer, policy.namespace, src_pod, src_ip, index.ns_labels)
                    for peer in rule.peers):
                continue
            if _port_matches(rule.ports, dst_pod, port, protocol):
                return True
    return False


def allowed(twin: Twin, src_pod: dict[str, Any] | None, src_ip: str, dst_pod: dict[str, Any],
            port: int, protocol: str = "TCP") -> bool:
    """May a packet from `src_pod` (None: not a pod, e.g. a node or the outside; then `src_ip`
    identifies it) reach `dst_pod` on `port`/`protocol` ("TCP", "UDP", "SCTP" or "ICMP")?

    `port` is the destination pod's port (after the Service's DNAT to targetPort). Egress is
    checked on the source, ingress on the destination."""
    protocol = protocol.upper()
    index = _index(twin)
    if not index.by_namespace:
        return True
    src_uid = get_path(src_pod, "metadata", "uid", default="") if src_pod else ""
    dst_uid = get_path(dst_pod, "metadata", "uid", default="")
    if src_pod is not None and src_uid and src_uid == dst_uid:
        return True
    src_ip = src_ip or (str(get_path(src_pod, "status", "podIP", default="") or "") if src_pod else "")
    if src_pod is None and src_ip and src_ip == get_path(dst_pod, "status", "hostIP", default=None):
        return True  # the pod's own node (kubelet probes)
    key = (src_uid, get_path(src_pod, "metadata", "resourceVersion", default="") if src_pod else "",
           src_ip, dst_uid, get_path(dst_pod, "metadata", "resourceVersion", default=""), port, protocol)
    cached = index.decisions.get(key)
    if cached is not None:
        return cached
    dst_ip = str(get_path(dst_pod, "status", "podIP", default="") or "")
    ok = (src_pod is None or egress_allowed(twin, src_pod, dst_pod, dst_ip, port, protocol)) and \
        ingress_allowed(twin, src_pod, src_ip, dst_pod, port, protocol)
    index.decisions[key] = ok
    return ok


def egress_to_ip_allowed(twin: Twin, src_pod: dict[str, Any] | None, dst_ip: str, port: int,
                         protocol: str = "TCP") -> bool:
    """Egress from a pod to an address that is no pod (a node, the outside world)."""
    if src_pod is None:
        return True
    return egress_allowed(twin, src_pod, None, dst_ip, port, protocol.upper())


def policies_selecting(twin: Twin, pod: dict[str, Any]) -> list[str]:
    """Names of the policies that isolate a pod (either direction), for diagnostics."""
    index = _index(twin)
    names = {p.name for p in _isolating(index, pod, "ingress")} | {p.name for p in _isolating(index, pod, "egress")}
    return sorted(names)


__all__ = ["allowed", "compile_policy", "egress_allowed", "egress_to_ip_allowed", "ingress_allowed",
           "policies_selecting"]
