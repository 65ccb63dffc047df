"""Calico BGP: which node has a route to which other node's pods.

Calico's calico-node (BIRD) on every node announces the node's pod address blocks over BGP. By
default every node peers with every other (`nodeToNodeMeshEnabled`, the full mesh), so every node
learns every route. Large or tuned clusters turn the mesh off in `BGPConfiguration/default` and
peer through route reflectors instead: `BGPPeer` objects (crd.projectcalico.org/v1, cluster-scoped)
say that the nodes matching `spec.nodeSelector` peer with the nodes matching `spec.peerSelector`,
and a node reflects routes between its peers only when it carries a route-reflector cluster ID
(the Kubernetes-datastore form of `spec.bgp.routeReflectorClusterID` is the Node annotation
`projectcalico.org/RouteReflectorClusterID`).

So node A has a route to node B's pods when A is B, when A and B have a BGP session, or when both
have a session with the same route reflector. Without a route, A's packets to B's pods follow the
default route and are dropped upstream: connections time out while traffic between pods on one
node still works. The data plane (`dataplane/connect.py`) asks `reachable()` for every cross-node
leg; without a `BGPConfiguration/default` that disables the mesh nothing changes.

Selectors use Calico's syntax: `all()`, `has(k)`, `!has(k)`, `k == 'v'`, `k != 'v'`, joined by
`&&` and `||` (no parentheses; an expression this model cannot read matches no node, as a typo
in a real selector would).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.machinery.store import WatchEvent
    from sregym.twin.twin import Twin

GROUP = "crd.projectcalico.org"
CLUSTER_ID_ANNOTATION = "projectcalico.org/RouteReflectorClusterID"
_HAS = re.compile(r"^(!?)\s*has\(\s*([A-Za-z0-9_./-]+)\s*\)$")
_EQ = re.compile(r"^([A-Za-z0-9_./-]+)\s*(==|!=)\s*(?:'([^']*)'|\"([^\"]*)\")$")


def selector_matches(selector: str, labels: dict[str, str]) -> bool:
    """Does a Calico selector expression select an object with these labels?"""
    text = (selector or "").strip()
    if not text:
        return False
    return any(all(_term(term.strip(), labels) for term in clause.split("&&")) for clause in text.split("||"))


def _term(term: str, labels: dict[str, str]) -> bool:
    if term == "all()":
        return True
    found = _HAS.match(term)
    if found:
        return (found.group(2) in labels) != bool(found.group(1))
    found = _EQ.match(term)
    if found:
        value = found.group(3) if found.group(3) is not None else found.group(4)
        equal = labels.get(found.group(1)) == value
        return equal if found.group(2) == "==" else not equal
    return False


class BgpRoutes:
    """The route table of one cluster, recomputed when a BGP object or a node's labels change."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self._node_meta: dict[str, tuple[Any, ...]] = {}
        self._dirty = True
        self._mesh = True
        self._routes: set[tuple[str, str]] = set()
        self.generation = 0  # bumped on every change that may alter routes (route caches compare it)
        twin.store.add_listener(self._on_change)

    def _on_change(self, event: WatchEvent) -> None:
        if self.affected_by(event):
            self.generation += 1

    def affected_by(self, event: WatchEvent) -> bool:
        """Does this store change alter routing? (Node heartbeats do not; labels do.)"""
        key = event.kind.key
        if key[0] == GROUP and key[1] in ("BGPPeer", "BGPConfiguration"):
            self._dirty = True
            return True
        if key != ("", "Node"):
            return False
        meta = event.object.get("metadata") or {}
        name = meta.get("name", "")
        signature = () if event.type == "DELETED" else (
            tuple(sorted((meta.get("labels") or {}).items())),
            (meta.get("annotations") or {}).get(CLUSTER_ID_ANNOTATION))
        if self._node_meta.get(name) == signature:
            return False
        self._node_meta[name] = signature
        self._dirty = True
        return True

    def reachable(self, src_node: str, dst_node: str) -> bool:
        """Can a packet from a pod on `src_node` reach a pod on `dst_node` and be answered?"""
        if not src_node or not dst_node or src_node == dst_node:
            return True
        self._refresh()
        if self._mesh:
            return True
        return (src_node, dst_node) in self._routes and (dst_node, src_node) in self._routes

    def learned(self, node: str) -> list[str]:
        """The other nodes whose pod routes `node` has (what `ip route` on it shows via bird)."""
        self._refresh()
        names = [n["metadata"]["name"] for n in self._nodes()]
        return [n for n in names if n != node and (self._mesh or (node, n) in self._routes)]

    def sessions(self, node: str) -> list[tuple[str, str]]:
        """`node`'s BGP sessions as (peer node, kind): what `calicoctl node status` lists."""
        self._refresh()
        nodes = self._nodes()
        if self._mesh:
            return [(n["metadata"]["name"], "node-to-node mesh") for n in nodes if n["metadata"]["name"] != node]
        return sorted((b, "node specific") for a, b in self._sessions(nodes) if a == node)

    # ------------------------------------------------------------------ internals
    def _objects(self, kind: str) -> list[dict[str, Any]]:
        from sregym.errors import ApiError

        try:
            found = self.twin.kinds.by_kind(f"{GROUP}/v1", kind)
        except ApiError:  # the CRD is not installed: no Calico BGP objects
            return []
        return list(self.twin.store.scan(found))

    def _nodes(self) -> list[dict[str, Any]]:
        return list(self.twin.store.scan("Node"))

    def _sessions(self, nodes: list[dict[str, Any]]) -> set[tuple[str, str]]:
        labels = {n["metadata"]["name"]: (n["metadata"].get("labels") or {}) for n in nodes}
        pairs: set[tuple[str, str]] = set()
        for peer in self._objects("BGPPeer"):
            spec = peer.get("spec") or {}
            if spec.get("peerIP"):  # a peer outside the cluster (a ToR switch): no node routes
                continue
            local = [n for n, lab in labels.items() if selector_matches(str(spec.get("nodeSelector") or ""), lab)]
            if spec.get("node"):
                local.append(str(spec["node"]))
            remote = [n for n, lab in labels.items() if selector_matches(str(spec.get("peerSelector") or ""), lab)]
            for a in local:
                for b in remote:
                    if a != b:
                        pairs.add((a, b))
                        pairs.add((b, a))
        return pairs

    def _refresh(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        config = next((c for c in self._objects("BGPConfiguration") if c["metadata"].get("name") == "default"), None)
        self._mesh = config is None or (config.get("spec") or {}).get("nodeToNodeMeshEnabled") is not False
        self._routes = set()
        if self._mesh:
            return
        nodes = self._nodes()
        pairs = self._sessions(nodes)
        reflectors = {n["metadata"]["name"] for n in nodes
                      if (n["metadata"].get("annotations") or {}).get(CLUSTER_ID_ANNOTATION)}
        self._routes |= pairs
        for reflector in reflectors:
            clients = [a for a, b in pairs if b == reflector]
            for a in clients:
                for b in clients:
                    if a != b:
                        self._routes.add((a, b))


def bgp_routes_of(twin: Twin) -> BgpRoutes:
    """The cluster's BGP route table (made on first use, kept on `twin.services`)."""
    routes = twin.services.bgp
    if routes is None:
        routes = twin.services.bgp = BgpRoutes(twin)
    return routes


def calico_bgp_crds() -> list[dict[str, Any]]:
    """The CustomResourceDefinitions a Calico install adds for BGP (BGPConfiguration, BGPPeer)."""
    from sregym.twin.node.ipam import calico_crd

    return [calico_crd("BGPConfiguration", "bgpconfigurations"), calico_crd("BGPPeer", "bgppeers")]
