"""Calico IPAM: pods get addresses from IPPools; an exhausted pool leaves new pods in
ContainerCreating with Calico's FailedCreatePodSandBox text; freeing or adding addresses recovers."""

from __future__ import annotations

import ipaddress
from typing import Any

from sregym.twin.node.ipam import calico_crds, ip_pool
from sregym.twin.twin import Twin

NS = "batch"


def deployment(name: str, replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


def setup(twin: Twin, *, strict: bool = False) -> None:
    twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    twin.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NS}})
    for crd in calico_crds():
        twin.create(crd)
    twin.create({"apiVersion": "crd.projectcalico.org/v1", "kind": "IPAMConfig", "metadata": {"name": "default"},
                 "spec": {"strictAffinity": strict, "autoAllocateBlocks": True}})


def pods(twin: Twin, app: str) -> list[dict[str, Any]]:
    return twin.list("pods", NS, label_selector=f"app={app}")


def test_without_pools_pods_keep_node_pod_cidr_addresses() -> None:
    twin = Twin(seed=1)
    twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    twin.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NS}})
    twin.create(deployment("web", 2))
    twin.advance(20)
    assert all(p["status"]["podIP"].startswith("10.244.") for p in pods(twin, "web"))


def test_pool_addresses_then_exhaustion_then_recovery() -> None:
    twin = Twin(seed=1)
    setup(twin)
    twin.create(ip_pool("small-pool", "192.168.254.0/28", block_size=30))
    twin.create(deployment("fill", 16))
    twin.advance(30)
    filled = pods(twin, "fill")
    ips = {p["status"].get("podIP") for p in filled}
    assert len(ips) == 16 and all(ipaddress.ip_address(ip) in ipaddress.ip_network("192.168.254.0/28") for ip in ips)
    twin.create(deployment("late", 1))
    twin.advance(30)
    (late,) = pods(twin, "late")
    assert not late["status"].get("podIP")
    waiting = late["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "ContainerCreating"
    messages = [e["message"] for e in twin.event_list(NS, reason="FailedCreatePodSandBox")]
    assert messages and messages[0].startswith(
        "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"")
    assert messages[0].endswith(
        'plugin type="calico" failed (add): failed to request IPv4 addresses: Assigned 0 out of 1 requested '
        "IPv4 addresses; No IPs available in pools: [192.168.254.0/28]")
    # Existing pods keep their addresses; freeing one lets the waiting pod start.
    twin.patch("deployments", NS, "fill", {"spec": {"replicas": 15}})
    twin.advance(60)
    (late,) = pods(twin, "late")
    assert late["status"]["phase"] == "Running" and late["status"]["podIP"] in ips
    assert {p["status"]["podIP"] for p in pods(twin, "fill")} <= ips


def test_strict_affinity_and_a_new_pool() -> None:
    twin = Twin(seed=1)
    setup(twin, strict=True)
    twin.create(ip_pool("one-block", "192.168.254.0/28", block_size=28))
    twin.create(deployment("spread", 6))
    twin.advance(30)
    running = [p for p in pods(twin, "spread") if p["status"].get("podIP")]
    stuck = [p for p in pods(twin, "spread") if not p["status"].get("podIP")]
    # One block, claimed by one node: pods on the other nodes cannot borrow from it.
    assert running and stuck and len({p["spec"]["nodeName"] for p in running}) == 1
    messages = {e["message"].rsplit("; ", 1)[-1] for e in twin.event_list(NS, reason="FailedCreatePodSandBox")}
    assert messages == {"No more free affine blocks and strict affinity enabled"}
    twin.create(ip_pool("wider", "192.168.0.0/22"))
    twin.advance(60)
    assert all(p["status"].get("phase") == "Running" and p["status"].get("podIP") for p in pods(twin, "spread"))
