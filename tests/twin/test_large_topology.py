"""Clusters past kind's 256-node limit of /24 pod ranges in 10.244.0.0/16 (the hyperscale runs of
`benchmarks/twin_scale.py`): each node still gets its own valid range and address, and pods get
addresses from their node's range."""

from __future__ import annotations

import ipaddress

import pytest

from sregym.twin import Twin
from sregym.twin.topology import Topology, node_cidr_mask, node_ip, pod_cidr


@pytest.mark.parametrize(("nodes", "mask"), [(4, 24), (256, 24), (257, 25), (512, 25), (513, 26), (1001, 26)])
def test_node_ranges_are_distinct_blocks_of_the_cluster_range(nodes: int, mask: int) -> None:
    assert node_cidr_mask(nodes) == mask
    cluster = ipaddress.ip_network("10.244.0.0/16")
    ranges = [ipaddress.ip_network(pod_cidr(i, mask)) for i in range(nodes)]
    assert all(r.prefixlen == mask and r.subnet_of(cluster) for r in ranges)
    assert len(set(ranges)) == nodes
    addresses = [ipaddress.ip_address(node_ip(i)) for i in range(nodes)]
    assert len(set(addresses)) == nodes and all(a in ipaddress.ip_network("172.18.0.0/16") for a in addresses)
    assert ipaddress.ip_address("172.18.0.1") not in addresses  # the Docker network's gateway


def test_pods_get_addresses_from_their_nodes_smaller_range(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ranges a cluster of more than 256 nodes gets (/25, /26), on a small cluster so the test
    stays cheap: the kubelet allocates inside its node's range and kube-controller-manager's
    manifest carries the mask it was configured with."""
    monkeypatch.setattr("sregym.twin.twin.node_cidr_mask", lambda nodes: 26)
    twin = Twin(seed=1, topology=Topology.default(workers=2))
    nodes = {n["metadata"]["name"]: n for n in twin.store.scan("Node")}
    assert sorted(n["spec"]["podCIDR"] for n in nodes.values()) == \
        ["10.244.0.0/26", "10.244.0.128/26", "10.244.0.64/26"]
    twin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "big"}})
    twin.apply({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "big"},
                "spec": {"replicas": 20, "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
    twin.advance(30)
    pods = list(twin.store.scan("Pod", "big"))
    assert len(pods) == 20
    for pod in pods:
        node = nodes[pod["spec"]["nodeName"]]
        assert pod["status"]["phase"] == "Running"
        assert ipaddress.ip_address(pod["status"]["podIP"]) in ipaddress.ip_network(node["spec"]["podCIDR"])
    manager = twin.store.get("Pod", "kube-system", "kube-controller-manager-kind-control-plane")
    assert "--node-cidr-mask-size=26" in manager["spec"]["containers"][0]["command"]
