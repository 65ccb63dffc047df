"""A TLS client checks validity against its own node's clock: a certificate valid for a day is
valid to a pod on an in-sync node and expired to a pod on a node whose clock moved 30 days."""

from __future__ import annotations

from sregym.cluster.twin import TwinCluster
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.dataplane.client_clock import client_now, clock_offset
from sregym.twin.dataplane.tls_validity import check_validity, make_certificate


def _pod(node: str) -> dict:
    return {"metadata": {"name": f"client-{node}", "namespace": "default"}, "spec": {"nodeName": node}}


def test_the_clock_a_pod_reads_is_its_nodes() -> None:
    cluster = TwinCluster.new(3)
    twin = cluster.twin
    workers = sorted(n["metadata"]["name"] for n in cluster.list("Node", None))[-2:]
    nodeos_of(twin).set_clock_offset(workers[0], 30 * 86400.0)
    now = twin.clock.now
    pem = make_certificate("svc.local", ("svc.local",), now - 60, now + 86400, "seed", 1)[0]
    skewed, in_sync = _pod(workers[0]), _pod(workers[1])
    assert clock_offset(twin, skewed) == 30 * 86400.0 and clock_offset(twin, in_sync) == 0.0
    assert client_now(twin, None) == now
    assert check_validity(pem, client_now(twin, in_sync)).ok
    expired = check_validity(pem, client_now(twin, skewed))
    assert expired.reason == "expired" and "is after" in expired.go_error
