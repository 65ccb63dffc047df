"""Calico BGP routes between nodes: the full mesh by default; with the mesh off, BGPPeer selectors
and route-reflector cluster IDs decide which node learns which node's pod routes."""

from __future__ import annotations

from sregym.twin.node.bgp import CLUSTER_ID_ANNOTATION, bgp_routes_of, calico_bgp_crds, selector_matches
from sregym.twin.twin import Twin

RR = "kind-control-plane"
WORKERS = ("kind-worker", "kind-worker2", "kind-worker3")


def test_calico_selectors() -> None:
    labels = {"node-role.kubernetes.io/control-plane": "", "zone": "a"}
    assert selector_matches("all()", {})
    assert selector_matches("has(node-role.kubernetes.io/control-plane)", labels)
    assert not selector_matches("!has(node-role.kubernetes.io/control-plane)", labels)
    assert selector_matches("zone == 'a' && has(node-role.kubernetes.io/control-plane)", labels)
    assert not selector_matches("zone != 'a'", labels)
    assert selector_matches("zone == 'b' || zone == \"a\"", labels)
    assert not selector_matches("", labels) and not selector_matches("zone in {'a'}", labels)


def _route_reflection(twin: Twin, label: str) -> None:
    for crd in calico_bgp_crds():
        twin.create(crd)
    twin.create({"apiVersion": "crd.projectcalico.org/v1", "kind": "BGPConfiguration",
                 "metadata": {"name": "default"}, "spec": {"nodeToNodeMeshEnabled": False}})
    twin.create({"apiVersion": "crd.projectcalico.org/v1", "kind": "BGPPeer", "metadata": {"name": "to-rr"},
                 "spec": {"nodeSelector": f"!has({label})", "peerSelector": f"has({label})"}})


def test_mesh_reaches_everywhere_until_reflectors_select_no_node() -> None:
    twin = Twin(seed=1)
    routes = bgp_routes_of(twin)
    assert routes.reachable(WORKERS[0], WORKERS[1])  # no Calico BGP objects: the full mesh
    _route_reflection(twin, "node-role.kubernetes.io/master")  # a label no node carries
    twin.patch("nodes", None, RR, {"metadata": {"annotations": {CLUSTER_ID_ANNOTATION: "244.0.0.1"}}},
               patch_type="merge")
    assert not routes.reachable(WORKERS[0], WORKERS[1])
    assert routes.reachable(WORKERS[0], WORKERS[0])  # one node: no BGP needed
    assert routes.sessions(WORKERS[0]) == [] and routes.learned(WORKERS[0]) == []
    generation = routes.generation
    twin.patch("nodes", None, RR, {"metadata": {"labels": {"node-role.kubernetes.io/master": ""}}},
               patch_type="merge")
    assert routes.generation > generation
    assert routes.reachable(WORKERS[0], WORKERS[2]) and routes.reachable(WORKERS[1], RR)
    assert routes.sessions(WORKERS[0]) == [(RR, "node specific")]
    assert sorted(routes.learned(WORKERS[0])) == sorted([RR, WORKERS[1], WORKERS[2]])
    # Without its cluster ID the peer is an ordinary iBGP speaker: it does not pass routes on.
    twin.patch("nodes", None, RR, {"metadata": {"annotations": {CLUSTER_ID_ANNOTATION: None}}}, patch_type="merge")
    assert not routes.reachable(WORKERS[0], WORKERS[1]) and routes.reachable(WORKERS[0], RR)
    # Turning the mesh back on bypasses the reflectors: everything reachable again.
    twin.patch("bgpconfigurations", None, "default", {"spec": {"nodeToNodeMeshEnabled": True}}, patch_type="merge")
    assert routes.reachable(WORKERS[0], WORKERS[1])
