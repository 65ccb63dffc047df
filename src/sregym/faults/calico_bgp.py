"""Calico BGP route reflection whose node selection has drifted away from the nodes.

A cluster runs Calico with the node-to-node mesh off (`BGPConfiguration/default`) and one
route reflector: a `BGPPeer` makes every other node peer with the nodes carrying a role label,
and the reflector node has its route-reflector cluster ID. Kubernetes stopped setting the old
`node-role.kubernetes.io/master` label (it is `node-role.kubernetes.io/control-plane` now), so a
peer policy written against the old label selects no node once the label is gone: no node has a
BGP session any more and no pod route crosses nodes (`twin/node/bgp.py`).

Inject installs that topology (the Calico BGP CRDs if missing, the configuration, the peer
policy, the reflector's cluster-ID annotation) and leaves the reflector node without the legacy
label; recover removes what inject created and puts the node's label and annotation back as they
were. Kubernetes writes only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault
from sregym.twin.node.bgp import CLUSTER_ID_ANNOTATION, GROUP, calico_bgp_crds

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


class RouteReflectorDriftParams(FaultParams):
    node: str  # the route-reflector node
    label: str = "node-role.kubernetes.io/master"  # the label the peer policy selects reflectors by
    cluster_id: str = "244.0.0.1"
    peer_name: str = "peer-with-route-reflectors"
    as_number: int = 64512


@fault
class RouteReflectorLabelDrift(Fault):
    """Route reflectors selected by a node label the reflector node no longer has."""

    name = "calico_route_reflector_label_drift"
    Params = RouteReflectorDriftParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, RouteReflectorDriftParams)
        node = cluster.get("Node", None, p.node)
        if node is None:
            raise LookupError(f"cannot inject: Node {p.node} does not exist")
        meta = node.get("metadata") or {}
        saved = {"label": (meta.get("labels") or {}).get(p.label),
                 "annotation": (meta.get("annotations") or {}).get(CLUSTER_ID_ANNOTATION)}
        created: list[dict[str, Any]] = []
        objects = [*calico_bgp_crds(),
                   {"apiVersion": f"{GROUP}/v1", "kind": "BGPConfiguration", "metadata": {"name": "default"},
                    "spec": {"nodeToNodeMeshEnabled": False, "asNumber": p.as_number, "logSeverityScreen": "Info"}},
                   {"apiVersion": f"{GROUP}/v1", "kind": "BGPPeer", "metadata": {"name": p.peer_name},
                    "spec": {"nodeSelector": f"!has({p.label})", "peerSelector": f"has({p.label})"}}]
        for obj in objects:
            name = obj["metadata"]["name"]
            if cluster.get(obj["kind"], None, name) is None:
                cluster.create(obj)
                created.append({"kind": obj["kind"], "name": name})
        cluster.patch("Node", None, p.node, {"metadata": {
            "labels": {p.label: None}, "annotations": {CLUSTER_ID_ANNOTATION: p.cluster_id}}}, patch_type="merge")
        return {"created": created, "saved": saved}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, RouteReflectorDriftParams)
        for ref in reversed(state.get("created") or []):
            if cluster.get(ref["kind"], None, ref["name"]) is not None:
                cluster.delete(ref["kind"], None, ref["name"])
        saved = state.get("saved") or {}
        if cluster.get("Node", None, p.node) is not None:
            cluster.patch("Node", None, p.node, {"metadata": {
                "labels": {p.label: saved.get("label")},
                "annotations": {CLUSTER_ID_ANNOTATION: saved.get("annotation")}}}, patch_type="merge")
